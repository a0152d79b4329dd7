"""The cause of a divergence named from the job's plan: where its watermark, window, keys,
aggregates and stages differ from the spec, and the spec as the plan reads it.

The spec maps to stock Spark as :mod:`windtunnel.spark_impl.stock.mapping` writes it
(docs/spark-stock.md): ``tolerance`` is the watermark delay on the ``on`` column, a fixed
window is ``window(on, size, every)`` aligned to the epoch, a session ``session_window(on,
gap)``, ``group_by`` the grouping keys beside the window, each aggregate a column of that
name, ``deduplicate`` a ``dropDuplicatesWithinWatermark(key)`` and ``where`` a filter.
:func:`differences` says, in the spec's own duration spelling, what the job does instead
("the job's watermark on ts is 10s; the spec's tolerance is 1min"); when nothing differs, the
divergence lies in what the plan does not describe: the data path (filters, joins, UDFs).
:func:`plan_reading` is the spec changed to what the plan says, for the oracle to stand in
for the job while shrinking.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from windtunnel.conformance.job_plan import JobPlan, PlanWindow
from windtunnel.oracle.model.spec import (
    CumulateWindows,
    FixedWindows,
    Query,
    SessionWindows,
    WindowSpec,
)
from windtunnel.oracle.model.stages import Deduplicate, Where
from windtunnel.oracle.model.timeparse import format_duration
from windtunnel.oracle.scenario import Scenario

NEVER_LATE_MS = 100 * 365 * 86_400_000
"""A tolerance no stream reaches: the spec read as a job without a watermark (nothing is late)."""

SPARK_FUNCTIONS = {"count": "count", "sum": "sum", "min": "min", "max": "max", "avg": "avg"}
"""The spec's aggregate functions as Spark's analyzed plan names them."""


def _last(path: str) -> str:
    return path.split(".")[-1]


def _window_lines(plan: JobPlan, query: Query) -> list[str]:
    window = query.window
    found = [w for w in plan.windows if w.column == _last(window.on)] or list(plan.windows)
    if not found:
        return [f"the job has no window() or session_window() on {window.on}"]
    job = found[0]
    if job.column != _last(window.on):
        return [f"the job's window is on {job.column}; the spec's is on {window.on}"]
    if isinstance(window, SessionWindows):
        if job.kind != "session":
            return [f"the job's window is {_described(job)}; the spec's is a session with gap "
                    f"{format_duration(window.gap_ms)}"]
        if job.gap_ms is None:
            return [f"the job's session gap is {job.gap_text}; the spec's is "
                    f"{format_duration(window.gap_ms)}"]
        if job.gap_ms != window.gap_ms:
            return [f"the job's session gap is {format_duration(job.gap_ms)}; the spec's gap is "
                    f"{format_duration(window.gap_ms)}"]
        return []
    if isinstance(window, CumulateWindows):
        return _cumulate_lines(job, window)
    if not isinstance(window, FixedWindows):
        return []
    if job.kind != "fixed":
        return [f"the job's window is {_described(job)}; the spec's is a fixed window of "
                f"{format_duration(window.size_ms)}"]
    lines = []
    if job.size_ms != window.size_ms:
        lines.append(f"the job's window size is {_duration(job.size_ms)}; the spec's size is "
                     f"{format_duration(window.size_ms)}")
    both_tumble = window.every_ms is None and job.slide_ms == job.size_ms
    if job.slide_ms != window.hop_ms and not both_tumble:
        spec = (f"every is {format_duration(window.hop_ms)}" if window.every_ms is not None
                else f"windows tumble (every {format_duration(window.hop_ms)})")
        lines.append(f"the job's window slides every {_duration(job.slide_ms)}; the spec's "
                     f"{spec}")
    if job.offset_ms:
        lines.append(f"the job's windows start {format_duration(job.offset_ms)} past the "
                     "epoch-aligned grid; the spec's start on it")
    return lines


def _cumulate_lines(job: PlanWindow, window: CumulateWindows) -> list[str]:
    if job.kind != "cumulate":
        return [f"the job's window is {_described(job)}; the spec's is a cumulating window of "
                f"{format_duration(window.size_ms)} by {format_duration(window.step_ms)}"]
    lines = []
    if job.size_ms != window.size_ms:
        lines.append(f"the job's window size is {_duration(job.size_ms)}; the spec's size is "
                     f"{format_duration(window.size_ms)}")
    if job.slide_ms != window.step_ms:
        lines.append(f"the job's window steps every {_duration(job.slide_ms)}; the spec's step "
                     f"is {format_duration(window.step_ms)}")
    return lines


def _described(job: PlanWindow) -> str:
    """The job's window in words: ``a fixed window of 10min every 1min``, ``a session with
    gap 20s``, ``a cumulating window of 10min by 1min``."""
    if job.kind == "session":
        return f"a session with gap {_duration(job.gap_ms) if job.gap_ms else job.gap_text}"
    if job.kind == "cumulate":
        return f"a cumulating window of {_duration(job.size_ms)} by {_duration(job.slide_ms)}"
    every = "" if job.slide_ms == job.size_ms else f" every {_duration(job.slide_ms)}"
    return f"a fixed window of {_duration(job.size_ms)}{every}"


def _duration(ms: int | None) -> str:
    return "unknown" if ms is None else format_duration(ms)


def _watermark_lines(plan: JobPlan, query: Query) -> list[str]:
    window = query.window
    tolerance = getattr(window, "tolerance_ms", 0)
    if not plan.watermarks:
        after = (" (so in update mode it never drops a late row nor forgets a window)"
                 if query.output_mode == "update" else "")
        return [f"the job has no watermark{after}; the spec's tolerance is "
                f"{format_duration(tolerance)}"]
    mark = plan.watermarks[0]
    lines = []
    if mark.column != _last(window.on):
        lines.append(f"the job's watermark is on {mark.column}; the spec's event time is "
                     f"{window.on}")
    if mark.delay_ms is None:
        lines.append(f"the job's watermark on {mark.column} is {mark.delay_text}; the spec's "
                     f"tolerance is {format_duration(tolerance)}")
    elif mark.delay_ms != tolerance:
        lines.append(f"the job's watermark on {mark.column} is {format_duration(mark.delay_ms)}; "
                     f"the spec's tolerance is {format_duration(tolerance)}")
    return lines


def _key_lines(plan: JobPlan, query: Query) -> list[str]:
    spec = [_last(p) for p in (*query.group_by, *query.aggregate_by)]
    job = list(plan.group_by)
    if sorted(spec) == sorted(job):
        return []
    return [f"the job groups by {', '.join(job) or 'nothing'} (beside the window); the spec "
            f"groups by {', '.join(spec) or 'nothing'}"]


def _aggregate_lines(plan: JobPlan, query: Query) -> list[str]:
    lines = []
    by_name = {a.name: a for a in plan.aggregates}
    for aggregation in query.aggregate or ():
        function = SPARK_FUNCTIONS.get(aggregation.function)
        if function is None:
            continue  # window_start(), window_end(): read from the window column
        spec = f"{aggregation.function}({aggregation.field or ''})"
        job = by_name.get(aggregation.name)
        if job is None:
            lines.append(f"the job has no aggregate {aggregation.name}; the spec's is {spec}")
            continue
        fields = [f for f in job.fields if f != "1"]
        wanted = [] if aggregation.field is None else [_last(aggregation.field)]
        if job.function != function or fields != wanted:
            lines.append(f"the job's {aggregation.name} is {job.function}({', '.join(fields)}); "
                         f"the spec's is {spec}")
    return lines


def _stage_lines(plan: JobPlan, query: Query) -> list[str]:
    lines = []
    deduplicate = next((s for s in query.stages if isinstance(s, Deduplicate)), None)
    if deduplicate is None and plan.deduplicate is not None:
        lines.append(f"the job deduplicates on {', '.join(plan.deduplicate)}; the spec has no "
                     "deduplicate stage")
    elif deduplicate is not None and plan.deduplicate is None:
        within = "" if deduplicate.within_ms is None else (
            f" within {format_duration(deduplicate.within_ms)}")
        lines.append(f"the job does not deduplicate; the spec deduplicates on "
                     f"{', '.join(deduplicate.key)}{within}")
    elif deduplicate is not None and plan.deduplicate is not None and (
        sorted(_last(k) for k in deduplicate.key) != sorted(plan.deduplicate)
    ):
        lines.append(f"the job deduplicates on {', '.join(plan.deduplicate)}; the spec on "
                     f"{', '.join(deduplicate.key)}")
    where = [s for s in query.stages if isinstance(s, Where)]
    if plan.filters and not where and not plan.joins:
        lines.append(f"the job filters rows ({'; '.join(plan.filters)}); the spec has no where")
    elif where and not plan.filters and not plan.joins:
        lines.append(f"the job has no filter; the spec's where is {where[0].condition.text}")
    return lines


def differences(plan: JobPlan, scenario: Scenario) -> list[str]:
    """What the job's ``plan`` does differently from ``scenario``'s spec, one line each (the
    watermark, the window, keys, aggregates, stages); empty when the plan matches."""
    query = scenario.query
    return [*_watermark_lines(plan, query), *_window_lines(plan, query),
            *_key_lines(plan, query), *_aggregate_lines(plan, query),
            *_stage_lines(plan, query)]


def cause_lines(plan: JobPlan, scenario: Scenario) -> list[str]:
    """The report's cause: :func:`differences`, or, when the plan matches the spec, that the
    difference is in the data path, naming the plan's filters, joins and UDFs."""
    found = differences(plan, scenario)
    if found:
        return found
    path = [*(f"filter {f}" for f in plan.filters), *(f"join {j}" for j in plan.joins),
            *(f"UDF {u}" for u in plan.udfs)]
    named = f": {'; '.join(path)}" if path else " (filters, joins, UDFs)"
    return ["the job's plan matches the spec (watermark, window, keys, aggregates, stages): "
            f"the difference is in the data path{named}"]


