"""Where the production operator's output rows go, once per micro-batch.

The output of micro-batch ``N`` is computed once: computing it writes the slices' new state,
so a sink that would read it twice (or only part of it, as ``show`` does) gets it persisted
first. Files (``json``, ``parquet``) are written by Spark's writer into a staging folder and
then moved to ``<dir>/part-<N>-<i>-windtunnel.<ext>`` (the files of an earlier attempt of
``N`` are deleted first), so a micro-batch Spark replays after a restart replaces its files
instead of adding to them: with the checkpoint, every output row lands exactly once. Read
them back with ``spark.read.schema(OUTPUT_DDL).json(dir)`` (or ``.parquet``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame

STAGING = "_windtunnel_staging"


@dataclass(frozen=True, slots=True)
class Output:
    """A sink of the production path: ``kind`` json, parquet, console or foreach_batch."""

    kind: str
    path: str | None = None
    function: Callable[[DataFrame, int], None] | None = None

    def write(self, jvm: Any, out: DataFrame, batch_id: int) -> None:
        """Writes micro-batch ``batch_id``'s rows ``out`` (which computes them)."""
        if self.kind in ("json", "parquet"):
            assert self.path is not None
            directory = str(Path(self.path).resolve())
            staging = f"{directory}/{STAGING}/{batch_id}"
            out.write.mode("overwrite").format(self.kind).save(staging)
            jvm.call("publish", out.sparkSession._jsparkSession, staging, directory, int(batch_id))
            return
        out = out.persist()
        try:
            rows = out.count()  # every slice computed once, state written
            if self.kind == "console":
                print(f"-------------------------------------------\nBatch: {batch_id}\n"
                      "-------------------------------------------", flush=True)
                out.show(n=max(rows, 1), truncate=False)
            else:
                assert self.function is not None
                self.function(out, batch_id)
        finally:
            out.unpersist()
