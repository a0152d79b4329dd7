"""``profile: spark`` specs in a job: the stock mapping over job input rows.

A ``spark``-profile spec describes what stock Spark does (``withWatermark`` +
``window()``/``session_window()`` in append mode), so :func:`windtunnel.spark_impl.job.run_job`
runs exactly that (:func:`windtunnel.spark_impl.stock.mapping.stock_window`) instead of the exact
operator. Job input rows carry each event as JSON text; stock Spark needs typed columns:

- the window's ``on`` field becomes the event time as the oracle reads it: a number in
  the spec's ``time_unit`` (floored to the millisecond) or an ISO-8601 text with a zone;
  anything else is no time (the row is ignored, as ``window()`` ignores null times);
- the fields the spec groups by and aggregates are typed from a sample of the payloads
  (:func:`~windtunnel.spark_impl.stock.payload.payload_schema`: one JSON type per key, numbers
  for ``sum``/``min``/``max``/``avg``); without a sample, keys are text and aggregated
  fields doubles.

Output rows have the schema of windtunnel's operators (``emit`` rows only: stock Spark drops late
rows without a trace; ``after_seq`` and ``wall_ms`` null). Control rows (``clock``,
``end``) are ignored: stock Spark has no end of input, so windows the watermark has not
passed when the input stops are never emitted; :func:`open_windows` counts them from the
aggregation's state in the checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from windtunnel.oracle.model.spec import Query
from windtunnel.spark_impl.schema import EVENT
from windtunnel.spark_impl.stock.mapping import stock_window
from windtunnel.spark_impl.stock.payload import payload_schema

EVENT_TIME = "_windtunnel_run_time"
"""The timestamp column the event time is read into."""

_NUMBER = r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$"


def _json_path(path: str) -> str:
    return "$" + "".join(f"['{part}']" for part in path.split("."))


def event_time(payload: Column, on: str, time_unit_ms: int) -> Column:
    """The event time of a JSON payload's ``on`` field as a timestamp (null: no time)."""
    text = F.get_json_object(payload, _json_path(on))
    number = F.floor(text.cast("double") * F.lit(time_unit_ms)).cast("long")
    return (
        F.when(text.rlike(_NUMBER), F.timestamp_millis(number))
        .otherwise(F.try_to_timestamp(text))
    )


def fallback_schema(query: Query) -> T.StructType:
    """Field types without a sample: keys text, aggregated fields doubles, counted text."""
    sample: list[dict[str, Any]] = []
    schema = payload_schema(query, sample)
    numeric = {a.field for a in query.aggregate or () if a.field and a.function != "count"}

    def retyped(struct: T.StructType, prefix: str) -> T.StructType:
        fields = []
        for field in struct.fields:
            path = f"{prefix}{field.name}"
            kind = field.dataType
            if isinstance(kind, T.StructType):
                kind = retyped(kind, path + ".")
            elif path in numeric:
                kind = T.DoubleType()
            fields.append(T.StructField(field.name, kind))
        return T.StructType(fields)

    return retyped(schema, "")


def stock_rows(
    rows: DataFrame, query: Query, *, time_unit_ms: int, sample: Sequence[Mapping[str, Any]] = ()
) -> DataFrame:
    """The stock mapping's output rows (schema.OUTPUT_DDL) over job input rows: events only,
    fields typed from ``sample`` (see the module docstring). Raises InvalidSpec for what
    stock Spark cannot express."""
    schema = payload_schema(query, list(sample)) if sample else fallback_schema(query)
    events = rows.where(F.col("kind") == F.lit(EVENT)).select(
        F.from_json("payload", schema).alias("p"),
        event_time(F.col("payload"), query.window.on, time_unit_ms).alias(EVENT_TIME),
    )
    typed = events.select(*[F.col("p").getField(f.name).alias(f.name) for f in schema.fields],
                          EVENT_TIME)
    return stock_window(typed, query, event_time=EVENT_TIME)


def open_windows(spark: Any, checkpoint: str) -> int | None:
    """Windows (per group) still held in the aggregation's state in ``checkpoint``: not
    emitted, because the watermark has not passed their end. None when the state cannot
    be read (Spark Connect, a checkpoint elsewhere, no aggregation state)."""
    try:
        return int(spark.read.format("statestore").load(checkpoint).count())
    except Exception:  # the state reader is best effort: the run itself succeeded
        return None
