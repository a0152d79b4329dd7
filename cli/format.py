"""Formatting outputs for the terminal: JSON lines and aligned tables."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from windtunnel.oracle.results import Drop, Emission, Output, to_jsonl_line


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


def _window(ref: dict[str, int]) -> str:
    if "start_offset" in ref:
        text = f"#[{ref['start_offset']},{ref['end_offset']})"
        if "start_ms" in ref:
            text += f" [{ref['start_ms']},{ref['end_ms']})"
        return text
    return f"[{ref['start_ms']},{ref['end_ms']})"


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
