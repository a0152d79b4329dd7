"""Clicks per campaign per minute, written as stock Spark Structured Streaming.

``events`` is a streaming DataFrame with columns ``ts`` (timestamp), ``click_id``,
``campaign`` and ``cost``; examples/clicks-dedup.yaml is the spec both jobs claim:

    PYTHONPATH=examples windtunnel check examples/clicks-dedup.yaml --job clicks_jobs:clicks_per_campaign
"""

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

WATERMARK_DELAY = "30 seconds"  # the spec's tolerance, and so the deduplication's reach


def clicks_per_campaign(events: DataFrame) -> DataFrame:
    """Test clicks (cost <= 0 or null) filtered out, then each click_id counted once within
    the watermark delay, then clicks and spend per campaign per minute (append mode)."""
    return (
        events.withWatermark("ts", WATERMARK_DELAY)
        .filter(F.col("cost") > 0)
        .dropDuplicatesWithinWatermark(["click_id"])
        .groupBy(F.window("ts", "1 minute"), "campaign")
        .agg(F.count(F.lit(1)).alias("clicks"), F.sum("cost").alias("spend"))
    )


def clicks_dedup_first(events: DataFrame) -> DataFrame:
    """The same job with its two steps swapped, a plausible refactoring: a test click now
    claims its click_id, and the real click redelivered under the same id is lost."""
    return (
        events.withWatermark("ts", WATERMARK_DELAY)
        .dropDuplicatesWithinWatermark(["click_id"])
        .filter(F.col("cost") > 0)
        .groupBy(F.window("ts", "1 minute"), "campaign")
        .agg(F.count(F.lit(1)).alias("clicks"), F.sum("cost").alias("spend"))
    )
