"""Where the fast path's output rows go: files per micro-batch id, or a DataFrame per micro-batch.

Split from :mod:`windtunnel.spark_impl.batch_exact` (which re-exports these names). A
micro-batch's rows are a pandas frame (the general step) or an Arrow table (the typed steps,
:mod:`windtunnel.spark_impl.arrow_rows`); both become the operator's schema
(``schema.OUTPUT_DDL``).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import pandas as pd
import pyarrow as pa

from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.spark_impl.arrow_rows import OUTPUT_ARROW_SCHEMA
from windtunnel.spark_impl.schema import OUTPUT_COLUMNS, OUTPUT_DDL

FILE_FORMATS = ("json", "parquet")
Rows: TypeAlias = "pd.DataFrame | pa.Table"
"""A micro-batch's output rows: a pandas frame (general step) or an Arrow table (typed steps)."""


@dataclass(frozen=True, slots=True)
class FileOutput:
    """Output rows as one file per micro-batch in ``path`` (``json`` lines with nulls left
    out, as Spark writes them, or ``parquet`` with the operator's schema), named after the
    micro-batch id: a replayed micro-batch overwrites its file."""

    path: str
    fmt: str = "json"

    def __post_init__(self) -> None:
        if self.fmt not in FILE_FORMATS:
            raise InvalidInput("format", self.fmt, "unknown output format", "use json or parquet")

    def file(self, name: str) -> Path:
        return Path(self.path) / f"part-{name}-windtunnel.{self.fmt}"

    def __call__(self, out: Rows, name: str, spark: Any) -> None:
        target = self.file(name)
        if not len(out):
            target.unlink(missing_ok=True)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        # unique per writer: a background writer and a restarted run may write one id at once
        temporary = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        if self.fmt == "json":
            records = out.to_pylist() if isinstance(out, pa.Table) else out.to_dict("records")
            temporary.write_text("".join(json_line(r) for r in records))
        else:
            import pyarrow.parquet as pq

            pq.write_table(arrow_table(out), temporary)
        os.replace(temporary, target)


@dataclass(frozen=True, slots=True)
class DataFrameOutput:
    """Output rows as a DataFrame (``schema.OUTPUT_DDL``) handed to ``function(df, name)``
    (``name``: the micro-batch id as text, or ``end`` for the end-of-input flush)."""

    function: Callable[[Any, str], None]

    def __call__(self, out: Rows, name: str, spark: Any) -> None:
        self.function(spark.createDataFrame(arrow_table(out).to_pandas(), OUTPUT_DDL), name)


Output = FileOutput | DataFrameOutput


def json_line(record: dict[str, Any]) -> str:
    """One output row as a JSON line, null fields left out (as Spark's JSON writer does)."""
    kept = {k: _plain(v) for k, v in record.items() if v is not None and v is not pd.NA}
    return json.dumps(kept, separators=(",", ":")) + "\n"


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def arrow_table(out: Rows) -> pa.Table:
    """Output rows as an Arrow table with the operator's column types."""
    if isinstance(out, pa.Table):
        return out
    return pa.Table.from_pandas(out[list(OUTPUT_COLUMNS)], schema=OUTPUT_ARROW_SCHEMA, preserve_index=False)


def output_for(kind: str, path: str | None, function: Callable[[Any, int], None] | None) -> Output:
    """The fast path's writer for a job sink: ``json``/``parquet`` files in ``path``,
    ``console`` (each micro-batch's rows printed), ``foreach_batch`` (``function(df, batch_id)``).
    Raises InvalidInput for another sink."""
    if kind in FILE_FORMATS and path:
        return FileOutput(str(Path(path).resolve()), kind)
    if kind == "console":
        return DataFrameOutput(_show)
    if kind == "foreach_batch" and function is not None:
        return DataFrameOutput(_ById(function))
    raise InvalidInput("sink", kind, "the fast path writes json, parquet, console or foreach_batch", "use one of them")


def _show(df: Any, name: str) -> None:
    df.show(n=1000, truncate=False)


@dataclass(frozen=True, slots=True)
class _ById:
    """A ``function(df, batch_id)`` called with the micro-batch id as an int (-1: the end flush)."""

    function: Callable[[Any, int], None]

    def __call__(self, df: Any, name: str) -> None:
        self.function(df, int(name) if name.isdigit() else -1)


__all__ = ["FILE_FORMATS", "DataFrameOutput", "FileOutput", "Output", "Rows", "arrow_table", "json_line", "output_for"]
