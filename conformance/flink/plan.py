"""What a user's Flink SQL plan says it does, read from Flink's ``EXPLAIN``
(``SqlHarness ... explain``: the query over a view of the declared table, nothing run), as
a :class:`~windtunnel.conformance.job_plan.JobPlan`.

From the ``== Optimized Physical Plan ==`` section:

- ``WatermarkAssigner(rowtime=[ts], watermark=[-(ts, 10000:INTERVAL SECOND)])``: the
  watermark on ``ts``, 10 000 ms behind (``watermark=[ts]``: no delay);
- ``WindowAggregate(groupBy=[user], window=[TUMBLE(time_col=[ts], size=[1 min])],
  select=[user, COUNT(*) AS clicks, ...])``: the window (``TUMBLE``, ``HOP`` with ``slide``,
  ``SESSION`` with ``gap``, ``CUMULATE`` with ``max_size`` and ``step``), its grouping keys
  and aggregates;
- ``Calc(..., where=[...])``: a filter; ``Join``: a join.

The columns read are the table's (``TableSourceScan(..., fields=[...])``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from windtunnel.conformance.job_plan import (
    JobPlan,
    PlanAggregate,
    PlanWatermark,
    PlanWindow,
    split_top,
)

DURATION_UNITS_MS = {"ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
"""Flink's duration spelling in plans (``1 min``, ``30 s``) in ms."""


def duration_ms(text: str) -> int | None:
    """``1 min`` -> 60000; None for anything else."""
    found = re.fullmatch(r"\s*(\d+)\s*(ms|s|min|h|d)\s*", text)
    return None if found is None else int(found.group(1)) * DURATION_UNITS_MS[found.group(2)]


def _field(node: str, name: str) -> str | None:
    """The bracketed value of ``name=[...]`` in a plan node (brackets balanced)."""
    start = node.find(f"{name}=[")
    if start == -1:
        return None
    index, depth = start + len(name) + 1, 0
    for end in range(index, len(node)):
        depth += {"[": 1, "]": -1}.get(node[end], 0)
        if depth == 0:
            return node[index + 1 : end]
    return None


def _window(text: str) -> PlanWindow | None:
    found = re.fullmatch(r"(\w+)\((.*)\)", text.strip())
    if found is None:
        return None
    kind, body = found.group(1), found.group(2)
    column = _field(body, "time_col") or ""
    if kind == "TUMBLE":
        size = duration_ms(_field(body, "size") or "")
        return PlanWindow("fixed", column, size_ms=size, slide_ms=size)
    if kind == "HOP":
        return PlanWindow("fixed", column, size_ms=duration_ms(_field(body, "size") or ""),
                          slide_ms=duration_ms(_field(body, "slide") or ""))
    if kind == "SESSION":
        gap = _field(body, "gap") or ""
        return PlanWindow("session", column, gap_ms=duration_ms(gap), gap_text=gap)
    if kind == "CUMULATE":
        return PlanWindow("cumulate", column, size_ms=duration_ms(_field(body, "max_size") or ""),
                          slide_ms=duration_ms(_field(body, "step") or ""))
    return None


def read_flink_plan(lines: Sequence[str]) -> JobPlan:
    """The :class:`JobPlan` of Flink's ``EXPLAIN`` text (one string per line)."""
    text = "\n".join(lines)
    section = text.split("== Optimized Physical Plan ==", 1)[-1].split("\n== ", 1)[0]
    nodes = [re.sub(r"^[\s:|+\-]*", "", line) for line in section.splitlines() if line.strip()]
    watermarks, windows, groups, aggregates, filters, joins = [], [], [], [], [], []
    reads: set[str] = set()
    for node in nodes:
        kind = node.split("(", 1)[0]
        if kind == "WatermarkAssigner":
            column = _field(node, "rowtime") or ""
            expression = _field(node, "watermark") or ""
            delay = re.search(r"(\d+):INTERVAL", expression)
            delay_ms = int(delay.group(1)) if delay else (0 if expression == column else None)
            watermarks.append(PlanWatermark(column, delay_ms, expression))
        elif kind in ("WindowAggregate", "LocalWindowAggregate", "GlobalWindowAggregate"):
            window = _window(_field(node, "window") or "")
            if window is not None and window not in windows:
                windows.append(window)
            groups += [g for g in split_top(_field(node, "groupBy") or "") if g not in groups]
            for item in split_top(_field(node, "select") or ""):
                output = re.fullmatch(r"(\w+)\((.*)\) AS (\w+)", item)
                if output is None or output.group(1) in ("start", "end", "proctime", "rowtime"):
                    continue
                fields = tuple(f for f in split_top(output.group(2)) if f not in ("*", ""))
                aggregates.append(PlanAggregate(output.group(3), output.group(1).lower(), fields))
        elif kind == "Calc" and _field(node, "where") is not None:
            filters.append(_field(node, "where") or "")
        elif kind.endswith("Join"):
            joins.append(node)
        elif kind == "TableSourceScan":
            reads.update(split_top(_field(node, "fields") or ""))
    return JobPlan(tuple(watermarks), tuple(windows), tuple(groups), tuple(aggregates), None,
                   tuple(filters), tuple(joins), (), frozenset(reads))
