"""Writing generated streams: scenario files, JSON lines, Parquet, and a Spark stream directory.

All writers stream chunk by chunk (memory stays flat, except that a scenario keeps the
list of expected drops for its ``expect`` block) and give identical bytes for the same
seed and knobs. ``progress(n)`` is called with the number of records written per chunk.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Final

import numpy as np
import pyarrow.parquet as pq
import yaml

from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.timeparse import format_duration
from windtunnel.simulator.items import layout
from windtunnel.simulator.kafka_columns import (
    PARQUET_SCHEMA,
    KafkaColumns,
    line_bytes,
    line_offsets,
)
from windtunnel.simulator.payloads import Table, Workload, payload_json
from windtunnel.simulator.simulation import Simulation
from windtunnel.simulator.truth import TRUTH_NAMES

Progress = Callable[[int], None]
FORMATS: Final = ("scenario", "jsonl", "parquet", "spark-dir")


def no_progress(n: int) -> None:
    """No progress reporting."""


def scenario_header(simulation: Simulation) -> dict[str, Any]:
    """The scenario file's keys before ``input``: name, profile, window, query, and the
    ``where`` stage of a workload whose query windows some of its records only."""
    knobs = simulation.knobs
    workload = simulation.workload
    spec = simulation.late_spec
    profile = simulation.truth_profile
    whose = "the default profile" if profile == "tenzir" else f"profile {profile}"
    header: dict[str, Any] = {
        "name": f"{workload.name}-seed{knobs.seed}",
        "description": f"windtunnel generate {workload.name}: {workload.summary}. "
        f"expect.drops is the generator's ground truth for {whose}.",
        "profile": profile,
    }
    if spec.clock_scope == "stream":
        header["rules"] = {"clock_scope": "stream"}
    header["time_unit"] = "ms"
    header["start_wall"] = knobs.start_ms
    header["window"] = {
        name: format_duration(value) if name in ("size", "every", "tolerance") else value
        for name, value in spec.window_block(workload.time_field).items()
    }
    if spec.clock_scope == "key":
        header["group_by"] = workload.group_by()
    header["aggregate"] = dict(workload.aggregate)
    where = workload.where()
    if where is not None:
        header["where"] = where
    return header


def _item_lines(simulation: Simulation, drops: list[tuple[int, str]]) -> Iterator[str]:
    truth_of: dict[int, int] = {}

    def render(workload: Workload, table: Table) -> list[str]:
        for seq, label in zip(table["seq"].tolist(), table["truth"].tolist(), strict=True):
            if label:
                truth_of[seq] = label
        return payload_json(workload, table)

    def note(seq: int) -> None:
        label = truth_of.pop(seq, 0)
        if label:
            drops.append((seq, TRUTH_NAMES[label]))

    for kind, value in layout(simulation, render):
        if kind == "event":
            seq, at, payload = value
            note(seq)
            yield f'{{"event": {payload}, "at": {at}}}'
        elif kind == "batch":
            for seq, _, _ in value:
                note(seq)
            members = ", ".join(f'{{"event": {p}, "at": {at}}}' for _, at, p in value)
            yield f'{{"batch": [{members}]}}'
        else:
            yield f'{{"at": {value}}}'


def write_scenario(simulation: Simulation, path: Path, progress: Progress = no_progress) -> None:
    """A scenario file (JSON for ``.json``, else YAML) with the stream as ``input`` and the
    ground-truth drops as ``expect.drops``; ``windtunnel replay`` checks them."""
    header = scenario_header(simulation)
    drops: list[tuple[int, str]] = []
    counted = 0
    with path.open("w", encoding="utf-8") as out:
        as_json = path.suffix == ".json"
        if as_json:
            out.write(json.dumps(header)[:-1] + ', "input": [\n')
        else:
            out.write(yaml.safe_dump(header, sort_keys=False, width=100))
            out.write("input:\n")
        first = True
        for line in _item_lines(simulation, drops):
            if as_json:
                out.write(("" if first else ",\n") + line)
            else:
                out.write(f"  - {line}\n")
            first = False
            if simulation.summary.events > counted:
                progress(simulation.summary.events - counted)
                counted = simulation.summary.events
        drop_lines = [f'{{"seq": {s}, "reason": "{r}"}}' for s, r in drops]
        if as_json:
            out.write('\n], "expect": {"drops": [' + ", ".join(drop_lines) + "]}}\n")
        else:
            out.write("expect:\n  drops:" + (" []\n" if not drops else "\n"))
            out.writelines(f"    - {line}\n" for line in drop_lines)


def write_jsonl(simulation: Simulation, path: Path, progress: Progress = no_progress) -> None:
    """One JSON object per record: the Kafka record columns plus seq, arrival_ms, truth, tag."""
    columns = KafkaColumns(simulation)
    with path.open("wb") as out:
        for table in simulation.chunks():
            lines = columns.json_lines(table)
            out.write(line_bytes(lines))
            progress(len(lines))


def write_parquet(simulation: Simulation, path: Path, progress: Progress = no_progress) -> None:
    """A Parquet file with :data:`PARQUET_SCHEMA`, one row group per chunk."""
    columns = KafkaColumns(simulation)
    with pq.ParquetWriter(path, PARQUET_SCHEMA) as writer:
        for table in simulation.chunks():
            writer.write_table(columns.parquet_table(table))
            progress(len(table["seq"]))


def kafka_lines(simulation: Simulation, table: Table) -> list[str]:
    """A chunk as JSON lines of Kafka-shaped records (the ``jsonl`` format's lines)."""
    return KafkaColumns(simulation).json_lines(table).to_pylist()  # type: ignore[no-any-return]


def _chunk_bytes(
    simulation: Simulation,
    table: Table,
    columns: KafkaColumns | None,
    lines_of: Callable[[Simulation, Table], list[str]] | None,
) -> tuple[bytes | memoryview, list[int]]:
    """A chunk's lines back to back as UTF-8, and where each starts (then the end)."""
    if columns is not None:
        lines = columns.json_lines(table)
        return line_bytes(lines), line_offsets(lines).tolist()
    assert lines_of is not None
    encoded = [line.encode() for line in lines_of(simulation, table)]
    return b"".join(encoded), [0, *itertools.accumulate(map(len, encoded))]


def write_spark_dir(
    simulation: Simulation,
    path: Path,
    progress: Progress = no_progress,
    lines_of: Callable[[Simulation, Table], list[str]] | None = None,
) -> None:
    """One JSON lines file per batch (``batch-00000000.jsonl``, ...), modification times
    strictly increasing in batch order so Spark's file source (``maxFilesPerTrigger=1``)
    reads them as one micro-batch each, in order; ``_batches.json`` lists them (Spark
    ignores files starting with ``_``). ``lines_of`` renders a chunk (default: Kafka-shaped
    records, as :func:`kafka_lines`). Raises InvalidInput without batching knobs."""
    knobs = simulation.knobs
    if knobs.batch_size is None and knobs.batch_interval_ms is None:
        raise InvalidInput(
            "batch_size", None, "spark-dir needs batches", "give --batch-size or --batch-interval"
        )
    if path.exists() and not path.is_dir():
        raise InvalidInput(
            "out", str(path), "is an existing file; spark-dir writes a directory",
            "give a new or empty directory",
        )
    path.mkdir(parents=True, exist_ok=True)
    if any(path.iterdir()):
        raise InvalidInput(
            "out", str(path), "directory is not empty", "give a new or empty directory"
        )
    manifest: list[dict[str, Any]] = []
    last_mtime_ms = 0

    def close(entry: dict[str, Any]) -> None:
        nonlocal last_mtime_ms
        mtime_ms = max(last_mtime_ms + 1, entry["last_arrival_ms"])
        os.utime(path / entry["file"], ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
        last_mtime_ms = mtime_ms
        manifest.append(entry)

    columns = KafkaColumns(simulation) if lines_of is None else None
    current: dict[str, Any] | None = None
    out: IO[bytes] | None = None
    for table in simulation.chunks():
        data, ends = _chunk_bytes(simulation, table, columns, lines_of)
        count = len(ends) - 1
        batches, seqs, arrivals = table["batch"], table["seq"], table["arrival"]
        runs = [0, *(np.flatnonzero(batches[1:] != batches[:-1]) + 1).tolist(), count] if count else []
        for first, stop in itertools.pairwise(runs):  # records of one batch
            batch = int(batches[first])
            if current is None or current["batch"] != batch:
                if out is not None and current is not None:
                    out.close()
                    close(current)
                name = f"batch-{len(manifest):08d}.jsonl"
                current = {"batch": batch, "file": name, "records": 0, "first_seq": int(seqs[first])}
                out = (path / name).open("wb")
            assert out is not None
            out.write(data[ends[first] : ends[stop]])
            current["records"] += stop - first
            current["last_seq"] = int(seqs[stop - 1])
            current["last_arrival_ms"] = int(arrivals[stop - 1])
        progress(count)
    if out is not None and current is not None:
        out.close()
        close(current)
    (path / "_batches.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")


WRITERS: Final[dict[str, Callable[[Simulation, Path, Progress], None]]] = {
    "scenario": write_scenario,
    "jsonl": write_jsonl,
    "parquet": write_parquet,
    "spark-dir": write_spark_dir,
}
