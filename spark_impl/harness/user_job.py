"""A user's Spark window job held to a scenario: the job contract, many scenarios per query.

The contract (docs/conformance.md, "The job contract"): ``job(events) -> DataFrame``.
``events`` is a streaming DataFrame whose columns are the scenario's event fields: the
window's ``on`` field a ``TimestampType`` column, the others typed from their JSON values
(:func:`~windtunnel.spark_impl.harness.job_columns.event_schema`; nested objects are structs). The job returns what a window
aggregation returns: Spark's ``window`` (or ``session_window``) struct, or
``window_start``/``window_end`` columns; the ``group_by`` columns (a dotted path may be
named by its last part); one column per aggregate named as in the spec (and the
``aggregate_by`` columns). Timestamps read as epoch ms. windtunnel feeds exact
micro-batches (:func:`windtunnel.spark_impl.harness.stock_replay.plan_stock`: a ``batch`` is one, a lone
event one), runs the query in the spec's ``output_mode`` (append by default) to its end
(``availableNow``) and reads every row as an emission with that mode's reason (``close``,
``update``, ``complete``): ``after_seq`` is the last event fed in or before its
micro-batch, ``wall_ms`` the wall clock after that micro-batch (the final no-data
micro-batch: after the whole stream).

Many scenarios per query: Spark's watermark is global, so scenarios cannot share a query
side by side. They run one after another, scenario ``k``'s event times shifted by
``offset_ms`` (:func:`shifted_plans`): its micro-batches, then scenario ``k+1`` far later,
whose first micro-batch is also ``k``'s last no-data micro-batch (Spark's own for a solo run:
it emits what the final watermark of ``k`` closes, and ``k+1``'s rows in it do not move the
watermark it uses); one empty micro-batch ends the query. Only the outputs of a scenario's
own micro-batches whose windows lie in its own stretch of time count (in complete mode,
which has no no-data micro-batch, not that shared one). This equals a solo run when the job is
translation invariant under the shifts (windows aligned to the epoch with periods dividing
the shift unit, at most :data:`DAY_MS` long; ``withWatermark``, ``window``,
``session_window`` are). Why: the watermark a shifted scenario starts with is below its
offset, and a solo run's watermark floor (0) decides only windows ending at or before
the epoch, which a solo run never emits (they are late from the first micro-batch), and
which the shared query's outputs leave out. Fixed windows are decided window by window,
so that is all; a session can grow from a row that is late only under the floor, so a
session scenario with an event time before the epoch starts a query of its own. Complete mode
drops nothing, so there a solo run's windows ending at or before the epoch count too.

Several such queries run side by side (:mod:`windtunnel.spark_impl.harness.job_lanes`).
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.results import Emission, WindowRef
from windtunnel.oracle.model.spec import NOW, FixedWindows, Query, SessionWindows
from windtunnel.oracle.model.stream import events_of
from windtunnel.oracle.scenario import Scenario
from windtunnel.oracle.windows.output_modes import MODE_ROWS
from windtunnel.spark_impl.errors import append_mode_fix, cause_line
from windtunnel.spark_impl.harness.job_columns import (
    event_schema,
    events_frame,
    missing_column_error,
)
from windtunnel.spark_impl.harness.job_lanes import DEFAULT_LANES, Started, run_lanes, split
from windtunnel.spark_impl.harness.job_placement import (
    MAX_TIMESTAMP_MS,
    ShiftedPlan,
    shifted_batches,
    shifted_plans,
)
from windtunnel.spark_impl.harness.memory_feed import MemoryFeed, memory_feed, needs_rocksdb
from windtunnel.spark_impl.harness.stock_replay import StockPlan, plan_stock
from windtunnel.spark_impl.schema import OUTPUT_COLUMNS, to_json_text
from windtunnel.spark_impl.scratch import checkpoint_dir

Job = Callable[[DataFrame], DataFrame]
"""A user's window job: streaming events in, a streaming window aggregation out."""


# --- the job's output --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OutputShape:
    """How to read emissions out of a job's result (columns prepared by :func:`shaped`)."""

    group_by: tuple[str, ...]
    row_names: tuple[str, ...]
    shifted_row: frozenset[str]
    """Row columns holding (shifted) times: timestamps, ``window_start()``/``window_end()``."""
    packed: bool
    """The result has the output columns of windtunnel's operators (``stock.stock_window``)."""
    mode: str = "append"
    """The query's output mode: its rows' reason and ``partial`` (``output_modes.MODE_ROWS``)."""


def _find(columns: Sequence[str], path: str) -> str | None:
    if path in columns:
        return path
    last = path.split(".")[-1]
    return last if last in columns else None


