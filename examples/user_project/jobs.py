"""Our team's streaming job: failed logins per user in 10-minute windows.

Written as stock Spark Structured Streaming (``withWatermark`` + ``window``), reading
a streaming DataFrame of events with columns ``ts`` (timestamp), ``user`` and ``bytes``.
"""

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

WATERMARK_DELAY = "2 minutes"  # specs/failed_logins.yaml: tolerance 2min


def failed_logins(events: DataFrame) -> DataFrame:
    """Failures and bytes per user per 10-minute window, emitted once the watermark
    (max event time minus 2 minutes) passes the window's end (append mode)."""
    return (
        events.withWatermark("ts", WATERMARK_DELAY)
        .groupBy(F.window("ts", "10 minutes"), "user")
        .agg(F.count(F.lit(1)).alias("failures"), F.sum("bytes").alias("bytes"))
    )
