"""Kafka topics as a Spark stream without Spark's JVM connector: a Python data source.

``spark.readStream.format("windtunnel-kafka")`` reads topics with confluent-kafka
(librdkafka) through PySpark's Python Data Source API and gives the rows Spark's
``format("kafka")`` gives (:data:`KAFKA_DDL`, plus ``headers`` with ``includeHeaders``),
so downstream code is the same either way. Options, as Spark's Kafka source names them:
``kafka.bootstrap.servers`` and ``subscribe`` (comma list) are required;
``startingOffsets`` (``earliest``, the default, ``latest``, or JSON such as
``{"t": {"0": 23, "1": -2}}`` with -2 earliest and -1 latest), ``maxOffsetsPerTrigger``,
``includeHeaders``, ``failOnDataLoss`` and ``kafkaConsumer.pollTimeoutMs``; every other
``kafka.*`` option goes to librdkafka without the prefix.

The source's offset is ``{"topic": {"partition": next offset}}``; a micro-batch reads
the half-open offset range ``[start, end)`` of every topic-partition, one Spark task
each. Spark writes the end offsets to its offset log before the batch runs and ranges
are deterministic, so a query restarted from its checkpoint re-reads exactly the
records of an unfinished batch: with an idempotent sink (Spark's file sink) every
record lands once. Partitions that appear later start at their earliest offset.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any, Final

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from windtunnel.oracle.model.errors import EngineUnavailable, InvalidInput, WindtunnelError
from windtunnel.spark_impl.jobs.kafka_ends import fetched_ends
from windtunnel.spark_impl.jobs.kafka_options import (
    EARLIEST,
    LATEST,
    NAME,
    KafkaOptions,
    OffsetRange,
    Offsets,
    flag,
    limit_offsets,
    parse_options,
)

KAFKA_DDL: Final = (
    "key binary, value binary, topic string, partition int, offset long, "
    "timestamp timestamp, timestampType int"
)
"""The columns of Spark's Kafka source; ``includeHeaders`` adds :data:`HEADERS_DDL`."""
HEADERS_DDL: Final = "headers array<struct<key: string, value: binary>>"
METADATA_TIMEOUT_S: Final = 30.0
ROWS_PER_ARROW_BATCH: Final = 10_000
_TIMESTAMP_TYPES: Final = {0: -1, 1: 0, 2: 1}
"""librdkafka timestamp type -> Spark's ``timestampType`` (-1 none, 0 CreateTime, 1 LogAppendTime)."""


class KafkaDataLost(WindtunnelError, RuntimeError):
    """Records of a planned offset range are gone from the topic (retention, deletion)."""


class _RangePartition(InputPartition):  # type: ignore[misc]
    def __init__(self, offsets: OffsetRange) -> None:
        super().__init__(offsets)
        self.offsets = offsets


def _consumer(options: KafkaOptions) -> Any:
    """A librdkafka consumer (assigned partitions only: it never joins a group)."""
    from confluent_kafka import Consumer, KafkaException

    settings = {
        "group.id": "windtunnel-kafka-source",
        **dict(options.config),
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "auto.offset.reset": "earliest",
    }
    try:
        return Consumer(settings)
    except KafkaException as exc:  # values may be secrets: name the setting only
        raise InvalidInput(
            "kafka.* options", "(hidden)", f"rejected by librdkafka: {exc.args[0].str()}",
            "give librdkafka setting names (see its CONFIGURATION.md) after the kafka. prefix",
        ) from None  # fmt: skip


