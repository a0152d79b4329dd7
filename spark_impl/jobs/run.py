"""Running a windowed job: a spec applied to a source and written to a sink, on any Spark.

A job reads *job input rows* (:data:`~windtunnel.spark_impl.jobs.sources.JOB_INPUT_DDL`)
from a source (:mod:`windtunnel.spark_impl.jobs.sources`: simulator outputs, Kafka, any
DataFrame), runs the path :func:`~windtunnel.spark_impl.jobs.path.choose_path` gives it (the
production operator, the general operator or stock Spark) and writes its output rows
(:data:`windtunnel.spark_impl.schema.OUTPUT_DDL`, one per emission or drop) to a
:class:`~windtunnel.spark_impl.jobs.sinks.Sink`; the report says which path ran.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from windtunnel.oracle.model.errors import EngineUnavailable, InvalidInput
from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.scenario import Scenario
from windtunnel.spark_impl.errors import cause_line
from windtunnel.spark_impl.jobs.path import PRODUCTION, STOCK, PathChoice, choose_path
from windtunnel.spark_impl.jobs.query_progress import OUT_METRIC, BatchProgress, collect_progress
from windtunnel.spark_impl.jobs.report import JobReport
from windtunnel.spark_impl.jobs.sinks import Sink, attach, write_once
from windtunnel.spark_impl.jobs.spec import JobSpec, spec_of
from windtunnel.spark_impl.jobs.triggers import trigger_options
from windtunnel.spark_impl.jobs.windowed import windowed
from windtunnel.spark_impl.scratch import checkpoint_dir
from windtunnel.spark_impl.streaming import follow


def job_path(
    spec: JobSpec | Scenario | Query,
    source: DataFrame,
    sink: Sink,
    *,
    clock: str = "arrival",
    checkpoint: str | None = None,
) -> PathChoice:
    """The path :func:`run_job` takes for this job, and why: :func:`choose_path` asked about
    ``source``'s session and kind (streaming or batch) and ``sink``'s kind;
    ``PathChoice.explain()`` gives the lines ``windtunnel run --explain`` prints. Raises as
    :func:`choose_path` does."""
    return choose_path(
        spec_of(spec), spark=source.sparkSession, streaming=source.isStreaming,
        sink_kind=sink.kind, clock=clock, checkpoint=checkpoint,
    )


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
    """Run ``spec`` over job input rows ``source`` into ``sink`` and wait for the end, on the
    path :func:`job_path` gives; the report names it.

    A streaming source runs as a streaming query with ``trigger`` (``availableNow``: until
    the input present at start is consumed; an interval: until ``timeout_s`` passes or
    the query fails); ``checkpoint`` (a directory) lets a stopped job resume without loss
    or duplicates (keep ``buckets`` the same); ``on_batch`` is called for each finished
    micro-batch. A batch source runs once. Without ``checkpoint`` a temporary one is used
    and removed after the run. ``sample``: payloads that type a ``profile: spark`` spec's
    fields for stock Spark (:mod:`windtunnel.spark_impl.stock.job`). Raises
    InvalidInput/InvalidSpec for bad options, EngineUnavailable when the query fails
    (naming its root cause).
    """
    job = spec_of(spec)
    options = trigger_options(trigger) if source.isStreaming else {}
    if timeout_s is None and "processingTime" in options:
        raise InvalidInput(
            "timeout", None, "a processing trigger runs until stopped", "give a timeout"
        )
    if not source.isStreaming:
        choice = job_path(job, source, sink, clock=clock)
        out = output_rows(job, choice, source, clock, tick_ms, buckets, sample)
        return JobReport(choice.path, (write_once(out, sink, on_batch),))
    given = None if checkpoint is None else local_path(checkpoint)
    with checkpoint_dir(given, "job-ckpt") as location:
        choice = job_path(job, source, sink, clock=clock, checkpoint=location)
        if choice.production:
            assert choice.slices is not None
            report = run_on_production(
                job, source, sink, choice.slices, options, location, timeout_s, on_batch,
                clock, tick_ms,
            )
        else:
            out = output_rows(job, choice, source, clock, tick_ms, buckets, sample)
            report = run_streaming(
                choice.path, out, sink, options, location, clock, timeout_s, on_batch
            )
        if choice.path == STOCK:
            from windtunnel.spark_impl.stock.job import open_windows

            report = replace(report, open_windows=open_windows(source.sparkSession, location))
    return replace(report, checkpoint=checkpoint)


def output_rows(
    job: JobSpec,
    choice: PathChoice,
    source: DataFrame,
    clock: str,
    tick_ms: int,
    buckets: int | None,
    sample: Sequence[Mapping[str, Any]],
) -> DataFrame:
    """The output rows of the general operator, or of stock Spark on the stock path."""
    if choice.path != STOCK:
        return windowed(job, source, clock=clock, tick_ms=tick_ms, buckets=buckets)
    from windtunnel.spark_impl.stock.job import stock_rows

    return stock_rows(source, job.query, time_unit_ms=job.time_unit_ms, sample=sample)


def run_streaming(
    path: str,
    out: DataFrame,
    sink: Sink,
    options: dict[str, Any],
    location: str,
    clock: str,
    timeout_s: float | None,
    on_batch: Callable[[BatchProgress], None] | None,
) -> JobReport:
    """Run the output rows ``out`` of ``path`` as a streaming query into ``sink`` (append
    mode, checkpoint ``location``)."""
    out = out.observe(OUT_METRIC, F.count(F.lit(1)).alias("rows"))
    writer = out.writeStream.outputMode("append").option("checkpointLocation", location)
    query = attach(writer.trigger(**options), sink).start()
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
        raise EngineUnavailable(f"the spark job failed: {cause_line(error)}")
    return JobReport(path, tuple(seen), location, timed_out)


def run_on_production(
    job: JobSpec,
    source: DataFrame,
    sink: Sink,
    slices: int,
    options: dict[str, Any],
    checkpoint: str,
    timeout_s: float | None,
    on_batch: Callable[[BatchProgress], None] | None,
    clock: str,
    tick_ms: int,
) -> JobReport:
    """Run the job on the production operator (``slices`` key slices for a new checkpoint)."""
    from windtunnel.spark_impl.production.run import run_production
    from windtunnel.spark_impl.production.sink import ProductionSink

    def report(batch_id: int, rows_in: int, rows_out: int, duration_ms: int) -> None:
        if on_batch is not None:
            on_batch(BatchProgress(batch_id, rows_in, rows_out, duration_ms))

    output = ProductionSink(sink.kind, sink.path, sink.function)
    progress, timed_out = run_production(
        job, source, output, slices=slices, options=options, checkpoint=checkpoint,
        timeout_s=timeout_s, on_batch=report, clock=clock, tick_ms=tick_ms,
    )
    seen = tuple(BatchProgress(*entry) for entry in progress.batches)
    return JobReport(PRODUCTION, seen, checkpoint, timed_out, progress.open_windows)


def local_path(location: str) -> str:
    """``location`` made absolute against this process's working directory when it is a local
    path (the JVM resolves relative paths against its own, which a Python process that
    changed directory no longer shares); URIs (``file://``, ``hdfs://``, ``s3a://``) as given."""
    if "://" in location or location.startswith("file:"):
        return location
    return str(Path(location).resolve())
