"""Stock Spark Structured Streaming jobs as engineers write them, each checked against a spec
of this folder (docs/conformance.md, "Job shapes"):

    PYTHONPATH=examples/spark_jobs windtunnel check examples/spark_jobs/logins.yaml --job spark_shapes:logins_per_user

Every job takes ``events``, a streaming DataFrame whose columns are the spec's event fields
(``ts`` a timestamp), and returns a streaming window aggregation. Static tables and temp
views belong to ``events.sparkSession``.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F


def logins_per_user(events: DataFrame) -> DataFrame:
    """logins.yaml: tumbling 1-minute windows, count and sum per string user id."""
    return (
        events.withWatermark("ts", "10 seconds")
        .groupBy(F.window("ts", "1 minute"), "user_id")
        .agg(F.count(F.lit(1)).alias("logins"), F.sum("bytes").alias("bytes"))
    )


def logins_sql(events: DataFrame) -> DataFrame:
    """logins.yaml in Spark SQL text over a temp view."""
    events.withWatermark("ts", "10 seconds").createOrReplaceTempView("logins")
    return events.sparkSession.sql("""
        SELECT window(ts, '1 minute') AS window, user_id,
               count(*) AS logins, sum(bytes) AS bytes
        FROM logins
        GROUP BY window(ts, '1 minute'), user_id
    """)


def logins_known_users(events: DataFrame) -> DataFrame:
    """A bug logins.yaml catches: rows with a null field are dropped before counting (a
    login without a user id, or without bytes, still happened)."""
    return (
        events.dropna()
        .withWatermark("ts", "10 seconds")
        .groupBy(F.window("ts", "1 minute"), "user_id")
        .agg(F.count(F.lit(1)).alias("logins"), F.sum("bytes").alias("bytes"))
    )


def merchant_stats(events: DataFrame) -> DataFrame:
    """payments.yaml: sliding 1-minute windows every 30 seconds, average and maximum."""
    return (
        events.withWatermark("ts", "15 seconds")
        .groupBy(F.window("ts", "1 minute", "30 seconds"), "merchant")
        .agg(F.avg("amount").alias("avg_amount"), F.max("amount").alias("max_amount"))
    )


def device_sessions(events: DataFrame) -> DataFrame:
    """sessions.yaml: session windows per device with a 30-second gap."""
    return (
        events.withWatermark("ts", "5 seconds")
        .groupBy(F.session_window("ts", "30 seconds"), "device")
        .agg(F.count(F.lit(1)).alias("readings"), F.max("temp").alias("peak"))
    )


def clicks_deduplicated(events: DataFrame) -> DataFrame:
    """clicks.yaml: each click_id once within the watermark delay, then a count."""
    return (
        events.withWatermark("ts", "20 seconds")
        .dropDuplicatesWithinWatermark(["click_id"])
        .groupBy(F.window("ts", "1 minute"), "campaign")
        .agg(F.count(F.lit(1)).alias("clicks"))
    )


BOTS = ("bot-7",)


def logins_without_bots(events: DataFrame) -> DataFrame:
    """logins-no-bots.yaml: a stream-static join (left anti) against a table of bot ids,
    before the watermark (a bot's row then never moves it, as the spec's filter says)."""
    bots = events.sparkSession.createDataFrame([(b,) for b in BOTS], "user_id string")
    return (
        events.join(bots, "user_id", "left_anti")
        .withWatermark("ts", "10 seconds")
        .groupBy(F.window("ts", "1 minute"), "user_id")
        .agg(F.count(F.lit(1)).alias("logins"))
    )


def merchant_totals(events: DataFrame) -> DataFrame:
    """totals-update.yaml: count and spend per merchant per minute; the spec's
    ``output_mode: update`` runs it as ``outputMode("update")``."""
    return (
        events.withWatermark("ts", "10 seconds")
        .groupBy(F.window("ts", "1 minute"), "merchant")
        .agg(F.count(F.lit(1)).alias("payments"), F.sum("amount").alias("spend"))
    )


# --- a foreachBatch sink: an upsert keeping one row per window and merchant ----------------


def totals_for_upsert(events: DataFrame) -> DataFrame:
    """What the foreachBatch sink below receives: checked with ``--compare final`` (the
    table keeps the last row per window and merchant)."""
    return merchant_totals(events)


def upsert(table: dict[tuple[Any, ...], dict[str, Any]], batch: DataFrame) -> None:
    """The sink's merge: each row replaces the table's row of its window and merchant
    (what ``MERGE INTO totals USING updates ON window AND merchant`` does in Delta)."""
    for row in batch.collect():
        table[(row["window"]["start"], row["merchant"])] = row.asDict(recursive=True)


def start_totals(events: DataFrame, table: dict[tuple[Any, ...], dict[str, Any]]) -> Any:
    """The production wiring: update mode into the upsert, one call per micro-batch."""
    return (
        totals_for_upsert(events).writeStream.outputMode("update")
        .foreachBatch(lambda batch, _batch_id: upsert(table, batch))
        .start()
    )
