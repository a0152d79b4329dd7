"""``apply_window``: the default profile's window semantics on a Spark DataFrame, exact per event.

Works on streaming DataFrames (``transformWithStateInPandas``, state per hash bucket of
the group key) and on batch DataFrames (``applyInPandas``, the input is bounded and
ends after its last row). Output schema: :data:`windtunnel.spark_impl.schema.OUTPUT_DDL`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from windtunnel.oracle.engine import DEFAULT_RULES
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.model.stages import refuse_stages
from windtunnel.spark_impl.general.processor import make_steps, run_batch
from windtunnel.spark_impl.general.stateful import WindowProcessor
from windtunnel.spark_impl.schema import CLOCK, CONSTANT, END, EVENT, INPUT_COLUMNS, OUTPUT_DDL

CONTROL_COLUMNS = ("bucket", "kind", "seq", "arrival_ms", "after_seq", "payload")


def check_rules(rules: Rules, profile: str = "tenzir") -> None:
    """Raise InvalidSpec unless ``rules`` are per-event rules of the default profile."""
    if profile != "tenzir":
        raise InvalidSpec(
            "profile",
            profile,
            "windtunnel's Spark operators (production and general) run the default profile tenzir",
            "use profile: tenzir (or the stock mapping for profile spark)",
        )
    if rules.clock_moves != "event":
        raise InvalidSpec(
            "rules.clock_moves",
            rules.clock_moves,
            "windtunnel's Spark operators move clocks per event",
            "remove the override or use --engine oracle",
        )


def default_buckets(spark: Any) -> int:
    """Buckets when ``apply_window`` is given none: twice ``spark.sql.shuffle.partitions``."""
    return 2 * int(spark.conf.get("spark.sql.shuffle.partitions") or "2")


def bucket_count(query: Query, rules: Rules, buckets: int) -> int:
    """Buckets actually used: one when the clock is stream-wide (ungrouped or clock_scope=stream)."""
    if not query.group_by or rules.clock_scope == "stream":
        return 1
    return buckets


def prepare(
    df: DataFrame,
    query: Query,
    *,
    buckets: int,
    seq: str = "seq",
    arrival_ms: str | None = "arrival_ms",
    kind: str | None = None,
    after_seq: str | None = None,
    payload: str | None = None,
) -> DataFrame:
    """The operator's input rows (schema.INPUT_COLUMNS) from a user DataFrame.

    ``payload`` names a JSON-text column holding the event; otherwise every column
    except the named stream columns becomes the payload (``to_json``: nulls omitted,
    timestamps as ISO-8601 text with zone). A ``bucket`` column, when present, is used
    for events; otherwise the bucket hashes the typed group_by columns. Control rows
    (``kind`` ``clock``/``end``) are copied to every bucket.
    """
    stream_cols = {c for c in (seq, arrival_ms, kind, after_seq, payload, "bucket") if c}
    payload_cols = [c for c in df.columns if c not in stream_cols]
    kind_col = kind_column(kind)
    payload_col = F.col(payload) if payload else json_payload(payload_cols)
    if "bucket" in df.columns:
        event_bucket: Column = F.col("bucket")
    elif buckets == 1:
        event_bucket = F.lit(0)
    else:
        keys = [_key_column(p, payload, payload_cols) for p in query.group_by]
        event_bucket = F.pmod(F.xxhash64(*keys), F.lit(buckets))
    spread = F.when(kind_col == F.lit(EVENT), F.array(event_bucket.cast("int"))).otherwise(
        F.sequence(F.lit(0), F.lit(buckets - 1))
    )
    prepared = df.select(
        # without a kind column every row is an event: one bucket each, nothing to copy
        (F.explode(spread) if kind else event_bucket.cast("int")).alias("bucket"),
        *row_columns(kind_col, seq, arrival_ms, after_seq, payload_col, kind=kind),
    )
    return prepared.select(*INPUT_COLUMNS)


def kind_column(kind: str | None) -> Column:
    """The row kind: the ``kind`` column (null: an event), or every row an event."""
    return F.coalesce(F.col(kind), F.lit(EVENT)) if kind else F.lit(EVENT)


def json_payload(columns: Sequence[str]) -> Column:
    """The named columns as one JSON object text (``to_json``: nulls omitted, timestamps as
    ISO-8601 text with zone); ``{}`` without columns."""
    return F.to_json(F.struct(*[F.col(c) for c in columns])) if columns else F.lit("{}")


def row_columns(
    kind_col: Column,
    seq: str,
    arrival_ms: str | None,
    after_seq: str | None,
    payload_col: Column,
    *,
    kind: str | None = None,
) -> list[Column]:
    """``kind, seq, arrival_ms, after_seq, payload`` as schema.INPUT_COLUMNS types them (longs;
    absent columns null; the payload on events only). ``kind`` names the kind column the
    caller read, if any; an absent one (every row an event) and absent longs carry
    :data:`~windtunnel.spark_impl.schema.CONSTANT` metadata."""

    def long_or_null(name: str | None, alias: str) -> Column:
        if name:
            return F.col(name).cast("long").alias(alias)
        return F.lit(None).cast("long").alias(alias, metadata=CONSTANT)

    return [
        kind_col.alias("kind") if kind else kind_col.alias("kind", metadata=CONSTANT),
        F.col(seq).cast("long").alias("seq"),
        long_or_null(arrival_ms, "arrival_ms"),
        long_or_null(after_seq, "after_seq"),
        F.when(kind_col == F.lit(EVENT), payload_col).alias("payload"),
    ]


def _key_column(path: str, payload: str | None, payload_cols: Sequence[str]) -> Column:
    if payload:
        return F.get_json_object(F.col(payload), "$." + path)
    head, *rest = path.split(".")
    if head not in payload_cols:
        raise InvalidSpec("group_by", path, "not a column of the input", f"use one of {payload_cols}")
    column = F.col(head)
    for part in rest:
        column = column.getField(part)
    return column


def apply_window(
    df: DataFrame,
    query: Query,
    *,
    rules: Rules = DEFAULT_RULES,
    time_unit_ms: int = 1,
    start_wall_ms: int = 0,
    buckets: int | None = None,
    seq: str = "seq",
    arrival_ms: str | None = "arrival_ms",
    kind: str | None = None,
    after_seq: str | None = None,
    payload: str | None = None,
    system_tick_ms: int | None = None,
) -> DataFrame:
    """Emissions and drops of ``query`` over ``df`` (schema.OUTPUT_DDL), exact per event.

    ``seq`` gives stream order (the operator sorts by it and never relies on row order
    inside a micro-batch; a streaming source must deliver seqs in increasing order from
    one micro-batch to the next); ``arrival_ms`` is the wall clock at arrival (virtual
    clock; None: the wall clock moves only with control rows). ``kind`` names an optional
    column marking control rows ``clock`` (the wall clock moves to ``arrival_ms``; with
    ``after_seq``, the seq of the last event before it) and ``end`` (end of input: open
    windows flush once). ``buckets`` (default: twice ``spark.sql.shuffle.partitions``)
    must stay fixed for the life of a checkpoint. ``system_tick_ms`` switches a streaming
    query to the system clock: processing-time timers every tick move the wall clock.

    This is the general operator: one oracle driver per bucket, every query of the default
    profile, composable (it returns a DataFrame). ``run_job`` runs eligible streaming jobs on
    the production operator instead (:mod:`windtunnel.spark_impl.production`), much faster.

    Raises InvalidSpec for non-default-profile rules or an unknown group_by column.
    """
    check_rules(rules)
    refuse_stages(query.stages, "windtunnel's general Spark operator")
    spark = df.sparkSession
    if buckets is None:
        buckets = default_buckets(spark)
    used = bucket_count(query, rules, buckets)
    steps = make_steps(query, rules, time_unit_ms=time_unit_ms, start_wall_ms=start_wall_ms)
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions") or "2")
    rows = prepare(
        df,
        query,
        buckets=used,
        seq=seq,
        arrival_ms=arrival_ms,
        kind=kind,
        after_seq=after_seq,
        payload=payload,
    )
    if df.isStreaming:
        constant = ["after_seq", "kind"] if kind is None else []
        chunks = chunked(rows.drop(*constant), spread_labels(used, partitions))
        return chunks.groupBy("bucket").transformWithStateInPandas(
            statefulProcessor=WindowProcessor(steps, system_tick_ms),
            outputStructType=OUTPUT_DDL,
            outputMode="Append",
            timeMode="ProcessingTime" if system_tick_ms is not None else "None",
        )
    rows = rows.unionByName(_end_rows(rows, used), allowMissingColumns=True)
    return rows.groupBy("bucket").applyInPandas(
        lambda frame: _concat(run_batch(steps, iter([frame]))), OUTPUT_DDL
    )


def _murmur3_int(value: int, seed: int = 42) -> int:
    """Spark's ``hash()`` of an int column (Murmur3_x86_32.hashInt, seed 42), signed."""
    mask = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    k1 = rotl((value & mask) * 0xCC9E2D51 & mask, 15) * 0x1B873593 & mask
    h1 = (rotl(seed ^ k1, 13) * 5 + 0xE6546B64) & mask
    h1 ^= 4
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & mask
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & mask
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def spread_labels(buckets: int, partitions: int) -> list[int]:
    """A state key per bucket such that Spark's hash partitioning sends bucket ``i`` to
    partition ``i % partitions``: buckets spread evenly over the Python workers."""
    labels: list[int] = []
    candidate = 0
    for index in range(buckets):
        while _murmur3_int(candidate) % partitions != index % partitions or candidate in labels:
            candidate += 1
        labels.append(candidate)
        candidate = 0
    return labels


