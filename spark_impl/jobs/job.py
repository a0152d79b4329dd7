"""Windowed jobs: a window spec applied to a source and written to a sink, on any Spark.

A job reads *job input rows* (:data:`JOB_INPUT_DDL`) from a source, runs the exact
operator (:func:`windtunnel.spark_impl.general.operator.apply_window`, default profile) and
writes its output rows (:data:`windtunnel.spark_impl.schema.OUTPUT_DDL`, one per
emission or drop) to a sink.

Sources (each a streaming DataFrame of job input rows; in
:mod:`windtunnel.spark_impl.jobs.sources`, re-exported here):

- :func:`records_source`: what ``windtunnel generate`` writes (``spark-dir`` directory,
  ``jsonl`` or ``parquet`` file): one micro-batch per spark-dir file, or
  ``rows_per_batch`` records per micro-batch, in seq order; with ``end_of_input`` an
  ``end`` row rides in the last micro-batch, so open windows flush exactly once.
- :func:`kafka_source`: Spark's ``format("kafka")`` (needs the connector on the
  classpath: :data:`KAFKA_PACKAGE`), or with ``reader="python"``/``"auto"`` windtunnel's
  Python Kafka data source (no jar; :mod:`windtunnel.spark_impl.jobs.kafka_python`); seq
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
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
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
from windtunnel.spark_impl.errors import cause_line
from windtunnel.spark_impl.general.operator import (
    apply_window,
    bucket_count,
    check_rules,
    default_buckets,
)
from windtunnel.spark_impl.jobs.query_progress import OUT_METRIC, BatchProgress, collect_progress
from windtunnel.spark_impl.jobs.sources import (
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
from windtunnel.spark_impl.production.plan import PathChoice
from windtunnel.spark_impl.schema import CLOCK, EVENT
from windtunnel.spark_impl.scratch import checkpoint_dir
from windtunnel.spark_impl.streaming import follow

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
        if self.profile == "spark":  # the stock mapping (spark_impl/stock/job.py)
            from windtunnel.spark_impl.stock.mapping import check_stock

            check_stock(self.query, self.rules)
        else:
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
    """The general operator over job input rows: a DataFrame of output rows (schema.OUTPUT_DDL).

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
class JobReport:
    """What a job run did: its micro-batches (with data) and totals."""

    batches: tuple[BatchProgress, ...] = ()
    checkpoint: str | None = None
    """Where the run's state is kept (None: a temporary checkpoint, removed after the run)."""
    timed_out: bool = False
    """True when ``timeout_s`` stopped the query."""
    open_windows: int | None = None
    """Windows not emitted when the run stopped (their state is in the checkpoint), where
    the run can count them (the production path and the stock mapping of ``profile:
    spark``); None: not counted."""

    @property
    def rows_in(self) -> int:
        return sum(b.rows_in for b in self.batches)

    @property
    def rows_out(self) -> int:
        return sum(b.rows_out for b in self.batches)


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
    sample: Sequence[Mapping[str, Any]] = (),
) -> JobReport:
    """Run ``spec`` over job input rows ``source`` into ``sink`` and wait for the end.

    A streaming source runs as a streaming query with ``trigger`` (``availableNow``: until
    the input present at start is consumed; an interval: until ``timeout_s`` passes or
    the query fails); ``checkpoint`` (a directory) lets a stopped job resume without loss
    or duplicates (keep ``buckets`` the same); ``on_batch`` is called for each finished
    micro-batch. A batch source runs once (``apply_window`` on a bounded input). Without
    ``checkpoint`` a temporary one is used and removed after the run. A ``profile: spark``
    spec runs the stock mapping (:mod:`windtunnel.spark_impl.stock.job`; ``sample``:
    payloads that type its fields). Raises InvalidInput/InvalidSpec for bad options,
    EngineUnavailable when the query fails (naming its root cause).
    """
    if clock not in CLOCKS:
        raise InvalidSpec("clock", clock, "unknown wall clock", f"use one of {', '.join(CLOCKS)}")
    options = trigger_options(trigger) if source.isStreaming else {}
    if timeout_s is None and "processingTime" in options:
        raise InvalidInput(
            "timeout", None, "a processing trigger runs until stopped", "give a timeout"
        )
    job = spec_of(spec)
    stock = job.profile == "spark"
    if not source.isStreaming:
        return _run_batch(_output_rows(job, source, clock, tick_ms, buckets, sample), sink, on_batch)
    given = None if checkpoint is None else local_path(checkpoint)
    with checkpoint_dir(given, "job-ckpt") as location:
        choice = None if stock else job_path(job, source, sink, clock=clock, checkpoint=location)
        if choice is not None and choice.production:
            report = _run_production(
                job, source, sink, choice, options, location, timeout_s, on_batch, clock, tick_ms
            )
        else:
            out = _output_rows(job, source, clock, tick_ms, buckets, sample)
            report = _run_streaming(out, sink, options, location, clock, timeout_s, on_batch)
        if stock:
            from windtunnel.spark_impl.stock.job import open_windows

            report = replace(report, open_windows=open_windows(source.sparkSession, location))
    return replace(report, checkpoint=checkpoint)