def _missing(job_name: str, what: str, columns: Sequence[str], fix: str) -> InvalidSpec:
    return InvalidSpec("--job", job_name, f"the job's result has no {what} (columns: "
                       f"{', '.join(columns)})", fix)


def shaped(result: Any, query: Query, job_name: str) -> tuple[DataFrame, OutputShape]:
    """The job's result reduced to plain columns (``_wt_start``, ``_wt_end`` epoch ms, then
    group and row columns), and how to read them. Raises InvalidSpec naming the job for
    a result that is not a streaming DataFrame or lacks a contract column."""
    if not isinstance(result, DataFrame) or not result.isStreaming:
        got = type(result).__name__ if not isinstance(result, DataFrame) else "a batch DataFrame"
        raise InvalidSpec("--job", job_name, f"must return a streaming DataFrame (got {got})",
                          "return the window aggregation over the events DataFrame it is given")
    columns = list(result.columns)
    types = dict(result.dtypes)
    functions = {a.name: a.function for a in query.aggregate or ()}
    if all(c in columns for c in OUTPUT_COLUMNS):
        times = frozenset(n for n, f in functions.items() if f in ("window_start", "window_end"))
        return (
            result.select(F.col("start_ms").alias("_wt_start"), F.col("end_ms").alias("_wt_end"),
                          "group", "row"),
            OutputShape(query.group_by, (), times, True, query.output_mode),
        )

    def millis(name: str) -> Column:
        column = F.col(name)
        return F.unix_millis(column) if types.get(name, "").startswith("timestamp") else (
            column.cast("long"))

    if "window" in columns or "session_window" in columns:
        struct = "window" if "window" in columns else "session_window"
        bounds = [F.unix_millis(F.col(f"{struct}.start")), F.unix_millis(F.col(f"{struct}.end"))]
    elif "window_start" in columns and "window_end" in columns:
        bounds = [millis("window_start"), millis("window_end")]
    else:
        raise _missing(job_name, "window column", columns,
                       "return Spark's window (or session_window) struct, or window_start and "
                       "window_end columns")
    keys = []
    for path in query.group_by:
        found = _find(columns, path)
        if found is None:
            raise _missing(job_name, f"group_by column {path!r}", columns,
                           f"group by and select the column {path!r}")
        keys.append(found)
    names = [*query.aggregate_by, *(a.name for a in query.aggregate or ())]
    row = []
    for name in names:
        found = _find(columns, name)
        if found is None:
            raise _missing(job_name, f"aggregate column {name!r}", columns,
                           f"name the aggregate column {name!r} as the spec does")
        row.append(found)
    is_time = {n for n, c in zip(names, row, strict=True)
               if types.get(c, "").startswith("timestamp")}
    times = frozenset(is_time | {n for n in names if functions.get(n) in ("window_start",
                                                                       "window_end")})
    selected = [bounds[0].alias("_wt_start"), bounds[1].alias("_wt_end")]
    selected += [F.col(f"`{c}`").alias(f"_wt_g{i}") for i, c in enumerate(keys)]
    selected += [
        (F.unix_millis(F.col(f"`{c}`")) if n in is_time else F.col(f"`{c}`")).alias(f"_wt_r{i}")
        for i, (n, c) in enumerate(zip(names, row, strict=True))
    ]
    return result.select(*selected), OutputShape(query.group_by, tuple(names), times, False,
                                                 query.output_mode)


def _plain(value: Any) -> Any:
    """A collected value as the oracle's JSON would hold it (Decimals as numbers)."""
    from decimal import Decimal

    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def emission_of(record: Mapping[str, Any], shape: OutputShape, offset_ms: int,
                position: tuple[int | None, int]) -> Emission:
    """One collected row as an Emission of the unshifted scenario, at ``position``
    (``(after_seq, wall_ms)`` of its micro-batch)."""
    if shape.packed:
        group = json.loads(record["group"])
        row: dict[str, Any] = json.loads(record["row"])
    else:
        keys = [_plain(record[f"_wt_g{i}"]) for i in range(len(shape.group_by))]
        group = None if not keys else keys[0] if len(keys) == 1 else keys
        row = {n: _plain(record[f"_wt_r{i}"]) for i, n in enumerate(shape.row_names)}
    for name in shape.shifted_row:
        if isinstance(row.get(name), int):
            row[name] -= offset_ms
    after_seq, wall_ms = position
    reason, partial = MODE_ROWS[shape.mode]
    return Emission(
        window=WindowRef(record["_wt_start"] - offset_ms, record["_wt_end"] - offset_ms),
        group=group, row=row, reason=reason, after_seq=after_seq, wall_ms=wall_ms,
        partial=partial,
    )


