"""Running the general operator's query on a scenario's first micro-batches into a JSON
directory, from a checkpoint (for restart tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from windtunnel.spark_impl.harness.feed import Feed
from windtunnel.spark_impl.harness.replay import scenario_window
from windtunnel.spark_impl.jobs.scripted import scripted_stream


def run_piece(spark: Any, fed: Feed, scenario: Any, upto: int, out: Path, checkpoint: Path,
              buckets: int) -> list[int]:
    """Run the query (``buckets`` buckets) on micro-batches ``[0, upto)`` from ``checkpoint``
    until it is idle, appending JSON files to ``out``; the ids of the micro-batches it ran."""
    rows = scripted_stream(spark, fed.batches[:upto])
    query = (
        scenario_window(rows, scenario, buckets)
        .writeStream.format("json")
        .option("path", str(out))
        .option("checkpointLocation", str(checkpoint))
        .outputMode("append")
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination()
    finally:
        query.stop()
    return [progress["batchId"] for progress in query.recentProgress]
