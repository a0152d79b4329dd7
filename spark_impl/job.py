"""Windowed jobs: a window spec applied to a source and written to a sink, on any Spark.

A job reads *job input rows* (:data:`JOB_INPUT_DDL`) from a source, runs the exact
operator (:func:`windtunnel.spark_impl.operator.apply_window`, default profile) and
writes its output rows (:data:`windtunnel.spark_impl.schema.OUTPUT_DDL`, one per
emission or drop) to a sink.

Sources (each a streaming DataFrame of job input rows; in
:mod:`windtunnel.spark_impl.sources`, re-exported here):

- :func:`records_source`: what ``windtunnel generate`` writes (``spark-dir`` directory,
  ``jsonl`` or ``parquet`` file): one micro-batch per spark-dir file, or
  ``rows_per_batch`` records per micro-batch, in seq order; with ``end_of_input`` an
  ``end`` row rides in the last micro-batch, so open windows flush exactly once.
- :func:`kafka_source`: Spark's ``format("kafka")`` (needs the connector on the
  classpath: :data:`KAFKA_PACKAGE`), or with ``reader="python"``/``"auto"`` windtunnel's
  Python Kafka data source (no jar; :mod:`windtunnel.spark_impl.kafka_python`); seq
  from the ``wt-seq`` header, arrival from the record timestamp.
- :func:`dataframe_source`: any user DataFrame (streaming or batch).

Sinks (:class:`Sink`): JSON lines or Parquet directory, console, memory table, or a
``foreachBatch`` callable.

Wall clock: ``clock="arrival"`` (virtual) moves the wall clock with each event's
arrival column; every event also becomes a ``clock`` row for every bucket, so each
bucket sees the stream-wide wall clock move where the oracle does (exact per event).
``clock="system"``: processing-time timers every ``tick_ms`` move it to the system clock.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from windtunnel.oracle.engine import DEFAULT_RULES
from windtunnel.oracle.loading import read_scenario_data
from windtunnel.oracle.model.errors import EngineUnavailable, InvalidInput, InvalidSpec
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.model.stages import refuse_stages
from windtunnel.oracle.scenario import Scenario, parse_scenario
from windtunnel.spark_impl.batch_runs import follow
from windtunnel.spark_impl.operator import (
    apply_window,
    bucket_count,
    check_rules,
    default_buckets,
)
from windtunnel.spark_impl.schema import CLOCK, EVENT
from windtunnel.spark_impl.sources import (
    JOB_INPUT_COLUMNS,
    JOB_INPUT_DDL,
    KAFKA_PACKAGE,
    KAFKA_READERS,
    dataframe_source,
    kafka_job_rows,
    kafka_records,
    kafka_source,
    records_format,
    records_source,
)

CLOCKS = ("arrival", "system")
SINK_KINDS = ("json", "parquet", "console", "memory", "foreach_batch")

_names = itertools.count()


@dataclass(frozen=True, slots=True)
class JobSpec:
    """What a job computes: the query and the default-profile rules it runs under."""

    query: Query
    rules: Rules = DEFAULT_RULES
    time_unit_ms: int = 1
    start_wall_ms: int = 0
    profile: str = "tenzir"
    name: str = "job"

    def __post_init__(self) -> None:
        check_rules(self.rules, self.profile)
        refuse_stages(self.query.stages, "windtunnel's Spark jobs (windtunnel run)")


def spec_of(spec: JobSpec | Scenario | Query) -> JobSpec:
    """A JobSpec from a Query (default rules), a Scenario (its window block) or a JobSpec."""
    if isinstance(spec, JobSpec):
        return spec
    if isinstance(spec, Query):
        return JobSpec(spec)
    return JobSpec(
        spec.query,
        spec.rules,
        spec.time_unit_ms,
        spec.start_wall_ms,
        spec.profile.name,
        spec.name,
    )


def load_spec(path: str | Path) -> JobSpec:
    """The spec of a scenario or spec file (YAML/JSON with ``window`` or ``query``, ``group_by``,
    ``aggregate``, ...); its ``input`` and ``expect`` are ignored. Raises InvalidScenario."""
    path = Path(path)
    data = read_scenario_data(path)
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k not in ("input", "expect")} | {"input": []}
    return spec_of(parse_scenario(data, default_name=path.stem))


# ---------------------------------------------------------------- the window


def windowed(
    spec: JobSpec | Scenario | Query,
    rows: DataFrame,
    *,
    clock: str = "arrival",
    tick_ms: int = 1000,
    buckets: int | None = None,
) -> DataFrame:
    """The exact operator over job input rows: a DataFrame of output rows (schema.OUTPUT_DDL).

    ``clock="arrival"``: the wall clock follows ``arrival_ms``; with more than one bucket
    each event is also sent as a ``clock`` row (after the previous seq) to every bucket,
    so idle timeouts and ``now()`` windows close at the oracle's stream points (this
    costs one narrow row per bucket and event). ``clock="system"``: ``arrival_ms`` is
    ignored and processing-time timers move the wall clock every ``tick_ms`` (streaming
    only). Raises InvalidSpec for an unknown clock or a bad tick.
    """
    job = spec_of(spec)
    if clock not in CLOCKS:
        raise InvalidSpec("clock", clock, "unknown wall clock", f"use one of {', '.join(CLOCKS)}")
    if isinstance(tick_ms, bool) or not isinstance(tick_ms, int) or tick_ms < 1:
        raise InvalidSpec("tick_ms", tick_ms, "must be an integer >= 1", "give e.g. 1000")
    if clock == "system" and not rows.isStreaming:
        raise InvalidSpec(
            "clock", clock, "the system clock needs a streaming source", "use clock arrival"
        )
    if buckets is None:
        buckets = default_buckets(rows.sparkSession)
    used = bucket_count(job.query, job.rules, buckets)
    if clock == "arrival" and used > 1:
        rows = _with_clock_rows(rows)
    return apply_window(
        rows,
        job.query,
        rules=job.rules,
        time_unit_ms=job.time_unit_ms,
        start_wall_ms=job.start_wall_ms,
        buckets=used,
        seq="seq",
        arrival_ms="arrival_ms" if clock == "arrival" else None,
        kind="kind",
        after_seq="after_seq",
        payload="payload",
        system_tick_ms=tick_ms if clock == "system" else None,
    )


def _with_clock_rows(rows: DataFrame) -> DataFrame:
    """Each event row plus a ``clock`` row at its arrival, right before it in stream order."""
    fields = [F.col(c).alias(c) for c in JOB_INPUT_COLUMNS]
    clock_row = F.struct(
        F.lit(CLOCK).alias("kind"),
        F.lit(None).cast("long").alias("seq"),
        F.col("arrival_ms").alias("arrival_ms"),
        F.when(F.col("seq") > 0, F.col("seq") - 1).cast("long").alias("after_seq"),
        F.lit(None).cast("string").alias("payload"),
    )
    is_event = (F.col("kind") == F.lit(EVENT)) & F.col("arrival_ms").isNotNull()
    both = F.when(is_event, F.array(clock_row, F.struct(*fields))).otherwise(
        F.array(F.struct(*fields))
    )
    return rows.select(F.explode(both).alias("r")).select(*[f"r.{c}" for c in JOB_INPUT_COLUMNS])


# ---------------------------------------------------------------- sinks and running


@dataclass(frozen=True, slots=True)
class Sink:
    """Where output rows go: ``json``/``parquet`` (a directory at ``path``; Spark's file
    sink, exactly once with the checkpoint), ``console`` (printed per micro-batch),
    ``memory`` (a table named ``name``), ``foreach_batch`` (``function(df, batch_id)``)."""

    kind: str
    path: str | None = None
    name: str | None = None
    function: Callable[[DataFrame, int], None] | None = None

    def __post_init__(self) -> None:
        if self.kind not in SINK_KINDS:
            raise InvalidInput(
                "sink", self.kind, "unknown sink", f"use one of {', '.join(SINK_KINDS)}"
            )
        if self.kind in ("json", "parquet") and not self.path:
            raise InvalidInput(
                "sink.path", self.path, f"a {self.kind} sink needs a directory", "give --out DIR"
            )
        if self.kind == "foreach_batch" and not callable(self.function):
            raise InvalidInput(
                "sink.function", self.function, "must be callable", "pass function(df, batch_id)"
            )


@dataclass(frozen=True, slots=True)
class BatchProgress:
    """One finished micro-batch: its id, rows read from the source, output rows written."""

    batch_id: int
    rows_in: int
    rows_out: int
    duration_ms: int


@dataclass(frozen=True, slots=True)
class JobReport:
    """What a job run did: its micro-batches (with data) and totals."""

    batches: tuple[BatchProgress, ...] = ()
    checkpoint: str | None = None
    timed_out: bool = False
    """True when ``timeout_s`` stopped the query."""

    @property
    def rows_in(self) -> int:
        return sum(b.rows_in for b in self.batches)

    @property
    def rows_out(self) -> int:
        return sum(b.rows_out for b in self.batches)


OUT_METRIC = "windtunnel_rows_out"
TRIGGER_HELP = "availableNow, or a processing interval such as '5 seconds'"


def trigger_options(trigger: str) -> dict[str, Any]:
    """``writeStream.trigger`` keyword arguments; raises InvalidInput for an unknown trigger."""
    text = trigger.strip()
    if text.lower() in ("availablenow", "available-now", "available_now"):
        return {"availableNow": True}
    from windtunnel.oracle.model.timeparse import parse_duration_ms

    try:
        interval_ms = parse_duration_ms(text.removeprefix("processing").strip(" =:"), "trigger")
    except InvalidInput as exc:
        raise InvalidInput("trigger", trigger, "unknown trigger", f"give {TRIGGER_HELP}") from exc
    if interval_ms < 1:
        raise InvalidInput("trigger", trigger, "interval must be positive", f"give {TRIGGER_HELP}")
    return {"processingTime": f"{interval_ms} milliseconds"}


def run_job(
    spec: JobSpec | Scenario | Query,
    source: DataFrame,
    sink: Sink,
    *,
    clock: str = "arrival",
    tick_ms: int = 1000,
    trigger: str = "availableNow",
    checkpoint: str | None = None,
    buckets: int | None = None,
    timeout_s: float | None = None,
    on_batch: Callable[[BatchProgress], None] | None = None,
) -> JobReport:
    """Run ``spec`` over job input rows ``source`` into ``sink`` and wait for the end.

    A streaming source runs as a streaming query with ``trigger`` (``availableNow``: until
    the input present at start is consumed; an interval: until ``timeout_s`` passes or
    the query fails); ``checkpoint`` (a directory) lets a stopped job resume without loss
    or duplicates (keep ``buckets`` the same); ``on_batch`` is called for each finished
    micro-batch. A batch source runs once (``apply_window`` on a bounded input). Raises
    InvalidInput/InvalidSpec for bad options, EngineUnavailable when the query fails.
    """
    options = trigger_options(trigger) if source.isStreaming else {}
    if timeout_s is None and "processingTime" in options:
        raise InvalidInput(
            "timeout", None, "a processing trigger runs until stopped", "give a timeout"
        )
    location = (checkpoint or _temp_checkpoint()) if source.isStreaming else None
    if location is not None and fast_path_applies(spec_of(spec), source, sink, clock, location):
        return _run_fast(spec_of(spec), source, sink, options, location, timeout_s, on_batch)
    out = windowed(spec, source, clock=clock, tick_ms=tick_ms, buckets=buckets)
    if not source.isStreaming:
        return _run_batch(out, sink, on_batch)
    assert location is not None
    out = out.observe(OUT_METRIC, F.count(F.lit(1)).alias("rows"))
    writer = out.writeStream.outputMode("append").option("checkpointLocation", location)
    writer = writer.trigger(**options)
    writer = _attach(writer, sink)
    query = writer.start()
    seen: list[BatchProgress] = []
    # processing-time timers keep a system-clock query running after its input: under
    # availableNow it stops at the first micro-batch without input or output after the input
    stop_when_idle = clock == "system" and "availableNow" in options

    def collect() -> bool:
        idle = _collect_progress(query, seen, on_batch)
        return stop_when_idle and idle and bool(seen)

    try:
        timed_out = follow(query, timeout_s, collect)
        error = query.exception()
    finally:
        query.stop()
    if error is not None:
        raise EngineUnavailable(f"the spark job failed: {_first_line(error)}")
    return JobReport(tuple(seen), location, timed_out)


FAST_SINKS = ("json", "parquet", "console", "foreach_batch")


def fast_path_applies(job: JobSpec, source: DataFrame, sink: Sink, clock: str, checkpoint: str) -> bool:
    """True when a streaming job runs on the fast path (spark_impl/batch_exact.py): an
    eligible query, the arrival clock, a json/parquet/console/foreach_batch sink, and a
    checkpoint that the general operator has not started (its state stays with it)."""
    from windtunnel.spark_impl import batch_exact

    return (
        source.isStreaming
        and sink.kind in FAST_SINKS
        and batch_exact.eligible(job.query, job.rules, clock=clock)
        and batch_exact.checkpoint_allows(checkpoint)
    )


def _run_fast(
    job: JobSpec,
    source: DataFrame,
    sink: Sink,
    options: dict[str, Any],
    checkpoint: str,
    timeout_s: float | None,
    on_batch: Callable[[BatchProgress], None] | None,
) -> JobReport:
    from windtunnel.spark_impl import batch_exact

    output = batch_exact.output_for(sink.kind, sink.path, sink.function)
    columns = batch_exact.Columns("seq", "arrival_ms", "kind", "after_seq", "payload")
    state_dir = batch_exact.state_dir_of(checkpoint)
    batches = batch_exact.ExactBatches(
        job.query, output, state_dir, rules=job.rules, time_unit_ms=job.time_unit_ms,
        start_wall_ms=job.start_wall_ms, columns=columns,
    )
    query = batch_exact.start(source, batches, checkpoint, options)

    def report(run: batch_exact.BatchRun) -> None:
        if on_batch is not None:
            on_batch(BatchProgress(run.batch_id, run.rows_in, run.rows_out, run.duration_ms))

    runs, timed_out, error = batch_exact.wait(query, state_dir, timeout_s, report)
    try:
        batches.flush()  # the output files still being written in the background
    except Exception as failure:  # reported like the query's own error
        error = error or failure
    if error is not None:
        raise EngineUnavailable(f"the spark job failed: {_first_line(error)}")
    seen = tuple(BatchProgress(r.batch_id, r.rows_in, r.rows_out, r.duration_ms) for r in runs)
    return JobReport(seen, checkpoint, timed_out)


def _first_line(error: Any) -> str:
    text = str(getattr(error, "desc", None) or error)
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__


def _temp_checkpoint() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="windtunnel-job-ckpt-")


def _attach(writer: Any, sink: Sink) -> Any:
    if sink.kind in ("json", "parquet"):
        assert sink.path is not None
        return writer.format(sink.kind).option("path", str(Path(sink.path).resolve()))
    if sink.kind == "console":
        return writer.format("console").option("truncate", "false").option("numRows", 1000)
    if sink.kind == "memory":
        return writer.format("memory").queryName(sink.name or f"windtunnel_job_{next(_names)}")
    return writer.foreachBatch(sink.function)


def _collect_progress(
    query: Any, seen: list[BatchProgress], on_batch: Callable[[BatchProgress], None] | None
) -> bool:
    """Report new micro-batches with data; True when a micro-batch after the last reported
    one had neither input nor output."""
    done = {b.batch_id for b in seen}
    idle = False
    for progress in query.recentProgress:
        data = progress if isinstance(progress, dict) else json.loads(progress.json)
        batch_id = int(data.get("batchId", -1))
        if batch_id in done or batch_id < 0:
            continue
        rows_in = _rows_in(progress, data)
        rows_out = _rows_out(data)
        if rows_in == 0 and rows_out == 0:  # no-data batches are not reported
            idle = idle or (bool(seen) and batch_id > max(b.batch_id for b in seen))
            continue
        done.add(batch_id)
        entry = BatchProgress(
            batch_id,
            rows_in,
            rows_out,
            int((data.get("durationMs") or {}).get("triggerExecution", 0)),
        )
        seen.append(entry)
        if on_batch is not None:
            on_batch(entry)
    return idle


def _rows_in(progress: Any, data: dict[str, Any]) -> int:
    """Rows read in a micro-batch (Spark Connect leaves the total empty: sum the sources)."""
    if data.get("numInputRows") is not None:
        return int(data["numInputRows"])
    return sum(int(source.get("numInputRows") or 0) for source in data.get("sources") or [])


def _rows_out(data: dict[str, Any]) -> int:
    """Output rows of a micro-batch, from the ``observe`` metric run_job attaches."""
    metric = (data.get("observedMetrics") or {}).get(OUT_METRIC)
    if metric is None:
        return 0
    return _count_in(metric)


def _count_in(metric: Any) -> int:
    """The count inside an observed-metric value: a Row, a dict (``rows``), or Spark
    Connect's JSON form (``{"values": [n], "schema": ...}``)."""
    if hasattr(metric, "asDict"):
        metric = metric.asDict()
    if isinstance(metric, dict):
        for key in ("rows", "values"):
            if key in metric:
                return _count_in(metric[key])
        return 0
    if isinstance(metric, list | tuple):
        return _count_in(metric[0]) if metric else 0
    return int(metric or 0)


