"""Producing a generated stream to a Kafka cluster with confluent-kafka (librdkafka).

Connection and security settings come from a librdkafka properties file and from
``WINDTUNNEL_KAFKA_*`` environment variables (``WINDTUNNEL_KAFKA_SASL_PASSWORD`` is
``sasl.password``); they are never printed. Each record goes to the partition Kafka's
default partitioner gives its key (computed here, sent explicitly), with the record's
timestamp and headers. Pacing follows the virtual wall clock divided by ``speed``, or
none (as fast as possible). Every delivery report is checked: the report counts
deliveries, failures by error name, and records still undelivered at the end.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from windtunnel.oracle.model.errors import EngineUnavailable, InvalidInput
from windtunnel.oracle.model.extras import requires_extra
from windtunnel.simulator.records import kafka_records
from windtunnel.simulator.simulation import Simulation

ENV_PREFIX: Final = "WINDTUNNEL_KAFKA_"
LOGGER: Final = logging.getLogger("windtunnel.kafka")


def load_kafka_config(
    path: str | Path | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """librdkafka settings from a ``key=value`` file (``#`` comments) and the environment
    (environment wins). Raises InvalidInput for an unreadable file or a bad line, and when
    ``bootstrap.servers`` is missing; values are never echoed in messages."""
    config: dict[str, str] = {}
    if path is not None:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise InvalidInput(
                "kafka_config", str(path), f"cannot be read ({exc.strerror})", "check the path"
            ) from None
        for number, line in enumerate(lines, start=1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            name, sep, value = text.partition("=")
            if not sep or not name.strip():
                raise InvalidInput(
                    f"kafka_config line {number}",
                    "(hidden)",
                    "not a key=value line",
                    "write e.g. bootstrap.servers=host:9092",
                )
            config[name.strip()] = value.strip()
    env = os.environ if environ is None else environ
    for name, value in env.items():
        if name.startswith(ENV_PREFIX):
            config[name[len(ENV_PREFIX) :].lower().replace("_", ".")] = value
    if not config.get("bootstrap.servers"):
        raise InvalidInput(
            "bootstrap.servers",
            None,
            "is required to produce to Kafka",
            f"give --bootstrap, a --kafka-config file, or {ENV_PREFIX}BOOTSTRAP_SERVERS",
        )
    return config


@dataclass(slots=True)
class ProduceReport:
    """What happened to every record handed to the client (``produced``): ``delivered``,
    ``failed`` (refused at once or failed in its delivery report; counts by error name in
    ``errors``), or ``undelivered`` (still queued when the final flush timed out)."""

    produced: int = 0
    delivered: int = 0
    failed: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    undelivered: int = 0
    partitions: Counter[int] = field(default_factory=Counter)

    @property
    def ok(self) -> bool:
        return self.produced == self.delivered


def _client(kind: Callable[[dict[str, Any]], Any], config: Mapping[str, Any]) -> Any:
    """A confluent-kafka client; librdkafka's rejection of a setting becomes InvalidInput
    naming the property only (its value may be a secret)."""
    from confluent_kafka import KafkaException

    try:
        return kind({**config, "logger": LOGGER})
    except KafkaException as exc:
        message = str(exc.args[0].str())
        names = re.findall(r'property:? "([^"]+)"', message)
        raise InvalidInput(
            f"kafka setting {names[-1]}" if names else "kafka settings",
            "(hidden)",
            "rejected by librdkafka" + (": no such property" if "No such" in message else ""),
            "check the property name and value in your config file or environment",
        ) from None


def _ensure_topic(config: dict[str, Any], topic: str, partitions: int, timeout_s: float) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = _client(AdminClient, config)
    try:
        metadata = admin.list_topics(timeout=timeout_s)
    except KafkaException:
        raise EngineUnavailable(
            "cannot reach the Kafka cluster (bootstrap.servers from your settings); "
            "check that it runs and the settings are right"
        ) from None
    existing = metadata.topics.get(topic)
    if existing is not None and existing.error is None:
        have = len(existing.partitions)
        if have != partitions:
            raise InvalidInput(
                "partitions",
                partitions,
                f"topic {topic!r} has {have} partitions",
                f"pass --partitions {have} or use another topic",
            )
        return
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions)])
    try:
        futures[topic].result(timeout_s)
    except KafkaException as exc:
        raise EngineUnavailable(f"cannot create topic {topic!r}: {exc.args[0].name()}") from None


def produce(
    simulation: Simulation,
    config: Mapping[str, str],
    *,
    speed: float | None = None,
    progress: Callable[[int], None] | None = None,
    flush_timeout_s: float = 60.0,
    connect_timeout_s: float = 15.0,
    create_topic: bool = True,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> ProduceReport:
    """Send every record of ``simulation`` to ``knobs.topic``; returns the report.

    ``speed`` None sends as fast as possible; ``speed=2`` replays the virtual wall clock
    twice as fast. Raises EngineUnavailable when the cluster cannot be reached within
    ``connect_timeout_s``. librdkafka's log goes to the ``windtunnel.kafka`` logger.
    """
    with requires_extra("kafka", "producing to Kafka"):
        from confluent_kafka import KafkaException, Producer

    if speed is not None and speed <= 0:
        raise InvalidInput("speed", speed, "must be positive", "give e.g. 1 or 10, or omit it")
    knobs = simulation.knobs
    settings: dict[str, Any] = dict(config)
    if create_topic:
        _ensure_topic(settings, knobs.topic, knobs.partitions, connect_timeout_s)
    producer = _client(Producer, settings)
    report = ProduceReport()

    def delivered(err: Any, msg: Any) -> None:
        if err is not None:
            report.failed += 1
            report.errors[err.name()] += 1
            return
        report.delivered += 1
        report.partitions[msg.partition()] += 1

    started: float | None = None
    first_arrival: int | None = None
    for table in simulation.chunks():
        records = kafka_records(simulation, table)
        for key, value, part, stamp, headers, arrival in zip(
            records.key,
            records.value,
            records.partition,
            records.timestamp_ms,
            records.headers,
            records.arrival_ms,
            strict=True,
        ):
            if speed is not None:
                if started is None or first_arrival is None:
                    started, first_arrival = clock(), arrival
                wait = started + (arrival - first_arrival) / 1000 / speed - clock()
                if wait > 0:
                    sleep(wait)
            report.produced += 1
            while True:
                try:
                    producer.produce(
                        knobs.topic,
                        key=key.encode(),
                        value=value.encode(),
                        partition=part,
                        timestamp=stamp,
                        headers=[(k, v.encode()) for k, v in headers],
                        on_delivery=delivered,
                    )
                    break
                except BufferError:  # local queue full: serve delivery reports, retry
                    producer.poll(0.05)
                except KafkaException as exc:  # refused at once (e.g. too large): a failure
                    report.failed += 1
                    report.errors[exc.args[0].name()] += 1
                    break
            producer.poll(0)
        if progress is not None:
            progress(len(records))
    report.undelivered = producer.flush(flush_timeout_s)
    return report
