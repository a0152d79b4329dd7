"""`windtunnel run SPEC kafka://...` without Spark's Kafka connector: the Python source
reads the topic, says so, and writes what the same records give from files."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli
from windtunnel.oracle.model.errors import EngineUnavailable
from windtunnel.simulator.localbroker import local_broker

SPEC = """
name: tiny
window: {size: 10s, on: ts, idle_timeout: 5s}
group_by: k
aggregate: {n: count()}
"""
#   seq  ts     k  arrival   (idle close of a and b at wall 12000, a late record of b)
RECORDS = [
    (0, 1000, "a", 1000),
    (1, 2000, "b", 2000),
    (2, 12000, "b", 12000),
    (3, 3000, "b", 13000),
]
TOPIC = "tiny"


@pytest.fixture(scope="module")
def broker() -> Iterator[str]:
    """A broker whose topic ``tiny`` holds RECORDS over two partitions (by key)."""
    kafka = pytest.importorskip("confluent_kafka")
    try:
        with local_broker() as bootstrap:
            producer = kafka.Producer({"bootstrap.servers": bootstrap, "batch.num.messages": 1})
            for seq, ts, key, arrival in RECORDS:
                producer.produce(
                    TOPIC, key=key.encode(), value=json.dumps({"ts": ts, "k": key}).encode(),
                    partition=0 if key == "a" else 1, timestamp=arrival,
                    headers=[("wt-seq", str(seq).encode())],
                )  # fmt: skip
            assert producer.flush(30) == 0
            yield bootstrap
    except EngineUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def spark() -> Any:
    from windtunnel.spark_impl.session import spark_session

    return spark_session(shuffle_partitions=2)


def outputs(spark: Any, path: Path) -> list[str]:
    rows = spark.read.json(str(path)).collect()
    return sorted(json.dumps(r.asDict(recursive=True), sort_keys=True) for r in rows)


@pytest.mark.spark
@pytest.mark.kafka
def test_run_reads_kafka_with_the_python_source(spark: Any, broker: str, tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC)
    stream = tmp_path / "stream.jsonl"
    stream.write_text(
        "".join(
            json.dumps({"value": json.dumps({"ts": ts, "k": k}), "seq": s, "arrival_ms": at}) + "\n"
            for s, ts, k, at in RECORDS
        )
    )
    spec = str(tmp_path / "spec.yaml")
    runner = CliRunner()
    result = runner.invoke(
        cli, ["run", spec, f"kafka://{broker}/{TOPIC}", "--out", str(tmp_path / "kafka")]
    )
    assert result.exit_code == 0, result.output
    assert f"kafka: reading topic {TOPIC} with windtunnel's Python Kafka source" in result.stderr
    assert "4 rows in" in result.stderr
    files = runner.invoke(cli, ["run", spec, str(stream), "--no-end", "--out", str(tmp_path / "f")])
    assert files.exit_code == 0, files.output
    from_kafka = outputs(spark, tmp_path / "kafka")
    assert len(from_kafka) == 3  # two idle closes and one late drop; no end of input
    assert from_kafka == outputs(spark, tmp_path / "f")


BATCHED = "batched"
BATCHED_RECORDS = 3000


@pytest.fixture(scope="module")
def batched(broker: str) -> str:
    """Topic ``batched``: BATCHED_RECORDS records produced with librdkafka's own batching
    (many records per record batch), over 3 partitions."""
    import confluent_kafka as kafka
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker})
    admin.create_topics([NewTopic(BATCHED, 3, 1)])[BATCHED].result(30)
    producer = kafka.Producer({"bootstrap.servers": broker, "linger.ms": 50})
    for seq in range(BATCHED_RECORDS):
        producer.produce(
            BATCHED, key=str(seq % 7).encode(), value=json.dumps({"ts": seq * 100, "k": seq % 7}).encode(),
            timestamp=seq * 100 + 1, headers=[("wt-seq", str(seq).encode())],
        )  # fmt: skip
    assert producer.flush(30) == 0
    return BATCHED


@pytest.mark.kafka
def test_the_end_of_a_partition_is_where_a_fetch_finds_it(broker: str, batched: str) -> None:
    """The local broker lists each partition's end at the start of its last record batch;
    a fetch from there finds the real end (what a reader trusting the listing missed)."""
    from windtunnel.spark_impl.kafka_ends import topic_ends

    ends = topic_ends(broker, batched)
    assert ends is not None
    assert ends.records == BATCHED_RECORDS
    assert sum(ends.listed.values()) < BATCHED_RECORDS  # the broker's fault is exercised here
    assert ends.unlisted == BATCHED_RECORDS - sum(ends.listed.values())


@pytest.mark.spark
@pytest.mark.kafka
def test_run_reads_every_delivered_record(spark: Any, broker: str, batched: str, tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC)
    result = CliRunner().invoke(
        cli, ["run", str(tmp_path / "spec.yaml"), f"kafka://{broker}/{batched}",
              "--out", str(tmp_path / "out")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"kafka: topic {batched} holds 3,000 records in 3 partitions" in result.stderr
    assert "kafka: the broker lists " in result.stderr  # and why the run reads past that
    assert f"{BATCHED_RECORDS} rows in, " in result.stderr.splitlines()[-3]
    assert "records the source held" not in result.stderr  # nothing missing
    assert "windows still open when the run stopped" in result.stderr  # Kafka never ends


def test_an_unreachable_broker_fails_at_once_naming_it(tmp_path: Path) -> None:
    import socket
    import time

    (tmp_path / "spec.yaml").write_text(SPEC)
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    started = time.monotonic()
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "spec.yaml"), f"kafka://127.0.0.1:{port}/t"])
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"windtunnel: cannot reach the Kafka broker at 127.0.0.1:{port}: Connection refused; "
        "start it (windtunnel broker starts a local one) or fix the address"
    )
    assert time.monotonic() - started < 10  # not the client's metadata timeouts