# --- running -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JobRun:
    """A scenario's emissions from a job, each with the index of its micro-batch in the
    scenario's plan (``len(plan.feed.batches)``: the final no-data micro-batch)."""

    emissions: tuple[Emission, ...]
    micro_batches: tuple[int, ...]
    plan: StockPlan


def check_job_spec(query: Query) -> None:
    """Raise InvalidSpec for a spec no job can be held to: ``on: now()`` or no aggregate."""
    if query.window.on == NOW:
        raise InvalidSpec("window.on", NOW, "a Spark job's events need an event-time field",
                          "name the event-time field in window.on")
    if not isinstance(query.window, FixedWindows | SessionWindows):
        raise InvalidSpec("window.kind", query.window.kind, "a Spark job's windows are "
                          "window() or session_window()", "use kind fixed or session")
    if not query.aggregate:
        raise InvalidSpec("aggregate", None, "a Spark window job aggregates",
                          "add an aggregate, e.g. aggregate: {n: count()}")


def run_job_many(spark: Any, job: Job, scenarios: Sequence[Scenario],
                 job_name: str = "job", batched: bool = True,
                 lanes: int = DEFAULT_LANES) -> list[JobRun]:
    """Hold ``job`` to every scenario, many per query (``batched``) or one query each,
    ``lanes`` queries side by side (:mod:`~windtunnel.spark_impl.harness.job_lanes`); one JobRun per
    scenario, in order. Scenarios share a query when they share the spec, time unit and
    event columns. Raises InvalidSpec for a spec or stream Spark cannot take or a job
    breaking the contract (before or when its query starts)."""
    plans = []
    groups: dict[tuple[Any, ...], list[int]] = {}
    for index, scenario in enumerate(scenarios):
        check_job_spec(scenario.query)
        plan = plan_stock(scenario)
        payloads = [e.payload for e in events_of(plan.items)]
        schema = event_schema(scenario.query, payloads, scenario.fields)
        plans.append(plan)
        key = (scenario.query, scenario.time_unit_ms, schema.json())
        groups.setdefault(key, []).append(index)
    runs: dict[int, JobRun] = {
        i: JobRun((), (), plan) for i, plan in enumerate(plans) if not plan.feed.batches
    }  # no micro-batch: a solo run has no query to run
    tasks: list[list[Any]] = []
    owners: list[list[list[int]]] = []  # per lane, per query: the scenarios it holds
    for (query, _, schema_json), every in groups.items():
        members = [i for i in every if i not in runs]
        schema = T.StructType.fromJson(json.loads(schema_json))
        for lane in split([len(plans[i].feed.batches) for i in members], lanes):
            chosen = [members[i] for i in lane]
            if batched:
                placed = shifted_plans([plans[i] for i in chosen], query)
            else:
                placed = [[ShiftedPlan(plans[i], 0, 0, -MAX_TIMESTAMP_MS, MAX_TIMESTAMP_MS)]
                          for i in chosen]
            tasks.append([functools.partial(_run_query, spark, job, query, schema, shared,
                                            job_name) for shared in placed])
            at = itertools.accumulate((len(shared) for shared in placed), initial=0)
            owners.append([chosen[a : a + len(shared)] for a, shared in zip(at, placed,
                                                                            strict=False)])
    for lane_owners, lane_runs in zip(owners, run_lanes(tasks), strict=True):
        for held, got in zip(lane_owners, lane_runs, strict=True):
            runs.update(zip(held, got, strict=True))
    return [runs[i] for i in range(len(scenarios))]


def job_frames(spark: Any, job: Job, scenario: Scenario, job_name: str = "job",
               ) -> tuple[DataFrame, DataFrame]:
    """The events DataFrame ``scenario`` would be fed through and ``job``'s result over it,
    unstarted (for reading their plans). Raises InvalidSpec as a run would, for a job that
    fails or reads a column the events lack."""
    check_job_spec(scenario.query)
    payloads = [e.payload for e in events_of(plan_stock(scenario).items)]
    schema = event_schema(scenario.query, payloads, scenario.fields)
    events = events_frame(spark, [], schema, scenario.query.window.on, memory_feed(spark))
    return events, _applied(job, events, schema, job_name)