def _watermarks(consumer: Any, topic: str, partition: int) -> tuple[int, int]:
    from confluent_kafka import KafkaException, TopicPartition

    try:
        low, high = consumer.get_watermark_offsets(
            TopicPartition(topic, partition), timeout=METADATA_TIMEOUT_S
        )
    except KafkaException as exc:
        raise EngineUnavailable(
            f"cannot read offsets of topic={topic} partition={partition}: "
            f"{exc.args[0].name()}; check kafka.bootstrap.servers and that the cluster runs"
        ) from None
    return int(low), int(high)


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):  # type: ignore[misc]
    """Offsets are per-partition next offsets; see the module docstring."""

    def __init__(self, options: KafkaOptions) -> None:
        self.options = options
        self._target: Offsets | None = None
        self._metadata: Any = None

    def __getstate__(self) -> dict[str, Any]:  # the consumer stays on the driver
        return {"options": self.options, "_target": self._target, "_metadata": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _client(self) -> Any:
        if self._metadata is None:
            self._metadata = _consumer(self.options)
        return self._metadata

    def _partitions(self) -> dict[str, list[int]]:
        """Partition numbers of each subscribed topic (a missing topic has none yet)."""
        from confluent_kafka import KafkaException

        try:
            topics = self._client().list_topics(timeout=METADATA_TIMEOUT_S).topics
        except KafkaException:
            raise EngineUnavailable(
                "cannot reach the Kafka cluster of kafka.bootstrap.servers within "
                f"{METADATA_TIMEOUT_S:.0f} s; check the address and that the cluster runs"
            ) from None
        return {
            t: sorted(topics[t].partitions) if t in topics and topics[t].error is None else []
            for t in self.options.topics
        }

    def _bounds(self, which: int) -> Offsets:
        """Every partition's earliest (``which`` 0) or next-to-write offset (1); the latter
        as a fetch finds it (:func:`~windtunnel.spark_impl.jobs.kafka_ends.fetched_ends`: a
        broker may list less than it holds)."""
        client = self._client()
        found = {
            (topic, p): _watermarks(client, topic, p)[which]
            for topic, parts in self._partitions().items()
            for p in parts
        }
        if which == 1:
            found = fetched_ends(client, found)
        out: Offsets = {topic: {} for topic in self.options.topics}
        for (topic, p), offset in found.items():
            out[topic][str(p)] = offset
        return out

    def initialOffset(self) -> Offsets:
        if self.options.starting in ("earliest", "latest"):
            return self._bounds(0 if self.options.starting == "earliest" else 1)
        wanted = self.options.starting_json()
        result: Offsets = {}
        for topic, parts in self._partitions().items():
            given = wanted.get(topic, {})
            missing = [p for p in parts if str(p) not in given] if topic in wanted else []
            if missing:
                raise InvalidInput(
                    "startingOffsets", self.options.starting,
                    f"gives no offset for partitions {missing} of topic {topic}",
                    "list every partition (-2 earliest, -1 latest) or use earliest",
                )  # fmt: skip
            result[topic] = {}
            for p in parts:
                offset = given.get(str(p), EARLIEST)
                if offset == EARLIEST:
                    offset = _watermarks(self._client(), topic, p)[0]
                elif offset == LATEST:
                    listed = {(topic, p): _watermarks(self._client(), topic, p)[1]}
                    offset = fetched_ends(self._client(), listed)[(topic, p)]
                result[topic][str(p)] = offset
        return result

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self._bounds(1)

    def getDefaultReadLimit(self) -> Any:
        cap = self.options.max_offsets_per_trigger
        return ReadAllAvailable() if cap is None else ReadMaxRows(cap)

    def latestOffset(self, start: Offsets, limit: Any) -> Offsets:
        latest = self._target if self._target is not None else self._bounds(1)
        merged: Offsets = {topic: dict(parts) for topic, parts in start.items()}
        for topic, parts in latest.items():  # never behind start: offsets only grow
            mine = merged.setdefault(topic, {})
            for part, end in parts.items():
                mine[part] = max(end, mine.get(part, 0))
        if isinstance(limit, ReadMaxRows):
            return limit_offsets(start, merged, int(limit.max_rows))
        return merged

    def reportLatestOffset(self) -> Offsets | None:
        return self._target

    def partitions(self, start: Offsets, end: Offsets) -> Sequence[InputPartition]:
        ranges: list[InputPartition] = []
        for topic, parts in sorted(end.items()):
            for part, stop in sorted(parts.items(), key=lambda item: int(item[0])):
                first = start.get(topic, {}).get(part)
                if first is None:  # a partition that appeared: from its earliest record
                    first = min(_watermarks(self._client(), topic, int(part))[0], stop)
                if stop > first:
                    ranges.append(_RangePartition(OffsetRange(topic, int(part), first, stop)))
        return ranges

    def read(self, partition: InputPartition) -> Iterator[Any]:
        yield from read_range(self.options, partition.offsets)

    def commit(self, end: Offsets) -> None:
        pass

    def stop(self) -> None:
        if self._metadata is not None:
            self._metadata.close()
            self._metadata = None


def read_range(options: KafkaOptions, offsets: OffsetRange) -> Iterator[Any]:
    """The records of ``offsets`` as Arrow record batches with the source's columns.

    Raises KafkaDataLost when records of the range are gone and ``failOnDataLoss`` is on
    (off: what is left is read), EngineUnavailable when no record comes for
    ``kafkaConsumer.pollTimeoutMs``.
    """
    from confluent_kafka import KafkaError, TopicPartition

    consumer = _consumer(options)
    try:
        low, _high = _watermarks(consumer, offsets.topic, offsets.partition)
        position = offsets.start
        if low > position:
            _lost(options, offsets, position, low)
            position = low
        if position >= offsets.end:
            return
        consumer.assign([TopicPartition(offsets.topic, offsets.partition, position)])
        columns = _Columns(options.include_headers)
        deadline = time.monotonic() + options.poll_timeout_ms / 1000
        while position < offsets.end:
            messages = consumer.consume(min(offsets.end - position, ROWS_PER_ARROW_BATCH), 1.0)
            for message in messages:
                error = message.error()
                if error is not None and error.code() == KafkaError._PARTITION_EOF:
                    if message.offset() < offsets.end:  # the range ends beyond the log
                        _lost(options, offsets, message.offset(), offsets.end)
                        position = offsets.end
                    continue
                if error is not None:
                    raise EngineUnavailable(
                        f"reading topic={offsets.topic} partition={offsets.partition} "
                        f"failed: {error.name()}; check the cluster and kafka.* options"
                    )
                if message.offset() >= offsets.end:
                    position = offsets.end
                    break
                columns.add(message)
                position = message.offset() + 1
            if messages:
                deadline = time.monotonic() + options.poll_timeout_ms / 1000
            elif time.monotonic() > deadline:
                raise EngineUnavailable(
                    f"no record of topic={offsets.topic} partition={offsets.partition} at "
                    f"offset {position} within kafkaConsumer.pollTimeoutMs="
                    f"{options.poll_timeout_ms}; check that the cluster runs or raise the timeout"
                )
            if len(columns) >= ROWS_PER_ARROW_BATCH:
                yield columns.flush()
        if len(columns):
            yield columns.flush()
    finally:
        consumer.close()


def _lost(options: KafkaOptions, offsets: OffsetRange, first: int, stop: int) -> None:
    if options.fail_on_data_loss:
        raise KafkaDataLost(
            f"records [{first}, {stop}) of topic={offsets.topic} "
            f"partition={offsets.partition} are no longer in the topic (retention or "
            "deletion); set failOnDataLoss=false to read what is left"
        )


class _Columns:
    """Messages gathered column by column, handed out as Arrow record batches."""

    def __init__(self, include_headers: bool) -> None:
        self.include_headers = include_headers
        self._reset()

    def _reset(self) -> None:
        self.values: dict[str, list[Any]] = {
            name: [] for name in ("key", "value", "topic", "partition", "offset", "timestamp")
        }
        self.values["timestampType"] = []
        self.values["headers"] = []

    def __len__(self) -> int:
        return len(self.values["offset"])

    def add(self, message: Any) -> None:
        kind, stamp_ms = message.timestamp()
        column = self.values
        column["key"].append(message.key())
        column["value"].append(message.value())
        column["topic"].append(message.topic())
        column["partition"].append(message.partition())
        column["offset"].append(message.offset())
        column["timestamp"].append(stamp_ms * 1000 if kind else None)
        column["timestampType"].append(_TIMESTAMP_TYPES.get(kind, -1))
        if self.include_headers:
            column["headers"].append([{"key": k, "value": v} for k, v in message.headers() or ()])

    def flush(self) -> Any:
        import pyarrow as pa

        column = self.values
        arrays = [
            pa.array(column["key"], pa.binary()),
            pa.array(column["value"], pa.binary()),
            pa.array(column["topic"], pa.string()),
            pa.array(column["partition"], pa.int32()),
            pa.array(column["offset"], pa.int64()),
            pa.array(column["timestamp"], pa.timestamp("us", tz="UTC")),
            pa.array(column["timestampType"], pa.int32()),
        ]
        names = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
        if self.include_headers:
            header = pa.struct([("key", pa.string()), ("value", pa.binary())])
            arrays.append(pa.array(column["headers"], pa.list_(header)))
            names.append("headers")
        self._reset()
        return pa.RecordBatch.from_arrays(arrays, names=names)


class KafkaPythonSource(DataSource):  # type: ignore[misc]
    """``spark.readStream.format("windtunnel-kafka")``: Kafka without the connector jar."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        headers = flag(
            {str(k).lower(): v for k, v in self.options.items()}, "includeHeaders", False
        )
        return KAFKA_DDL + (f", {HEADERS_DDL}" if headers else "")

    def streamReader(self, schema: Any) -> KafkaStreamReader:
        return KafkaStreamReader(parse_options(self.options))


def register(spark: Any) -> str:
    """Register the source with ``spark``; returns its format name (:data:`NAME`)."""
    spark.dataSource.register(KafkaPythonSource)
    return NAME