def _output_rows(
    job: JobSpec,
    source: DataFrame,
    clock: str,
    tick_ms: int,
    buckets: int | None,
    sample: Sequence[Mapping[str, Any]],
) -> DataFrame:
    """The general operator's output rows, or stock Spark's for ``profile: spark``."""
    if job.profile != "spark":
        return windowed(job, source, clock=clock, tick_ms=tick_ms, buckets=buckets)
    from windtunnel.spark_impl.stock.job import stock_rows

    return stock_rows(source, job.query, time_unit_ms=job.time_unit_ms, sample=sample)


def _run_streaming(
    out: DataFrame,
    sink: Sink,
    options: dict[str, Any],
    location: str,
    clock: str,
    timeout_s: float | None,
    on_batch: Callable[[BatchProgress], None] | None,
) -> JobReport:
    """Run the output rows ``out`` as a streaming query into ``sink`` (append mode)."""
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
        idle = collect_progress(query, seen, on_batch)
        return stop_when_idle and idle and bool(seen)

    try:
        timed_out = follow(query, timeout_s, collect)
        error = query.exception()
    finally:
        query.stop()
    if error is not None:
        raise EngineUnavailable(f"the spark job failed: {_first_line(error)}")
    return JobReport(tuple(seen), location, timed_out)


def job_path(
    spec: JobSpec | Scenario | Query,
    source: DataFrame,
    sink: Sink,
    *,
    clock: str = "arrival",
    checkpoint: str | None = None,
) -> PathChoice:
    """Which path :func:`run_job` takes for this job, and why
    (:func:`windtunnel.spark_impl.production.plan.choose_path`; ``PathChoice.explain()`` gives the
    lines ``windtunnel run --explain`` prints). Raises InvalidInput when the checkpoint holds
    the production operator's state and it cannot run now."""
    from windtunnel.spark_impl.production.plan import choose_path

    job = spec_of(spec)
    return choose_path(
        job.query, job.rules, spark=source.sparkSession, streaming=source.isStreaming,
        sink_kind=sink.kind, clock=clock, checkpoint=checkpoint,
    )


def _run_production(
    job: JobSpec,
    source: DataFrame,
    sink: Sink,
    choice: PathChoice,
    options: dict[str, Any],
    checkpoint: str,
    timeout_s: float | None,
    on_batch: Callable[[BatchProgress], None] | None,
    clock: str,
    tick_ms: int,
) -> JobReport:
    from windtunnel.spark_impl.production.run import run_production
    from windtunnel.spark_impl.production.sink import ProductionSink

    def report(batch_id: int, rows_in: int, rows_out: int, duration_ms: int) -> None:
        if on_batch is not None:
            on_batch(BatchProgress(batch_id, rows_in, rows_out, duration_ms))

    output = ProductionSink(sink.kind, sink.path, sink.function)
    progress, timed_out = run_production(
        job, source, output, choice, options=options, checkpoint=checkpoint,
        timeout_s=timeout_s, on_batch=report, clock=clock, tick_ms=tick_ms,
    )
    seen = tuple(BatchProgress(*entry) for entry in progress.batches)
    return JobReport(seen, checkpoint, timed_out, open_windows=progress.open_windows)


def local_path(location: str) -> str:
    """``location`` made absolute against this process's working directory when it is a local
    path (the JVM resolves relative paths against its own, which a Python process that
    changed directory no longer shares); URIs (``file://``, ``hdfs://``, ``s3a://``) as given."""
    if "://" in location or location.startswith("file:"):
        return location
    return str(Path(location).resolve())


def _first_line(error: Any) -> str:
    """The root cause of a query's failure, in one line (:mod:`windtunnel.spark_impl.errors`)."""
    return cause_line(error)


def _attach(writer: Any, sink: Sink) -> Any:
    if sink.kind in ("json", "parquet"):
        assert sink.path is not None
        return writer.format(sink.kind).option("path", str(Path(sink.path).resolve()))
    if sink.kind == "console":
        return writer.format("console").option("truncate", "false").option("numRows", 1000)
    if sink.kind == "memory":
        return writer.format("memory").queryName(sink.name or f"windtunnel_job_{next(_names)}")
    return writer.foreachBatch(sink.function)


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
    "job_path",
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
