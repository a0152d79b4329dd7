"""Which partitioner placed a Kafka topic's keyed records, found from a sample of them.

Kafka's Java client (and windtunnel's producer) puts a keyed record in partition
``toPositive(murmur2(key)) % partitions``; librdkafka's default (``consistent_random``: the
confluent-kafka, Go and .NET clients) in ``crc32(key) % partitions``. The production operator
slices keys the same way (``KeySlice.kafkaSlice``) so that a micro-batch read from such a
topic skips the shuffle. :func:`sample_keys` reads the first records of each partition
(confluent-kafka, on the driver, before the job); :func:`windtunnel.spark_impl.exact.plan.partitioner_of`
asks the JVM operator's own partitioners (``KeySlice.partitionerOf``) which one placed them. A topic
neither explains (a custom partitioner, records spread by something else) gets no Kafka
slicing.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

PARTITIONERS = ("murmur2", "crc32")
"""Kafka's Java client's, librdkafka's default."""


@dataclass(frozen=True, slots=True)
class KeySample:
    """A topic's partition count and (record key, partition) of records at its start."""

    partitions: int
    placed: tuple[tuple[bytes | None, int], ...]


def sample_keys(
    bootstrap: str, topic: str, options: Mapping[str, str] | None = None,
    per_partition: int = 50, timeout_s: float = 10.0,
) -> KeySample | None:
    """Up to ``per_partition`` records from the start of each partition of ``topic``; None
    when confluent-kafka is not installed, the topic does not exist, or the broker sends no
    metadata within ``timeout_s``."""
    try:
        from confluent_kafka import Consumer, KafkaError, KafkaException
        from confluent_kafka import TopicPartition as Part
    except ImportError:
        return None
    settings = {k.removeprefix("kafka."): v for k, v in (options or {}).items() if k.startswith("kafka.")}
    consumer = Consumer({
        **settings, "bootstrap.servers": bootstrap, "group.id": "windtunnel-partitioning",
        "enable.auto.commit": False, "enable.partition.eof": True,
    })  # fmt: skip
    try:
        try:
            found = consumer.list_topics(topic, timeout=timeout_s).topics.get(topic)
        except KafkaException:
            return None
        if found is None or found.error is not None or not found.partitions:
            return None
        parts = sorted(found.partitions)
        consumer.assign([Part(topic, p, -2) for p in parts])  # -2: the earliest offset
        placed: list[tuple[bytes | None, int]] = []
        counts = dict.fromkeys(parts, 0)
        ended: set[int] = set()
        deadline = time.monotonic() + timeout_s
        while len(ended) < len(parts) and time.monotonic() < deadline:
            for message in consumer.consume(500, 0.5):
                part = int(message.partition() or 0)
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        ended.add(part)
                    continue
                if counts[part] < per_partition:
                    counts[part] += 1
                    placed.append((message.key(), part))
                if counts[part] >= per_partition and part not in ended:
                    ended.add(part)
                    consumer.pause([Part(topic, part)])
        return KeySample(len(parts), tuple(placed))
    finally:
        consumer.close()