def chunked(rows: DataFrame, labels: Sequence[int] | None = None) -> DataFrame:
    """The prepared rows packed into chunks: ``(bucket int, rows binary)``, one per bucket and
    Arrow batch, ``rows`` an Arrow IPC stream of that bucket's rows (every column but bucket).

    ``transformWithStateInPandas`` turns its input into pandas row by row in Python, and
    Spark handles array columns element by element; opaque chunks cut both to a few rows
    per bucket and micro-batch. Packing is stateless (``mapInArrow``); the processor
    unpacks (:func:`windtunnel.spark_impl.general.processor.unpacked`). ``labels[i]`` replaces
    bucket ``i`` as the state key (see :func:`spread_labels`).
    """
    names = [f.name for f in rows.schema.fields if f.name != "bucket"]
    table = list(labels) if labels is not None else None
    return rows.mapInArrow(lambda batches: _pack(batches, names, table), "bucket int, rows binary")


def _pack(batches: Any, names: Sequence[str], labels: Sequence[int] | None) -> Any:
    import numpy as np
    import pyarrow as pa

    for batch in batches:
        if batch.num_rows == 0:
            continue
        buckets = batch.column("bucket").to_numpy(zero_copy_only=False)
        order = np.argsort(buckets, kind="stable")
        keys, starts = np.unique(buckets[order], return_index=True)
        ends = np.append(starts[1:], len(order))
        taken = batch.select(list(names)).take(pa.array(order))
        blobs = []
        for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
            sink = pa.BufferOutputStream()
            part = taken.slice(start, end - start)
            with pa.ipc.new_stream(sink, part.schema) as writer:
                writer.write_batch(part)
            blobs.append(sink.getvalue().to_pybytes())
        yield pa.RecordBatch.from_arrays(
            [
                pa.array((keys if labels is None else np.asarray(labels)[keys]).astype(np.int32)),
                pa.array(blobs, pa.binary()),
            ],
            names=["bucket", "rows"],
        )


def _concat(frames: Any) -> Any:
    import pandas as pd

    from windtunnel.spark_impl.general.processor import records_frame

    parts = list(frames)
    return pd.concat(parts, ignore_index=True) if parts else records_frame([])


def _end_rows(rows: DataFrame, buckets: int) -> DataFrame:
    """One ``end`` row per bucket after the last event of a bounded (batch) input."""
    stats = rows.agg(F.max("seq").alias("last"), F.max("arrival_ms").alias("wall"))
    return stats.select(
        F.explode(F.sequence(F.lit(0), F.lit(buckets - 1))).alias("bucket"),
        F.lit(END).alias("kind"),
        F.lit(None).cast("long").alias("seq"),
        F.col("wall").alias("arrival_ms"),
        F.col("last").alias("after_seq"),
        F.lit(None).cast("string").alias("payload"),
    )


__all__ = ["CLOCK", "END", "EVENT", "apply_window", "check_rules", "prepare"]
