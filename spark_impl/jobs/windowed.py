"""The general operator over job input rows, with the job's wall clock.

``clock="arrival"`` (virtual) moves the wall clock with each event's ``arrival_ms``; with more
than one bucket every event also becomes a ``clock`` row for every bucket, so each bucket sees
the stream-wide wall clock move where the oracle does (exact per event). ``clock="system"``:
processing-time timers every ``tick_ms`` move it to the system clock.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.scenario import Scenario
from windtunnel.spark_impl.general.operator import apply_window, bucket_count, default_buckets
from windtunnel.spark_impl.jobs.sources import JOB_INPUT_COLUMNS
from windtunnel.spark_impl.jobs.spec import CLOCKS, JobSpec, spec_of
from windtunnel.spark_impl.schema import CLOCK, EVENT


def windowed(
    spec: JobSpec | Scenario | Query,
    rows: DataFrame,
    *,
    clock: str = "arrival",
    tick_ms: int = 1000,
    buckets: int | None = None,
) -> DataFrame:
    """The general operator over job input rows: a DataFrame of output rows
    (schema.OUTPUT_DDL).

    ``clock="arrival"``: the wall clock follows ``arrival_ms``; with more than one bucket
    each event is also sent as a ``clock`` row (after the previous seq) to every bucket,
    so idle timeouts and ``now()`` windows close at the oracle's stream points (this
    costs one narrow row per bucket and event). ``clock="system"``: ``arrival_ms`` is
    ignored and processing-time timers move the wall clock every ``tick_ms`` (streaming
    only). Raises InvalidSpec for an unknown clock, a bad tick, or the system clock over a
    batch input.
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
        rows = with_clock_rows(rows)
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


def with_clock_rows(rows: DataFrame) -> DataFrame:
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
