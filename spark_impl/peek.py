"""A look at a job's source from the driver before the job runs: how many records it holds
(for progress and for saying what was read) and a sample of its payloads (stock Spark
needs typed columns: :mod:`windtunnel.spark_impl.stock_job`).

Sources are what ``windtunnel generate`` writes (a ``spark-dir`` directory of JSON lines
files with their ``_batches.json`` manifest, a ``.jsonl`` or a ``.parquet`` file: one
record per row, the payload as JSON text in ``value``) and Kafka topics. Nothing here
imports pyspark.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

SAMPLE = 1000
"""Payloads read for a sample."""


def _record_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.glob("*.jsonl") if not p.name.startswith("_"))
    return [path]


def records_total(path: str | Path) -> int | None:
    """Records in a ``windtunnel generate`` output (None: not one of its formats)."""
    path = Path(path)
    if path.is_dir():
        manifest = path / "_batches.json"
        if manifest.is_file():
            return sum(int(entry["records"]) for entry in json.loads(manifest.read_text()))
        return sum(_count_lines(p) for p in _record_files(path))
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(path).metadata.num_rows)
    if path.suffix in (".jsonl", ".json", ".ndjson"):
        return _count_lines(path)
    return None


def _count_lines(path: Path) -> int:
    count = 0
    with path.open("rb") as lines:
        while block := lines.read(1 << 20):
            count += block.count(b"\n")
    return count


def _values(path: Path) -> Iterator[Any]:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        parquet = pq.ParquetFile(path)
        for batch in parquet.iter_batches(batch_size=SAMPLE, columns=["value"]):
            yield from batch.column(0).to_pylist()
        return
    for file in _record_files(path):
        with file.open(encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    yield json.loads(line).get("value")


def payloads_of(values: Iterator[Any], limit: int = SAMPLE) -> list[Mapping[str, Any]]:
    """The first ``limit`` values that hold a JSON object (text or bytes) as dicts."""
    found: list[Mapping[str, Any]] = []
    for value in values:
        if len(found) >= limit:
            break
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        try:
            payload = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            continue
        if isinstance(payload, dict):
            found.append(payload)
    return found


def records_sample(path: str | Path, limit: int = SAMPLE) -> list[Mapping[str, Any]]:
    """The payloads of the first ``limit`` records of a ``windtunnel generate`` output."""
    return payloads_of(_values(Path(path)), limit)


def kafka_sample(
    bootstrap: str, topic: str, config: Mapping[str, str] | None = None, limit: int = SAMPLE,
    timeout_s: float = 10.0,
) -> list[Mapping[str, Any]]:
    """The payloads of up to ``limit`` records from the start of ``topic``'s partitions
    (the ``kafka`` extra); [] for an empty or missing topic."""
    import time

    from confluent_kafka import Consumer, KafkaError
    from confluent_kafka import TopicPartition as Part

    consumer = Consumer({
        "group.id": "windtunnel-sample", **dict(config or {}), "bootstrap.servers": bootstrap,
        "enable.auto.commit": False, "enable.partition.eof": True,
        "auto.offset.reset": "earliest",
    })  # fmt: skip
    try:
        metadata = consumer.list_topics(topic, timeout=timeout_s).topics.get(topic)
        if metadata is None or metadata.error is not None or not metadata.partitions:
            return []
        parts = sorted(metadata.partitions)
        consumer.assign([Part(topic, p, -2) for p in parts])  # -2: the earliest offset
        values: list[Any] = []
        ended: set[int] = set()
        deadline = time.monotonic() + timeout_s
        while len(values) < limit and len(ended) < len(parts) and time.monotonic() < deadline:
            for message in consumer.consume(min(limit, 500), 0.5):
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        ended.add(int(message.partition() or 0))
                    continue
                values.append(message.value())
        return payloads_of(iter(values), limit)
    finally:
        consumer.close()
