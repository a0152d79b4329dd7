"""Where the production operator's output rows go, once per micro-batch.

Files (``json``, ``parquet``): each key slice's task writes its rows of micro-batch ``N``, as
the engine emits them, as ``<dir>/part-<N>-<slice>-windtunnel.<ext>`` itself (JSON lines as
Spark's JSON writer writes them; Parquet through Parquet's own writer), replacing an earlier
attempt's file, so a micro-batch Spark replays after a restart replaces its files instead of
adding to them: with the checkpoint, every output row lands exactly once. One Spark job per
micro-batch, and no writer of Spark's, so no commit protocol of its own (docs/spark.md,
"Speed"). Read them back with ``spark.read.schema(OUTPUT_DDL).json(dir)`` (or ``.parquet``).

Other sinks get the micro-batch's rows as a DataFrame, computed once: computing them writes
the slices' new state, so a sink that would read them twice (or only part of them, as
``show`` does) gets them persisted first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame

FILE_FORMATS = ("json", "parquet")

SINK_KINDS = (*FILE_FORMATS, "console", "foreach_batch")
"""The sinks the production operator writes to (a ``memory`` table needs a query's own sink)."""


@dataclass(frozen=True, slots=True)
class ProductionSink:
    """Where the production operator's output rows go: ``kind`` json or parquet (files in the
    directory ``path``), console, or foreach_batch (``function(df, batch_id)``). Raises
    ValueError for another kind, a file kind without a path, or foreach_batch without a
    function (the job's :class:`~windtunnel.spark_impl.job.Sink` checked them already)."""

    kind: str
    path: str | None = None
    function: Callable[[DataFrame, int], None] | None = None

    def __post_init__(self) -> None:
        if self.kind not in SINK_KINDS:
            raise ValueError(f"kind={self.kind!r}: the production operator writes to {SINK_KINDS}")
        if self.kind in FILE_FORMATS and not self.path:
            raise ValueError(f"kind={self.kind!r} needs a path")
        if self.kind == "foreach_batch" and self.function is None:
            raise ValueError("kind='foreach_batch' needs a function")

    def directory(self) -> str:
        """The output directory as the tasks see it (local paths made absolute here)."""
        assert self.path is not None
        if "://" in self.path or self.path.startswith("file:"):
            return self.path
        return str(Path(self.path).resolve())

    def write(self, run: Any, batch: DataFrame, batch_id: int, now_ms: int) -> None:
        """Runs micro-batch ``batch_id`` on ``run`` (a ProductionRun) and writes its rows;
        ``now_ms``: the system clock for a system-clock plan (else ignored)."""
        spark = batch.sparkSession
        if self.kind in FILE_FORMATS:
            run.writeFiles(batch._jdf, batch_id, now_ms, self.kind, self.directory())
            return
        out = DataFrame(run.outputs(batch._jdf, batch_id, now_ms), spark).persist()
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
