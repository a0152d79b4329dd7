"""Writing generated streams as the user's own typed columns (``generate --columns``).

Instead of Kafka-shaped records (a ``value`` holding the payload as JSON text), each
record is its payload fields as top-level columns, then ``seq``, ``arrival_ms``,
``truth`` and ``tag``: what a job reading the events from files sees. JSON lines keep
the payload's JSON values as they are (the time field: epoch ms, ``null``, or the text
``"not-a-time"``); Parquet types each column: the time field ``int64`` epoch ms (null
when the time is null or not a time: ``truth``/``tag`` say which), other fields as
their values (``string``, ``int64``, ``double``). Same seed and knobs, same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from windtunnel.simulator.outputs import Progress, no_progress, write_spark_dir
from windtunnel.simulator.payloads import Table, payload_json, rendered_parts
from windtunnel.simulator.simulation import TAG_NAMES, Simulation
from windtunnel.simulator.truth import TRUTH_NAMES

LABELS: Final = ("seq", "arrival_ms", "truth", "tag")
"""The columns after the payload's."""


def _labels(table: Table) -> tuple[list[int], list[int], list[str], list[str]]:
    truth = np.array(TRUTH_NAMES, dtype=object)[table["truth"]].tolist()
    tag = np.array(TAG_NAMES, dtype=object)[table["tag"]].tolist()
    return table["seq"].tolist(), table["arrival"].tolist(), truth, tag


def column_lines(simulation: Simulation, table: Table) -> list[str]:
    """A chunk as JSON lines: the payload's fields, then seq, arrival_ms, truth, tag."""
    payloads = payload_json(simulation.workload, table)
    seqs, arrivals, truth, tag = _labels(table)
    return [
        f'{p[:-1]},"seq":{s},"arrival_ms":{a},"truth":{encode_basestring(t)},'
        f'"tag":{encode_basestring(g)}}}\n'
        for p, s, a, t, g in zip(payloads, seqs, arrivals, truth, tag, strict=True)
    ]


def write_jsonl_columns(simulation: Simulation, path: Path, progress: Progress = no_progress) -> None:
    """One JSON object per record with the payload's fields as top-level keys."""
    with path.open("w", encoding="utf-8") as out:
        for table in simulation.chunks():
            lines = column_lines(simulation, table)
            out.writelines(lines)
            progress(len(lines))


def column_arrays(simulation: Simulation, table: Table) -> dict[str, Any]:
    """A chunk's columns as Python lists (the time field as int or None; a field a record
    does not have, None)."""
    workload = simulation.workload
    parts = rendered_parts(workload, table, as_json=False)
    rendered: dict[str, Any] = {}
    if parts and parts[0][0] is None:
        rendered = dict(parts[0][1])
    else:
        n = len(table["seq"])
        merged = {name: np.full(n, None, dtype=object) for name in workload.fields() or []}
        for rows, shape_columns in parts:
            for name, values in shape_columns:
                merged.setdefault(name, np.full(n, None, dtype=object))[rows] = values
        rendered = {name: column.tolist() for name, column in merged.items()}
    columns: dict[str, Any] = {}
    for name, values in rendered.items():
        if name == workload.time_field:
            values = [v if isinstance(v, int) else None for v in values]
        columns[name] = values
    seqs, arrivals, truth, tag = _labels(table)
    columns.update(seq=seqs, arrival_ms=arrivals, truth=truth, tag=tag)
    return columns


def column_schema(simulation: Simulation, columns: dict[str, Any]) -> pa.Schema:
    """The Parquet schema: int64 time, labels as in the Kafka-shaped files, the workload's
    declared column types, other fields typed from their values (without values: string)."""
    time_field = simulation.workload.time_field
    declared = simulation.workload.column_types
    fields = []
    for name, values in columns.items():
        if name in (time_field, "seq", "arrival_ms"):
            kind = pa.int64()
        elif name in ("truth", "tag"):
            kind = pa.string()
        elif name in declared:
            kind = pa.type_for_alias(declared[name])
        else:
            kind = pa.array(values).type
            kind = pa.string() if pa.types.is_null(kind) else kind
        fields.append((name, kind))
    return pa.schema(fields)


def write_parquet_columns(simulation: Simulation, path: Path, progress: Progress = no_progress) -> None:
    """A Parquet file of typed columns (:func:`column_schema`), one row group per chunk."""
    writer: pq.ParquetWriter | None = None
    try:
        for table in simulation.chunks():
            columns = column_arrays(simulation, table)
            if writer is None:
                writer = pq.ParquetWriter(path, column_schema(simulation, columns))
            writer.write_table(pa.table(columns, schema=writer.schema))
            progress(len(columns["seq"]))
        if writer is None:  # no records: the label columns alone
            empty: dict[str, Any] = {name: [] for name in LABELS}
            pq.write_table(pa.table(empty, schema=column_schema(simulation, empty)), path)
    finally:
        if writer is not None:
            writer.close()


def write_spark_dir_columns(
    simulation: Simulation, path: Path, progress: Progress = no_progress
) -> None:
    """A Spark stream directory (as ``spark-dir``) of typed-column JSON lines."""
    write_spark_dir(simulation, path, progress, column_lines)


COLUMN_WRITERS: Final[dict[str, Callable[[Simulation, Path, Progress], None]]] = {
    "jsonl": write_jsonl_columns,
    "parquet": write_parquet_columns,
    "spark-dir": write_spark_dir_columns,
}
"""Formats ``--columns`` applies to."""
