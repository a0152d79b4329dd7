"""A run's emissions and drops as a table, JSON, and a closing summary line."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from windtunnel.cli.output.table import Table
from windtunnel.cli.output.times import TimeStyle
from windtunnel.oracle.model.results import Drop, Emission, Output, pane_of, to_jsonl_line

HEADERS = ("type", "window", "group", "reason", "seq", "wall", "row / message")
"""``seq`` is the event's seq for a drop and ``after_seq`` for an emission; ``wall`` the
wall clock when an emission was made."""


def jsonl(outputs: Iterable[Output]) -> str:
    """The contract's JSON lines, each ending in a newline."""
    return "".join(to_jsonl_line(o) + "\n" for o in outputs)


def value_text(value: Any) -> str:
    """A row value or key part: strings as they are, everything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, default=str)


def group_text(group: Any) -> str:
    """A ``group``: empty when ungrouped, the value, or several values joined by ``, ``."""
    if group is None:
        return ""
    if isinstance(group, list):
        return ", ".join(value_text(v) for v in group)
    return value_text(group)


def outputs_table(outputs: Sequence[Output], style: TimeStyle) -> Table:
    """One row per output: kind, window, group, reason, seq, wall clock, row or message."""
    rows = []
    for output in outputs:
        if isinstance(output, Emission):
            rows.append((
                "emit (partial)" if output.partial else "emit",
                style.window(output.window),
                group_text(output.group),
                output.reason,
                "-" if output.after_seq is None else str(output.after_seq),
                style.time(output.wall_ms),
                " ".join(f"{k}={json.dumps(v, default=str)}" for k, v in output.row.items())
                + _pane_text(output, style),
            ))
        else:
            rows.append((
                "drop",
                _missed(output, style),
                group_text(output.group),
                output.reason,
                str(output.seq),
                "",
                output.message,
            ))
    return Table(HEADERS, tuple(rows), wrap=(len(HEADERS) - 1,), min_wrap=32)


def _pane_text(emission: Emission, style: TimeStyle) -> str:
    """`` | pane 1 on_time, at 59s`` for an emission with a pane (beam), else empty."""
    pane = pane_of(emission)
    if pane is None:
        return ""
    flags = "".join(f", {n}" for n, on in (("first", pane.first), ("last", pane.last)) if on)
    return f" | pane {pane.index} {pane.timing}{flags}, at {style.time(pane.timestamp_ms)}"


def _missed(drop: Drop, style: TimeStyle) -> str:
    if not drop.windows:
        return "-"
    more = f" +{len(drop.windows) - 1} more" if len(drop.windows) > 1 else ""
    return style.window(drop.windows[0]) + more


def _counts(reasons: Counter[str]) -> str:
    return ", ".join(f"{reason} {n}" for reason, n in reasons.items())


def summary_counts(outputs: Sequence[Output]) -> tuple[Counter[str], Counter[str]]:
    """Emissions and drops by reason, reasons in order of first appearance."""
    emitted: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    for output in outputs:
        (emitted if isinstance(output, Emission) else dropped)[output.reason] += 1
    return emitted, dropped


def summary_line(outputs: Sequence[Output]) -> str:
    """``22 emissions (idle_timeout 12, end_of_input 10), 1 drop (late 1)``."""
    emitted, dropped = summary_counts(outputs)
    n, m = sum(emitted.values()), sum(dropped.values())
    text = f"{n} emission{'' if n == 1 else 's'}"
    if n:
        text += f" ({_counts(emitted)})"
    text += f", {m} drop{'' if m == 1 else 's'}"
    if m:
        text += f" ({_counts(dropped)})"
    return text


def outputs_json(scenario: str, outputs: Sequence[Output]) -> str:
    """``{"scenario", "outputs": [contract objects], "summary": {"emissions", "drops"}}``."""
    emitted, dropped = summary_counts(outputs)
    data = {
        "scenario": scenario,
        "outputs": [o.to_json() for o in outputs],
        "summary": {"emissions": dict(emitted), "drops": dict(dropped)},
    }
    return json.dumps(data, indent=2, default=str) + "\n"