def _run_batch(
    out: DataFrame, sink: Sink, on_batch: Callable[[BatchProgress], None] | None
) -> JobReport:
    started = time.monotonic()
    out = out.persist()
    try:
        rows_out = out.count()
        if sink.kind in ("json", "parquet"):
            assert sink.path is not None
            out.write.mode("append").format(sink.kind).save(str(Path(sink.path).resolve()))
        elif sink.kind == "console":
            out.show(n=max(rows_out, 1), truncate=False)
        elif sink.kind == "memory":
            out.createOrReplaceTempView(sink.name or f"windtunnel_job_{next(_names)}")
        else:
            assert sink.function is not None
            sink.function(out, 0)
    finally:
        if sink.kind != "memory":
            out.unpersist()
    entry = BatchProgress(0, -1, rows_out, int((time.monotonic() - started) * 1000))
    if on_batch is not None:
        on_batch(entry)
    return JobReport((entry,))


__all__ = [
    "JOB_INPUT_COLUMNS",
    "JOB_INPUT_DDL",
    "KAFKA_PACKAGE",
    "KAFKA_READERS",
    "BatchProgress",
    "JobReport",
    "JobSpec",
    "Sink",
    "dataframe_source",
    "kafka_job_rows",
    "kafka_records",
    "kafka_source",
    "load_spec",
    "records_format",
    "records_source",
    "run_job",
    "spec_of",
    "trigger_options",
    "windowed",
]
