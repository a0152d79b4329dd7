"""The Python Kafka data source: Kafka into Spark without the connector jar.

Records come from windtunnel's producer into the local Kafka-wire broker (Tansu, not
Apache Kafka; ``batch.num.messages=1`` because its high watermark otherwise stops at
the start of the last record batch) and are read back through the production operator.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from windtunnel.oracle.engine import run
from windtunnel.oracle.model.errors import EngineUnavailable, InvalidInput
from windtunnel.oracle.model.results import Output, to_jsonl_line
from windtunnel.oracle.model.stream import Event
from windtunnel.simulator.localbroker import local_broker
from windtunnel.simulator.outputs import write_jsonl, write_scenario
from windtunnel.simulator.records import kafka_records as kafka_records_of
from windtunnel.simulator.workloads import simulate
from windtunnel.spark_impl.job import JobSpec, Sink, load_job_spec
from windtunnel.spark_impl.jobs.kafka_options import limit_offsets, parse_options

EVENTS = 360
TOPIC = "payments"


def simulation() -> Any:
    """Payments by user over 3 partitions, 5% late; record timestamps are arrival times."""
    return simulate(
        "payments", events=EVENTS, seed=9, batch_size=120, late_fraction=0.05,
        topic=TOPIC, partitions=3, timestamp_type="LogAppendTime",
    )  # fmt: skip


@pytest.fixture(scope="module")
def broker() -> Iterator[str]:
    """A broker holding the simulated stream in topic ``payments``."""
    pytest.importorskip("confluent_kafka")
    from windtunnel.simulator.producer import produce

    try:
        with local_broker() as bootstrap:
            report = produce(
                simulation(), {"bootstrap.servers": bootstrap, "batch.num.messages": "1"}
            )
            assert report.ok and report.delivered == EVENTS
            assert len(report.partitions) == 3
            yield bootstrap
    except EngineUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kafka-generated")
    write_scenario(simulation(), root / "scenario.yaml")
    write_jsonl(simulation(), root / "records.jsonl")
    return root


def lines(outputs: list[Output]) -> list[str]:
    return sorted(to_jsonl_line(o) for o in outputs)


def oracle_outputs(spec: JobSpec, root: Path) -> list[Output]:
    """The oracle over the same records; Kafka has no end of input, so no end flushes."""
    records = [json.loads(line) for line in (root / "records.jsonl").read_text().splitlines()]
    items = [Event(r["seq"], json.loads(r["value"]), r["arrival_ms"]) for r in records]
    outputs = run(
        spec.query,
        items,
        rules=spec.rules,
        time_unit_ms=spec.time_unit_ms,
        start_wall_ms=spec.start_wall_ms,
    )
    return [o for o in outputs if getattr(o, "reason", None) != "end_of_input"]


# ---------------------------------------------------------------- options and offsets


def test_options_read_like_sparks_kafka_source() -> None:
    options = parse_options(
        {"kafka.bootstrap.servers": "h:1", "SUBSCRIBE": "a, b", "maxOffsetsPerTrigger": "50",
         "includeHeaders": "true", "kafka.security.protocol": "PLAINTEXT"}
    )  # fmt: skip
    assert options.topics == ("a", "b")
    assert options.max_offsets_per_trigger == 50
    assert options.include_headers and options.fail_on_data_loss
    assert dict(options.config) == {"bootstrap.servers": "h:1", "security.protocol": "PLAINTEXT"}


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"subscribe": ""}, "subscribe"),
        ({"kafka.bootstrap.servers": ""}, "kafka.bootstrap.servers"),
        ({"subscribePattern": "a.*"}, "option"),
        ({"maxOffsetsPerTrigger": "0"}, "maxOffsetsPerTrigger"),
        ({"failOnDataLoss": "maybe"}, "failOnDataLoss"),
        ({"startingOffsets": "{nope"}, "startingOffsets"),
        ({"startingOffsets": '{"other": {"0": 1}}'}, "startingOffsets"),
        ({"startingOffsets": '{"t": {"0": -3}}'}, "startingOffsets"),
    ],
)
def test_bad_options_name_the_option(extra: dict[str, str], field: str) -> None:
    given = {"kafka.bootstrap.servers": "h:1", "subscribe": "t"} | extra
    with pytest.raises(InvalidInput) as caught:
        parse_options(given)
    assert caught.value.field == field


def test_limit_offsets_splits_the_cap_by_backlog() -> None:
    start = {"t": {"0": 10, "1": 0, "2": 5}}
    latest = {"t": {"0": 110, "1": 50, "2": 5}, "u": {"0": 50}}
    cut = limit_offsets(start, latest, 100)
    moved = {(t, p): cut[t][p] - start.get(t, {}).get(p, 0) for t in cut for p in cut[t]}
    assert sum(moved.values()) == 100
    assert moved == {("t", "0"): 50, ("t", "1"): 25, ("t", "2"): 0, ("u", "0"): 25}
    assert limit_offsets(start, latest, 1000) == latest
    assert sum(limit_offsets(start, latest, 1)["t"].values()) == 10 + 0 + 5 + 1


# ---------------------------------------------------------------- against the broker


def produce_records(broker: str, topic: str, seqs: range) -> None:
    """The simulated records with seq in ``seqs`` into ``topic`` (4 partitions), keyed by
    user, where librdkafka's default partitioner puts them."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker})
    if topic not in admin.list_topics(timeout=10).topics:
        admin.create_topics([NewTopic(topic, num_partitions=4)])[topic].result(10)
    producer = Producer({"bootstrap.servers": broker, "batch.num.messages": 1})
    sim = simulation()
    for table in sim.chunks():
        records = kafka_records_of(sim, table)
        for seq, key, value, stamp, headers in zip(
            records.seq, records.key, records.value, records.timestamp_ms, records.headers,
            strict=True,
        ):  # fmt: skip
            if seq in seqs:
                producer.produce(
                    topic, key=key.encode(), value=value.encode(), timestamp=stamp,
                    headers=[(k, v.encode()) for k, v in headers],
                )  # fmt: skip
    assert producer.flush(30) == 0