def _applied(job: Job, events: DataFrame, schema: T.StructType, job_name: str) -> Any:
    """``job(events)``; its failures as one line naming the job (InvalidSpec)."""
    try:
        return job(events)
    except InvalidSpec:
        raise
    except Exception as exc:  # the user's code: one line naming it
        missing = missing_column_error(exc, job_name, [f.name for f in schema.fields])
        if missing is not None:
            raise missing from None
        raise InvalidSpec("--job", job_name, f"raised {cause_line(exc)}",
                          "fix the job function") from None


def _run_query(spark: Any, job: Job, query: Query, schema: T.StructType,
               plans: Sequence[ShiftedPlan], job_name: str,
               started: Started | None = None) -> list[JobRun]:
    """One query's scenarios, fed from memory (the scripted source where that is not
    possible); a job Spark refuses on the fast feed's state store runs with the session's."""
    try:
        return _run_fed(spark, job, query, schema, plans, job_name, started, memory_feed(spark))
    except InvalidSpec as exc:
        if not needs_rocksdb(exc):
            raise
    return _run_fed(spark, job, query, schema, plans, job_name, started,
                    memory_feed(spark, fast=False))


def _run_fed(spark: Any, job: Job, query: Query, schema: T.StructType,
             plans: Sequence[ShiftedPlan], job_name: str, started: Started | None,
             feed: MemoryFeed | None) -> list[JobRun]:
    batches = shifted_batches(plans)
    events = events_frame(spark, batches, schema, query.window.on, feed)
    result = _applied(job, events, schema, job_name)
    out, shape = shaped(result, query, job_name)
    texts = [[str(row[5]) for row in rows] for rows in batches]
    drive = None if feed is None else functools.partial(feed.drive, batches=texts)
    collected = _collect(out, job_name, query, started, drive)
    complete = query.output_mode == "complete"  # no no-data micro-batch, nothing late
    found: list[list[tuple[int, Emission]]] = [[] for _ in plans]
    for batch_id, record in collected:
        for index, shifted in enumerate(plans):
            if not shifted.first_batch <= batch_id <= shifted.last_batch - complete:
                continue
            start, end = record["_wt_start"], record["_wt_end"]
            floor = shifted.low_ms if complete else shifted.offset_ms
            if not (shifted.low_ms <= start and floor < end <= shifted.high_ms):
                continue  # another scenario's window, or one a solo run finds late
            local = batch_id - shifted.first_batch
            position = shifted.plan.positions[local]
            found[index].append((local, emission_of(record, shape, shifted.offset_ms, position)))
    runs = []
    for shifted, pairs in zip(plans, found, strict=True):
        pairs.sort(key=lambda p: (p[0], p[1].window.end_ms or 0, p[1].window.start_ms or 0,
                                  to_json_text(p[1].group), to_json_text(dict(p[1].row))))
        runs.append(JobRun(tuple(e for _, e in pairs), tuple(b for b, _ in pairs),
                           shifted.plan))
    return runs


def _collect(out: DataFrame, job_name: str, spec: Query, started: Started | None = None,
             drive: Callable[[Any], None] | None = None) -> list[tuple[int, dict[str, Any]]]:
    """Run to the end in ``spec``'s output mode: ``availableNow`` over the scripted source,
    or ``drive(query)`` feeding a memory feed batch by batch; ``started`` is told the query
    (None when fed: it starts no Python process). Rows with their micro-batch id. Spark's
    refusal (e.g. an aggregation without a watermark in append mode) is an InvalidSpec whose
    fix matches the job's watermark; a failure inside the query names its root cause."""
    collected: list[tuple[int, dict[str, Any]]] = []

    def keep(batch: DataFrame, batch_id: int) -> None:
        collected.extend((batch_id, r.asDict(recursive=True)) for r in batch.collect())

    with checkpoint_dir(None, "job") as checkpoint:
        try:
            writer = (out.writeStream.outputMode(spec.output_mode).foreachBatch(keep)
                      .option("checkpointLocation", checkpoint))
            query = (writer.trigger(availableNow=True) if drive is None
                     else writer.trigger(processingTime="0 seconds")).start()
        except Exception as exc:
            window = spec.window
            fix = append_mode_fix(out, window.on, getattr(window, "tolerance_ms", 0))
            raise InvalidSpec("--job", job_name, f"Spark rejects the job: {cause_line(exc)}",
                              fix) from None
        try:
            if started is not None:
                started(query if drive is None else None)
            if drive is None:
                query.awaitTermination()
            else:
                drive(query)
        except Exception as exc:
            raise InvalidSpec("--job", job_name, f"the job's query failed: {cause_line(exc)}",
                              "fix the job function (windtunnel --debug shows Spark's trace)"
                              ) from None
        finally:
            query.stop()
    return collected

