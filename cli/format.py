"""Formatting outputs for the terminal: JSON lines and aligned tables."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from windtunnel.oracle.model.results import Drop, Emission, Output, to_jsonl_line


def jsonl(outputs: Iterable[Output]) -> str:
    return "".join(to_jsonl_line(o) + "\n" for o in outputs)


def _cell(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str)


def window_text(output: Emission | Drop) -> str:
    if isinstance(output, Drop):
        refs = output.windows
        if not refs:
            return "-"
        more = f" +{len(refs) - 1} more" if len(refs) > 1 else ""
        return _window(refs[0].to_json()) + more
    return _window(output.window.to_json())


def time_text(ms: int) -> str:
    """Epoch milliseconds as ISO-8601 UTC when they look like a calendar date (after 1973
    and before year 10000), else the plain number (small scenario times read better as
    numbers; times beyond the calendar cannot be dates)."""
    if abs(ms) < 10**11:
        return str(ms)
    try:
        moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, ValueError, OSError):  # beyond datetime's years 1..9999
        return str(ms)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if ms % 1000:
        text += f".{ms % 1000:03d}"
    return text + "Z"


def _window(ref: dict[str, int]) -> str:
    times = ""
    if "start_ms" in ref:
        times = f"[{time_text(ref['start_ms'])},{time_text(ref['end_ms'])})"
    if "start_offset" in ref:
        offsets = f"#[{ref['start_offset']},{ref['end_offset']})"
        return f"{offsets} {times}".strip()
    return times


def table(outputs: Sequence[Output]) -> str:
    """One line per output: kind, window, group, reason, seq (after_seq for emissions),
    wall clock, and the row or the drop's message."""
    rows = [("type", "window", "group", "reason", "seq", "wall_ms", "row / message")]
    for output in outputs:
        if isinstance(output, Emission):
            row_text = " ".join(f"{k}={_cell(v)}" for k, v in output.row.items())
            rows.append(
                (
                    "emit" + (" (partial)" if output.partial else ""),
                    window_text(output),
                    _cell(output.group),
                    output.reason,
                    "-" if output.after_seq is None else str(output.after_seq),
                    str(output.wall_ms),
                    row_text,
                )
            )
        else:
            rows.append(
                (
                    "drop",
                    window_text(output),
                    "",
                    output.reason,
                    str(output.seq),
                    "",
                    output.message,
                )
            )
    return render(rows)


def render(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"
