"""What a Python Kafka read is asked for: the data source's options, parsed as Spark's Kafka
source names them, and the offset ranges a micro-batch reads
(:mod:`windtunnel.spark_impl.jobs.kafka_python` reads them)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from windtunnel.oracle.model.errors import InvalidInput

NAME: Final = "windtunnel-kafka"
"""The format name of windtunnel's Python Kafka source."""
OPTIONS: Final = (
    "subscribe",
    "startingOffsets",
    "maxOffsetsPerTrigger",
    "includeHeaders",
    "failOnDataLoss",
    "kafkaConsumer.pollTimeoutMs",
)
"""Options besides ``kafka.*``; Spark's Kafka source documents them under the same names."""
EARLIEST, LATEST = -2, -1
"""``startingOffsets`` JSON values: a partition's earliest and latest offset."""

Offsets = dict[str, dict[str, int]]
"""``{"topic": {"partition": next offset}}`` (partition numbers as strings, as JSON keys)."""


def flag(options: Mapping[str, str], name: str, default: bool) -> bool:
    """Option ``name`` (``true``/``false``, any case) of lower-cased ``options``; raises
    InvalidInput for another value."""
    text = str(options.get(name.lower(), str(default))).strip().lower()
    if text not in ("true", "false"):
        raise InvalidInput(name, text, "must be true or false", f"set {name} to true or false")
    return text == "true"


def positive(options: Mapping[str, str], name: str, default: int | None) -> int | None:
    """Option ``name`` of lower-cased ``options`` as a positive integer (``default`` when
    absent); raises InvalidInput for another value."""
    text = options.get(name.lower())
    if text is None:
        return default
    try:
        value = int(str(text).strip())
    except ValueError:
        value = 0
    if value < 1:
        raise InvalidInput(name, text, "must be a positive integer", f"give e.g. {name}=10000")
    return value


@dataclass(frozen=True, slots=True)
class KafkaOptions:
    """Validated source options; ``config`` holds the librdkafka settings (``kafka.`` removed)."""

    config: tuple[tuple[str, str], ...]
    topics: tuple[str, ...]
    starting: str = "earliest"
    max_offsets_per_trigger: int | None = None
    include_headers: bool = False
    fail_on_data_loss: bool = True
    poll_timeout_ms: int = 120_000

    def __post_init__(self) -> None:
        if not dict(self.config).get("bootstrap.servers"):
            raise InvalidInput(
                "kafka.bootstrap.servers", None, "is required", "set it to HOST:PORT[,HOST:PORT]"
            )
        if not self.topics or any(not t for t in self.topics):
            raise InvalidInput(
                "subscribe", ",".join(self.topics), "names no topic", "give e.g. subscribe=events"
            )
        if self.starting not in ("earliest", "latest"):
            self.starting_json()

    def starting_json(self) -> Offsets:
        """``startingOffsets`` given as JSON; raises InvalidInput when it is malformed."""
        fix = 'write {"topic": {"0": 23, "1": -2}} (-2 earliest, -1 latest)'
        try:
            data = json.loads(self.starting)
        except ValueError:
            raise InvalidInput(
                "startingOffsets", self.starting, "not earliest, latest or JSON", fix
            ) from None
        if not isinstance(data, dict) or not all(
            isinstance(parts, dict)
            and all(p.isdigit() and isinstance(o, int) and o >= EARLIEST for p, o in parts.items())
            for parts in data.values()
        ):
            raise InvalidInput(
                "startingOffsets", self.starting, "not topic -> partition -> offset", fix
            )
        unknown = sorted(set(data) - set(self.topics))
        if unknown:
            raise InvalidInput(
                "startingOffsets", self.starting, f"names unsubscribed topics {unknown}", fix
            )
        return {topic: dict(parts) for topic, parts in data.items()}


def parse_options(options: Mapping[str, str]) -> KafkaOptions:
    """KafkaOptions from a data source's options (names case-insensitive, as Spark's).

    Raises InvalidInput for an unknown option (``assign`` and ``subscribePattern`` are not
    supported), a missing server or topic, or a bad value.
    """
    known = {name.lower(): name for name in OPTIONS}
    given = {str(k).lower(): str(v) for k, v in options.items()}
    config = tuple(
        sorted((k[len("kafka.") :], v) for k, v in given.items() if k.startswith("kafka."))
    )
    for key in given:
        if not key.startswith("kafka.") and key not in known and key != "path":
            raise InvalidInput(
                "option", key, f"not an option of the {NAME} source",
                f"use kafka.<librdkafka setting> or one of {', '.join(OPTIONS)}",
            )  # fmt: skip
    return KafkaOptions(
        config=config,
        topics=tuple(t.strip() for t in given.get("subscribe", "").split(",") if t.strip()),
        starting=given.get("startingoffsets", "earliest").strip(),
        max_offsets_per_trigger=positive(given, "maxOffsetsPerTrigger", None),
        include_headers=flag(given, "includeHeaders", False),
        fail_on_data_loss=flag(given, "failOnDataLoss", True),
        poll_timeout_ms=positive(given, "kafkaConsumer.pollTimeoutMs", 120_000) or 120_000,
    )


def limit_offsets(start: Offsets, latest: Offsets, max_rows: int) -> Offsets:
    """``latest`` cut so at most ``max_rows`` records lie between ``start`` and it.

    Each partition gets a share proportional to its backlog (floored); the remainder goes
    one by one to the largest remaining backlogs (ties by topic, partition), so the cut is
    deterministic and every call with a backlog advances. Partitions missing from
    ``start`` count from 0 (their earliest offset is resolved when planning).
    """
    lags = {
        (topic, part): end - start.get(topic, {}).get(part, 0)
        for topic, parts in latest.items()
        for part, end in parts.items()
    }
    total = sum(max(lag, 0) for lag in lags.values())
    if total <= max_rows:
        return latest
    shares = {tp: max(lag, 0) * max_rows // total for tp, lag in lags.items()}
    spare = max_rows - sum(shares.values())
    for tp in sorted(lags, key=lambda tp: (-(lags[tp] - shares[tp]), tp))[:spare]:
        shares[tp] += 1
    return {
        topic: {
            part: min(end, start.get(topic, {}).get(part, 0) + shares[(topic, part)])
            for part, end in parts.items()
        }
        for topic, parts in latest.items()
    }


@dataclass(frozen=True, slots=True)
class OffsetRange:
    """Records ``[start, end)`` of one topic-partition: one Spark task."""

    topic: str
    partition: int
    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise InvalidInput(
                "offset range", f"[{self.start}, {self.end})", "needs 0 <= start <= end",
                "this is a bug in the planner; report it",
            )  # fmt: skip
