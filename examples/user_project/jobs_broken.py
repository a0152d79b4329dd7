"""The same job with a plausible bug: the watermark delay was "tuned" to 1 minute to
get results out sooner, so it no longer matches the spec's 2-minute tolerance. Rows
between one and two minutes behind are dropped, and windows close a micro-batch early.
"""

from pyspark.sql import DataFrame
from pyspark.sql import functions as F


def failed_logins(events: DataFrame) -> DataFrame:
    """Like ``jobs.failed_logins``, with a 1-minute watermark delay."""
    return (
        events.withWatermark("ts", "1 minute")
        .groupBy(F.window("ts", "10 minutes"), "user")
        .agg(F.count(F.lit(1)).alias("failures"), F.sum("bytes").alias("bytes"))
    )