Change = Callable[[Scenario], Scenario]


def _window_as(window: PlanWindow, spec: Query) -> WindowSpec | None:
    """The spec's window with the plan's window parameters (None: nothing to change)."""
    current = spec.window
    gap = window.gap_ms
    if isinstance(current, SessionWindows) and window.kind == "session" and gap and (
        gap != current.gap_ms
    ):
        return replace(current, gap_ms=gap)
    if isinstance(current, FixedWindows) and window.kind == "fixed" and not window.offset_ms:
        size, slide = window.size_ms, window.slide_ms
        if size and slide and (size, slide) != (current.size_ms, current.hop_ms):
            return replace(current, size_ms=size, every_ms=None if slide == size else slide)
    return None


def plan_reading(plan: JobPlan, spec: Scenario) -> tuple[str, Change] | None:
    """The spec read as the job's plan has it (its watermark delay as the tolerance, its
    window, its deduplication), with a label; None when the plan changes nothing the oracle
    can take over."""
    query = spec.query
    labels: list[str] = []
    window: WindowSpec = query.window
    tolerance = getattr(window, "tolerance_ms", None)
    if plan.watermarks and plan.watermarks[0].delay_ms is not None:
        delay = plan.watermarks[0].delay_ms
        if tolerance is not None and delay != tolerance:
            window = replace(window, tolerance_ms=delay)  # type: ignore[type-var]
            labels.append(f"tolerance {format_duration(delay)}")
    elif not plan.watermarks and query.output_mode != "append" and tolerance is not None:
        window = replace(window, tolerance_ms=NEVER_LATE_MS)  # type: ignore[type-var]
        labels.append("no watermark")
    changed = next((w for w in (_window_as(p, replace(query, window=window))
                                for p in plan.windows) if w is not None), None)
    if changed is not None:
        window = changed
        labels.append(f"window {_window_text(changed)}")
    stages = query.stages
    if plan.deduplicate is None and any(isinstance(s, Deduplicate) for s in stages):
        stages = tuple(s for s in stages if not isinstance(s, Deduplicate))
        labels.append("no deduplicate stage")
    elif plan.deduplicate and not any(isinstance(s, Deduplicate) for s in stages):
        within = getattr(window, "tolerance_ms", None)  # Spark's reach: the watermark delay
        stages = (*stages, Deduplicate(tuple(plan.deduplicate), within))
        labels.append(f"deduplicate on {', '.join(plan.deduplicate)}")
    if not labels:
        return None
    new_query = replace(query, window=window, stages=stages)

    def change(scenario: Scenario) -> Scenario:
        return replace(scenario, query=new_query)

    return f"the job's plan: {', '.join(labels)}", change


def _window_text(window: WindowSpec) -> str:
    if isinstance(window, SessionWindows):
        return f"gap {format_duration(window.gap_ms)}"
    if isinstance(window, FixedWindows):
        every = "" if window.every_ms is None else f" every {format_duration(window.every_ms)}"
        return f"size {format_duration(window.size_ms)}{every}"
    return str(window)
