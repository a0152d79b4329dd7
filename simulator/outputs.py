"""Writing generated streams: scenario files, JSON lines, Parquet, and a Spark stream directory.

All writers stream chunk by chunk (memory stays flat, except that a scenario keeps the
list of expected drops for its ``expect`` block) and give identical bytes for the same
seed and knobs. ``progress(n)`` is called with the number of records written per chunk.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from json.encoder import encode_basestring
from pathlib import Path
from typing import IO, Any, Final

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.timeparse import format_duration
from windtunnel.simulator.items import layout
from windtunnel.simulator.payloads import Table, Workload, payload_json
from windtunnel.simulator.records import Records, kafka_records
from windtunnel.simulator.simulation import Simulation
from windtunnel.simulator.truth import TRUTH_NAMES

Progress = Callable[[int], None]
FORMATS: Final = ("scenario", "jsonl", "parquet", "spark-dir")


def _quiet(n: int) -> None:
    """No progress reporting."""


def scenario_header(simulation: Simulation) -> dict[str, Any]:
    """The scenario file's keys before ``input``: name, profile, window, query."""
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


def write_scenario(simulation: Simulation, path: Path, progress: Progress = _quiet) -> None:
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


def _json_lines(records: Records) -> list[str]:
    topic = encode_basestring(records.topic)
    template = (
        '{"key":%s,"value":%s,"topic":' + topic.replace("%", "%%") + ',"partition":%d,'
        '"offset":%d,"timestamp":%d,"timestampType":' + str(records.timestamp_type) + ","
        '"headers":[%s],"seq":%d,"arrival_ms":%d,"truth":"%s","tag":"%s"}\n'
    )
    lines = []
    for key, value, part, offset, stamp, headers, seq, arrival, truth, tag in zip(
        records.key,
        records.value,
        records.partition,
        records.offset,
        records.timestamp_ms,
        records.headers,
        records.seq,
        records.arrival_ms,
        records.truth,
        records.tag,
        strict=True,
    ):
        header_text = ",".join(f'{{"key":"{k}","value":"{v}"}}' for k, v in headers)
        lines.append(
            template
            % (
                encode_basestring(key),
                encode_basestring(value),
                part,
                offset,
                stamp,
                header_text,
                seq,
                arrival,
                truth,
                tag,
            )
        )
    return lines


def _write_jsonl_records(records: Records, out: IO[str]) -> None:
    out.writelines(_json_lines(records))


def write_jsonl(simulation: Simulation, path: Path, progress: Progress = _quiet) -> None:
    """One JSON object per record: the Kafka record columns plus seq, arrival_ms, truth, tag."""
    with path.open("w", encoding="utf-8") as out:
        for table in simulation.chunks():
            records = kafka_records(simulation, table)
            _write_jsonl_records(records, out)
            progress(len(records))


PARQUET_SCHEMA: Final = pa.schema(
    [
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp", pa.timestamp("ms", tz="UTC")),
        ("timestampType", pa.int32()),
        (
            "headers",
            pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())])),
        ),
        ("seq", pa.int64()),
        ("arrival_ms", pa.int64()),
        ("truth", pa.string()),
        ("tag", pa.string()),
    ]
)
"""Spark's Kafka source columns (key/value binary) plus seq, arrival_ms, truth and tag."""


def _arrow(records: Records) -> pa.Table:
    headers = [[{"key": k, "value": v.encode()} for k, v in row] for row in records.headers]
    return pa.table(
        {
            "key": [k.encode() for k in records.key],
            "value": [v.encode() for v in records.value],
            "topic": [records.topic] * len(records),
            "partition": records.partition,
            "offset": records.offset,
            "timestamp": records.timestamp_ms,
            "timestampType": [records.timestamp_type] * len(records),
            "headers": headers,
            "seq": records.seq,
            "arrival_ms": records.arrival_ms,
            "truth": records.truth,
            "tag": records.tag,
        },
        schema=PARQUET_SCHEMA,
    )


def write_parquet(simulation: Simulation, path: Path, progress: Progress = _quiet) -> None:
    """A Parquet file with :data:`PARQUET_SCHEMA`, one row group per chunk."""
    with pq.ParquetWriter(path, PARQUET_SCHEMA) as writer:
        for table in simulation.chunks():
            records = kafka_records(simulation, table)
            writer.write_table(_arrow(records))
            progress(len(records))


def kafka_lines(simulation: Simulation, table: Table) -> list[str]:
    """A chunk as JSON lines of Kafka-shaped records (the ``jsonl`` format's lines)."""
    return _json_lines(kafka_records(simulation, table))


def write_spark_dir(
    simulation: Simulation,
    path: Path,
    progress: Progress = _quiet,
    lines_of: Callable[[Simulation, Table], list[str]] = kafka_lines,
) -> None:
    """One JSON lines file per batch (``batch-00000000.jsonl``, ...), modification times
    strictly increasing in batch order so Spark's file source (``maxFilesPerTrigger=1``)
    reads them as one micro-batch each, in order; ``_batches.json`` lists them (Spark
    ignores files starting with ``_``). ``lines_of`` renders a chunk (default: Kafka-shaped
    records). Raises InvalidInput without batching knobs."""
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

    current: dict[str, Any] | None = None
    out: IO[str] | None = None
    for table in simulation.chunks():
        lines = lines_of(simulation, table)
        batches = table["batch"].tolist()
        for line, batch, seq, arrival in zip(
            lines, batches, table["seq"].tolist(), table["arrival"].tolist(), strict=True
        ):
            if current is None or current["batch"] != batch:
                if out is not None and current is not None:
                    out.close()
                    close(current)
                name = f"batch-{len(manifest):08d}.jsonl"
                current = {"batch": batch, "file": name, "records": 0, "first_seq": seq}
                out = (path / name).open("w", encoding="utf-8")
            assert out is not None
            out.write(line)
            current["records"] += 1
            current["last_seq"] = seq
            current["last_arrival_ms"] = arrival
        progress(len(lines))
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