def small_windows(generated: Path) -> JobSpec:
    import dataclasses

    spec = load_job_spec(generated / "scenario.yaml")
    window = dataclasses.replace(spec.query.window, size_ms=200, idle_timeout_ms=150)
    return dataclasses.replace(spec, query=dataclasses.replace(spec.query, window=window))


def written(spark: Any, path: Path) -> list[str]:
    from windtunnel.spark_impl.schema import OUTPUT_DDL, outputs_in_order

    frame = spark.read.schema(OUTPUT_DDL).json(str(path))
    return lines(outputs_in_order(r.asDict() for r in frame.collect()))


@pytest.mark.spark
@pytest.mark.kafka
def test_python_reader_through_run_job_equals_the_oracle(
    spark: Any, broker: str, generated: Path, tmp_path: Path
) -> None:
    """Three partitions read in one micro-batch: Spark tasks interleave the partitions,
    the operator orders rows by their ``wt-seq``; outputs equal the oracle's."""
    from windtunnel.spark_impl.job import kafka_source, run_job

    spec = small_windows(generated)
    expected = oracle_outputs(spec, generated)
    assert {"close", "idle_timeout"} <= {getattr(o, "reason", None) for o in expected}
    assert any(o.type == "drop" for o in expected)
    rows = kafka_source(spark, bootstrap=broker, topic=TOPIC, reader="python")
    report = run_job(spec, rows, Sink("json", path=str(tmp_path / "out")))
    assert written(spark, tmp_path / "out") == lines(expected)
    assert report.rows_in == EVENTS
    assert len(report.batches) == 1


