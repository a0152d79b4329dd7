"""Output rows of the typed tumbling-count steps built as an Arrow table, without pandas.

The typed steps (:func:`windtunnel.spark_impl.fast_tumbling.tumbling_counts` and its JVM
twin, :mod:`windtunnel.spark_impl.jvm_step`) write late drops of one window each and
count-only emissions. A micro-batch of 300k events gives about 13k such rows; built
through pandas (:func:`fast_frames.emission_frame`, :func:`fast_frames.late_frame`) and
converted for the Parquet writer they cost about as much as the step itself. Here each
column is one Arrow array and the texts are joined column-wise (``pyarrow.compute``); the
texts are the general step's, character for character (tests/spark_impl/test_fast_tumbling.py
compares the two paths' rows). Windows are half-open ``[start_ms, end_ms)``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from windtunnel.oracle.model.spec import Aggregation
from windtunnel.spark_impl.schema import INT_OUTPUT_COLUMNS, OUTPUT_COLUMNS

OUTPUT_ARROW_SCHEMA = pa.schema(
    [
        pa.field(
            name,
            pa.int64() if name in INT_OUTPUT_COLUMNS else pa.bool_() if name == "partial" else pa.string(),
        )
        for name in OUTPUT_COLUMNS
    ]
)
"""The operator's output columns (``schema.OUTPUT_DDL``) as an Arrow schema."""


def _join(*pieces: Any) -> pa.Array:
    """Texts joined element-wise: each piece a str (repeated) or an int64 array (as decimal)."""
    parts = [p if isinstance(p, str) else pc.cast(pa.array(p, pa.int64()), pa.string()) for p in pieces]
    return pc.binary_join_element_wise(*parts, "")


def _table(n: int, columns: dict[str, Any]) -> pa.Table:
    """A table of ``n`` rows: the given columns, every other output column null."""
    arrays = []
    for field in OUTPUT_ARROW_SCHEMA:
        value = columns.get(field.name)
        if value is None:
            arrays.append(pa.nulls(n, field.type))
        elif isinstance(value, pa.Array | pa.ChunkedArray):
            arrays.append(value)
        else:
            arrays.append(pa.array(value, field.type))
    return pa.Table.from_arrays(arrays, schema=OUTPUT_ARROW_SCHEMA)


def late_table(
    seqs: np.ndarray,
    times: np.ndarray,
    starts: np.ndarray,
    clocks: np.ndarray,
    groups: pa.Array,
    *,
    size_ms: int,
    offset_ms: int,
) -> pa.Table:
    """Late drops of one window each (``[start, start + size_ms)``), in the given order:
    the event ``seqs`` with event ``times`` (ms), each key's clock before it and its group
    as JSON text. The texts are :func:`fast_frames.late_frame`'s."""
    n = len(seqs)
    ends = starts + size_ms
    windows = _join('[{"start_ms": ', starts, ', "end_ms": ', ends, "}]")
    messages = _join(
        "event time ", times, " is late for window (first [", starts, ", ", ends,
        ")): it closed when the clock reached ", ends + offset_ms, "; the clock is at ", clocks,
    )
    return _table(
        n,
        {
            "type": pa.array(np.full(n, "drop", object), pa.string()),
            "start_ms": starts,
            "end_ms": ends,
            "group": groups,
            "reason": pa.array(np.full(n, "late", object), pa.string()),
            "seq": seqs,
            "windows": windows,
            "message": messages,
            "step": 2 * seqs + 1,
            "emit_index": np.zeros(n, np.int64),
        },
    )


def count_emission_table(
    groups: pa.Array,
    first_seqs: np.ndarray,
    starts: np.ndarray,
    counts: np.ndarray,
    after_seqs: np.ndarray,
    walls_ms: np.ndarray,
    emit_index: np.ndarray,
    *,
    size_ms: int,
    aggregations: Sequence[Aggregation],
) -> pa.Table:
    """Emissions (reason ``close``, not partial) of count-only windows (aggregates
    ``count``, ``window_start``, ``window_end``)
    ``[start, start + size_ms)`` closed by events ``after_seqs`` at wall clock ``walls_ms``:
    the rows :func:`fast_frames.emission_frame` writes (each window's group as JSON text,
    its key's first seq)."""
    n = len(starts)
    values = {"count": counts, "window_start": starts, "window_end": starts + size_ms}
    pieces: list[Any] = ["{"]
    for index, aggregation in enumerate(aggregations):
        pieces += [(", " if index else "") + json.dumps(aggregation.name) + ": ", values[aggregation.function]]
    pieces.append("}")
    return _table(
        n,
        {
            "type": pa.array(np.full(n, "emit", object), pa.string()),
            "start_ms": starts,
            "end_ms": starts + size_ms,
            "group": groups,
            "row": _join(*pieces),
            "reason": pa.array(np.full(n, "close", object), pa.string()),
            "after_seq": after_seqs,
            "wall_ms": walls_ms,
            "partial": np.zeros(n, bool),
            "step": 2 * after_seqs + 1,
            "group_first_seq": first_seqs,
            "emit_index": emit_index,
        },
    )


def group_texts(groups: Sequence[str]) -> pa.Array:
    """The keys' groups (JSON text by key code) as an Arrow array to ``take`` from."""
    return pa.array(groups, pa.string())


__all__ = ["OUTPUT_ARROW_SCHEMA", "count_emission_table", "group_texts", "late_table"]
