"""Where a Kafka topic's partitions end, and whether its broker answers at all.

A reader plans a micro-batch up to each partition's end offset. Kafka's offset listing
(``ListOffsets`` with ``latest``) answers the high watermark: the offset after the last
record a consumer may read. A fetch answers it too, with the records. The local test
broker (Tansu, :mod:`windtunnel.simulator.localbroker`) lists the offset of the *first*
record of the last record batch instead, so a reader that trusts the listing never reads
that batch: 20,000 records produced with librdkafka's default batching were read as
19,290. :func:`fetched_ends` asks a fetch from the listed offset on: it returns the rest
of the last batch and end-of-partition at the true end. On Apache Kafka the two agree and
the fetch returns nothing.

:func:`probe_broker` refuses an address nothing listens on at once (a TCP connect),
instead of after the client's metadata timeouts. Nothing here imports pyspark; the
fetches need confluent-kafka (the ``kafka`` extra).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from windtunnel.oracle.model.errors import EngineUnavailable

PROBE_TIMEOUT_S = 5.0
"""How long a TCP connect to a bootstrap server may take."""
FETCH_TIMEOUT_S = 10.0
"""How long :func:`fetched_ends` waits for every partition's end-of-partition."""

TopicPartition = tuple[str, int]


def bootstrap_addresses(bootstrap: str) -> list[tuple[str, int]]:
    """``host:port[,host:port]`` as ``[(host, port)]``; raises EngineUnavailable for a
    server without a numeric port."""
    addresses = []
    for server in bootstrap.split(","):
        server = server.strip().rsplit("://", 1)[-1]
        host, _, port = server.rpartition(":")
        if not host or not port.isdigit():
            raise EngineUnavailable(
                f"a Kafka bootstrap server is HOST:PORT: {server!r}; fix the address"
            )
        addresses.append((host.strip("[]"), int(port)))
    return addresses


def probe_broker(bootstrap: str, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Return when one of the bootstrap servers accepts a TCP connection; else raise
    EngineUnavailable naming them and why the last refused."""
    why = "no address"
    for host, port in bootstrap_addresses(bootstrap):
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                return
        except OSError as exc:
            why = exc.strerror or str(exc) or type(exc).__name__
    raise EngineUnavailable(
        f"cannot reach the Kafka broker at {bootstrap}: {why}; start it (windtunnel broker "
        "starts a local one) or fix the address"
    )


def fetched_ends(
    consumer: Any, listed: Mapping[TopicPartition, int], timeout_s: float = FETCH_TIMEOUT_S
) -> dict[TopicPartition, int]:
    """Each partition's end offset as a fetch finds it: ``consumer`` (confluent-kafka, with
    ``enable.partition.eof``) reads from the ``listed`` end to end-of-partition; its
    offset is the end (never below the listed one). A partition that reports no end
    within ``timeout_s`` keeps the offset after the last record seen. The consumer's
    assignment is cleared afterwards."""
    from confluent_kafka import KafkaError
    from confluent_kafka import TopicPartition as Part

    ends = dict(listed)
    if not listed:
        return ends
    waiting = set(listed)
    consumer.assign([Part(topic, partition, offset) for (topic, partition), offset in listed.items()])
    try:
        deadline = time.monotonic() + timeout_s
        while waiting and time.monotonic() < deadline:
            for message in consumer.consume(1000, 0.5):
                key = (message.topic(), message.partition())
                error = message.error()
                if error is not None and error.code() == KafkaError._PARTITION_EOF:
                    ends[key] = max(ends.get(key, 0), message.offset())
                    waiting.discard(key)
                elif error is None and key in ends:
                    ends[key] = max(ends[key], message.offset() + 1)
    finally:
        consumer.unassign()
    return ends


@dataclass(frozen=True, slots=True)
class TopicEnds:
    """A topic's partitions: first offsets, ends as listed, ends as fetched."""

    topic: str
    first: Mapping[int, int]
    listed: Mapping[int, int]
    fetched: Mapping[int, int]

    @property
    def records(self) -> int:
        """Records between each partition's first offset and its fetched end."""
        return sum(self.fetched[p] - self.first.get(p, 0) for p in self.fetched)

    @property
    def unlisted(self) -> int:
        """Records past the listed ends: what a reader trusting the listing would miss."""
        return sum(self.fetched[p] - self.listed.get(p, 0) for p in self.fetched)


def topic_ends(
    bootstrap: str, topic: str, config: Mapping[str, str] | None = None,
    timeout_s: float = FETCH_TIMEOUT_S,
) -> TopicEnds | None:
    """The partitions of ``topic`` on the broker (None: the topic does not exist). Raises
    EngineUnavailable when the broker does not answer within ``timeout_s``."""
    from confluent_kafka import Consumer, KafkaException
    from confluent_kafka import TopicPartition as Part

    probe_broker(bootstrap)
    consumer = Consumer({
        "group.id": "windtunnel-topic-ends", **dict(config or {}),
        "bootstrap.servers": bootstrap, "enable.auto.commit": False,
        "enable.partition.eof": True, "auto.offset.reset": "earliest",
    })  # fmt: skip
    try:
        try:
            metadata = consumer.list_topics(timeout=timeout_s).topics
        except KafkaException:
            raise EngineUnavailable(
                f"the Kafka broker at {bootstrap} accepts connections but sends no metadata "
                f"within {timeout_s:.0f} s; check that it is a Kafka broker"
            ) from None
        if topic not in metadata or metadata[topic].error is not None:
            return None
        first: dict[int, int] = {}
        listed: dict[int, int] = {}
        for partition in sorted(metadata[topic].partitions):
            low, high = consumer.get_watermark_offsets(Part(topic, partition), timeout=timeout_s)
            first[partition], listed[partition] = int(low), int(high)
        fetched = fetched_ends(consumer, {(topic, p): o for p, o in listed.items()}, timeout_s)
        return TopicEnds(topic, first, listed, {p: fetched[(topic, p)] for p in listed})
    finally:
        consumer.close()
