"""Where a job's output rows go: the sinks, attached to a streaming query or written once
for a batch input."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame

from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.spark_impl.jobs.query_progress import BatchProgress

SINK_KINDS = ("json", "parquet", "console", "memory", "foreach_batch")

_names = itertools.count()


@dataclass(frozen=True, slots=True)
class Sink:
    """Where output rows go: ``json``/``parquet`` (a directory at ``path``; exactly once with
    the checkpoint), ``console`` (printed per micro-batch), ``memory`` (a table named
    ``name``), ``foreach_batch`` (``function(df, batch_id)``). Raises InvalidInput for an
    unknown kind, a file sink without a path, or foreach_batch without a callable."""

    kind: str
    path: str | None = None
    name: str | None = None
    function: Callable[[DataFrame, int], None] | None = None

    def __post_init__(self) -> None:
        if self.kind not in SINK_KINDS:
            raise InvalidInput(
                "sink", self.kind, "unknown sink", f"use one of {', '.join(SINK_KINDS)}"
            )
        if self.kind in ("json", "parquet") and not self.path:
            raise InvalidInput(
                "sink.path", self.path, f"a {self.kind} sink needs a directory", "give --out DIR"
            )
        if self.kind == "foreach_batch" and not callable(self.function):
            raise InvalidInput(
                "sink.function", self.function, "must be callable", "pass function(df, batch_id)"
            )

    def table_name(self) -> str:
        """A memory sink's table: ``name``, else a fresh ``windtunnel_job_<n>``."""
        return self.name or f"windtunnel_job_{next(_names)}"


def attach(writer: Any, sink: Sink) -> Any:
    """A streaming query's ``writeStream`` writer pointed at ``sink``."""
    if sink.kind in ("json", "parquet"):
        assert sink.path is not None
        return writer.format(sink.kind).option("path", str(Path(sink.path).resolve()))
    if sink.kind == "console":
        return writer.format("console").option("truncate", "false").option("numRows", 1000)
    if sink.kind == "memory":
        return writer.format("memory").queryName(sink.table_name())
    return writer.foreachBatch(sink.function)


def write_once(
    out: DataFrame, sink: Sink, on_batch: Callable[[BatchProgress], None] | None
) -> BatchProgress:
    """A batch input's output rows ``out`` written to ``sink`` as micro-batch 0 (rows in: -1,
    not counted); ``on_batch`` gets its progress, which is returned."""
    started = time.monotonic()
    out = out.persist()
    try:
        rows_out = out.count()
        if sink.kind in ("json", "parquet"):
            assert sink.path is not None
            out.write.mode("append").format(sink.kind).save(str(Path(sink.path).resolve()))
        elif sink.kind == "console":
            out.show(n=max(rows_out, 1), truncate=False)
        elif sink.kind == "memory":
            out.createOrReplaceTempView(sink.table_name())
        else:
            assert sink.function is not None
            sink.function(out, 0)
    finally:
        if sink.kind != "memory":
            out.unpersist()
    entry = BatchProgress(0, -1, rows_out, int((time.monotonic() - started) * 1000))
    if on_batch is not None:
        on_batch(entry)
    return entry