@pytest.mark.spark
@pytest.mark.kafka
def test_a_run_restarted_from_its_checkpoint_equals_the_oracle(
    spark: Any, broker: str, generated: Path, tmp_path: Path
) -> None:
    """Half the records, a run, the rest, a second run from the checkpoint: each micro-batch
    continues the stream, and the outputs equal the oracle's."""
    from windtunnel.spark_impl.job import kafka_source, run_job

    topic = "halves"
    spec = small_windows(generated)
    sink = Sink("json", path=str(tmp_path / "out"))
    checkpoint = str(tmp_path / "checkpoint")
    reports = []
    for seqs in (range(EVENTS // 2), range(EVENTS // 2, EVENTS)):
        produce_records(broker, topic, seqs)
        rows = kafka_source(spark, bootstrap=broker, topic=topic, reader="python")
        reports.append(run_job(spec, rows, sink, checkpoint=checkpoint))
    assert written(spark, tmp_path / "out") == lines(oracle_outputs(spec, generated))
    assert [len(r.batches) for r in reports] == [1, 1]


@pytest.mark.spark
@pytest.mark.kafka
def test_a_capped_read_that_cuts_the_stream_out_of_order_fails(
    spark: Any, broker: str, generated: Path, tmp_path: Path
) -> None:
    """``maxOffsetsPerTrigger`` cuts each partition at its own offset: a later micro-batch
    holds seqs below ones already run: the job stops naming the seqs instead of running on
    with a wrong clock."""
    from windtunnel.oracle.model.errors import EngineUnavailable as Failed
    from windtunnel.spark_impl.job import kafka_source, run_job

    rows = kafka_source(
        spark, bootstrap=broker, topic=TOPIC, reader="python",
        options={"maxOffsetsPerTrigger": "100"},
    )  # fmt: skip
    with pytest.raises(Failed, match=r"came after seq \d+ of an earlier micro-batch"):
        run_job(small_windows(generated), rows, Sink("json", path=str(tmp_path / "out")))


@pytest.mark.spark
@pytest.mark.kafka
def test_rows_have_sparks_kafka_schema_and_the_records(spark: Any, broker: str) -> None:
    from windtunnel.spark_impl.job import kafka_records

    raw, reader = kafka_records(spark, bootstrap=broker, topic=TOPIC, reader="python")
    assert reader == "python"
    assert raw.schema.simpleString() == (
        "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,"
        "timestamp:timestamp,timestampType:int,headers:array<struct<key:string,value:binary>>>"
    )
    name = f"kafka_rows_{time.monotonic_ns()}"
    query = raw.writeStream.format("memory").queryName(name).trigger(availableNow=True).start()
    query.awaitTermination()
    rows = spark.table(name).collect()
    sim = simulation()
    sent = {}
    for table in sim.chunks():
        records = kafka_records_of(sim, table)
        for seq, key, value, part, arrival in zip(
            records.seq, records.key, records.value, records.partition, records.arrival_ms,
            strict=True,
        ):  # fmt: skip
            sent[seq] = (part, key, value, arrival)
    got = {}
    for row in rows:
        headers = {h["key"]: h["value"].decode() for h in row["headers"]}
        assert row["timestampType"] == 0  # a CreateTime topic, records stamped with arrival
        got[int(headers["wt-seq"])] = (
            row["partition"],
            row["key"].decode(),
            row["value"].decode(),
            round(row["timestamp"].timestamp() * 1000),
        )
    assert len(rows) == EVENTS
    assert got == sent


@pytest.mark.spark
@pytest.mark.kafka
def test_restart_from_the_checkpoint_reads_every_record_once(
    spark: Any, broker: str, tmp_path: Path
) -> None:
    """Stopped after two capped micro-batches and restarted: no record lost or twice."""
    from windtunnel.spark_impl.jobs.kafka_python import register

    def query(trigger: dict[str, Any]) -> Any:
        rows = (
            spark.readStream.format(register(spark))
            .option("kafka.bootstrap.servers", broker)
            .option("subscribe", TOPIC)
            .option("maxOffsetsPerTrigger", "60")
            .load()
            .select("partition", "offset")
        )
        return (
            rows.writeStream.format("json")
            .option("path", str(tmp_path / "out"))
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(**trigger)
            .start()
        )

    first = query({"processingTime": "100 milliseconds"})
    deadline = time.monotonic() + 120
    while first.isActive and time.monotonic() < deadline:
        progress = first.lastProgress
        if progress is not None and progress["batchId"] >= 1 and progress["numInputRows"]:
            break
        time.sleep(0.05)
    first.stop()
    assert first.exception() is None
    before = spark.read.json(str(tmp_path / "out")).count()
    assert 0 < before < EVENTS  # stopped mid-stream
    second = query({"availableNow": True})
    second.awaitTermination()
    assert second.exception() is None
    counts = Counter(
        (r["partition"], r["offset"]) for r in spark.read.json(str(tmp_path / "out")).collect()
    )
    assert len(counts) == EVENTS
    assert set(counts.values()) == {1}
