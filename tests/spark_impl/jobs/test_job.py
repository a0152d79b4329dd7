"""Windowed jobs: simulator outputs and user DataFrames through windtunnel's operators to real sinks.

Every Spark run is compared with the oracle run over the same records (seq order, each
record arriving at its ``arrival_ms``), as multisets of the contract's JSON lines: all
fields, ``after_seq`` and ``wall_ms`` of idle-timeout closes included.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from windtunnel.oracle.engine import run
from windtunnel.oracle.model.errors import EngineUnavailable, InvalidInput, InvalidSpec
from windtunnel.oracle.model.results import Output, to_jsonl_line
from windtunnel.oracle.model.stream import Event
from windtunnel.simulator.outputs import write_jsonl, write_parquet, write_scenario, write_spark_dir
from windtunnel.simulator.workloads import simulate
from windtunnel.spark_impl.job import (
    KAFKA_PACKAGE,
    JobSpec,
    Sink,
    load_job_spec,
    records_format,
    trigger_options,
)

EVENTS = 360


def simulation() -> Any:
    """Payments by user, 5% late records, batches of 120 records (three micro-batches)."""
    return simulate("payments", events=EVENTS, seed=9, batch_size=120, late_fraction=0.05)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same simulated stream as a scenario, spark-dir, jsonl and parquet."""
    root = tmp_path_factory.mktemp("generated")
    write_scenario(simulation(), root / "scenario.yaml")
    write_spark_dir(simulation(), root / "spark-dir")
    write_jsonl(simulation(), root / "records.jsonl")
    write_parquet(simulation(), root / "records.parquet")
    return root


def idle_spec(root: Path) -> JobSpec:
    """The generated scenario's query with 200 ms windows and a 150 ms idle timeout, so
    windows close by event time, by lateness and by the (stream-wide) wall clock."""
    spec = load_job_spec(root / "scenario.yaml")
    window = dataclasses.replace(spec.query.window, size_ms=200, idle_timeout_ms=150)
    return dataclasses.replace(spec, query=dataclasses.replace(spec.query, window=window))


def oracle_outputs(spec: JobSpec, root: Path) -> list[Output]:
    """The oracle over the jsonl records: each an Event at its arrival, then end of input."""
    records = [json.loads(line) for line in (root / "records.jsonl").read_text().splitlines()]
    items = [Event(r["seq"], json.loads(r["value"]), r["arrival_ms"]) for r in records]
    return list(
        run(
            spec.query,
            items,
            rules=spec.rules,
            time_unit_ms=spec.time_unit_ms,
            start_wall_ms=spec.start_wall_ms,
        )
    )


def lines(outputs: list[Output]) -> list[str]:
    from windtunnel.oracle.model.results import to_jsonl_line

    return sorted(to_jsonl_line(o) for o in outputs)


def read_outputs(spark: Any, path: Path, fmt: str = "json") -> list[Output]:
    from windtunnel.spark_impl.schema import OUTPUT_DDL, outputs_in_order

    frame = spark.read.schema(OUTPUT_DDL).format(fmt).load(str(path))
    return outputs_in_order(r.asDict() for r in frame.collect())


def test_load_job_spec_ignores_input_and_expect(generated: Path) -> None:
    spec = load_job_spec(generated / "scenario.yaml")
    assert spec.query.group_by == ("user_id",)
    assert spec.start_wall_ms > 0
    assert spec.name == "payments-seed9"


def test_spec_rejects_other_profiles() -> None:
    from windtunnel.oracle.profiles import profile_named

    spark_rules = profile_named("spark").rules
    with pytest.raises(InvalidSpec, match=r"rules\.clock_moves"):
        JobSpec(load_query(), spark_rules)


def load_query() -> Any:
    from windtunnel.oracle.scenario import parse_scenario

    return parse_scenario({"window": {"size": 10, "on": "ts"}, "input": []}).query


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("availableNow", {"availableNow": True}),
        ("available-now", {"availableNow": True}),
        ("5s", {"processingTime": "5000 milliseconds"}),
        ("processing=250ms", {"processingTime": "250 milliseconds"}),
    ],
)
def test_trigger_options(text: str, expected: dict[str, Any]) -> None:
    assert trigger_options(text) == expected


@pytest.mark.parametrize("text", ["soon", "0s", "-1s"])
def test_bad_trigger_names_the_choices(text: str) -> None:
    with pytest.raises(InvalidInput, match="trigger"):
        trigger_options(text)


def test_sinks_validate_their_fields() -> None:
    with pytest.raises(InvalidInput, match="unknown sink"):
        Sink("kafka")
    with pytest.raises(InvalidInput, match="needs a directory"):
        Sink("json")
    with pytest.raises(InvalidInput, match="must be callable"):
        Sink("foreach_batch")


def test_records_format(generated: Path, tmp_path: Path) -> None:
    assert records_format(generated / "spark-dir") == "spark-dir"
    assert records_format(generated / "records.jsonl") == "jsonl"
    assert records_format(generated / "records.parquet") == "parquet"
    with pytest.raises(InvalidInput, match="does not exist"):
        records_format(tmp_path / "missing.jsonl")
    (tmp_path / "x.csv").write_text("a\n")
    with pytest.raises(InvalidInput, match="unknown records format"):
        records_format(tmp_path / "x.csv")


@pytest.mark.spark
@pytest.mark.parametrize(
    ("source", "rows_per_batch", "fmt", "reader"),
    [
        ("spark-dir", 1000, "json", "auto"),
        ("spark-dir", 1000, "parquet", "python"),
        ("records.jsonl", 100, "parquet", "auto"),
        ("records.parquet", 150, "json", "auto"),
    ],
)
def test_records_job_equals_the_oracle(
    spark: Any, generated: Path, tmp_path: Path, source: str, rows_per_batch: int, fmt: str,
    reader: str,
) -> None:
    from windtunnel.spark_impl.job import records_source, run_job

    spec = idle_spec(generated)
    expected = oracle_outputs(spec, generated)
    reasons = {o.reason for o in expected}
    assert {
        "idle_timeout",
        "end_of_input",
        "close",
    } <= reasons  # the stream closes windows every way
    assert any(o.type == "drop" for o in expected)
    seen: list[Any] = []
    report = run_job(
        spec,
        records_source(spark, generated / source, rows_per_batch=rows_per_batch, reader=reader),
        Sink(fmt, path=str(tmp_path / "out")),
        checkpoint=str(tmp_path / "checkpoint"),
        on_batch=seen.append,
    )
    assert lines(read_outputs(spark, tmp_path / "out", fmt)) == lines(expected)
    micro_batches = 3 if source == "spark-dir" else -(-EVENTS // rows_per_batch)
    assert len(report.batches) == micro_batches == len(seen)
    assert report.rows_in == EVENTS + 1  # the records and one end row
    assert report.rows_out == len(expected)


@pytest.mark.spark
@pytest.mark.parametrize("fmt", ["json", "parquet"])
def test_output_files_written_as_rows_come_hold_every_row_once(
    spark: Any, tmp_path: Path, fmt: str
) -> None:
    """Each slice task writes its output file row by row as the engine emits (JSON text in
    chunks of 64 KiB): one micro-batch of 4,000 payments with 200 ms windows gives files of
    several chunks, which read back as the oracle's outputs, each once."""
    from windtunnel.spark_impl.job import records_source, run_job

    def stream() -> Any:
        return simulate("payments", events=4000, seed=3, batch_size=4000, late_fraction=0.05)

    write_scenario(stream(), tmp_path / "scenario.yaml")
    write_jsonl(stream(), tmp_path / "records.jsonl")
    spec = idle_spec(tmp_path)
    run_job(spec, records_source(spark, tmp_path / "records.jsonl", rows_per_batch=4000),
            Sink(fmt, path=str(tmp_path / "out")), checkpoint=str(tmp_path / "checkpoint"))
    files = sorted((tmp_path / "out").glob("part-*"))
    assert not list((tmp_path / "out").glob(".*.tmp")), "a temporary file left behind"
    if fmt == "json":
        assert max(f.stat().st_size for f in files) > 3 * 65_536
    assert lines(read_outputs(spark, tmp_path / "out", fmt)) == lines(
        oracle_outputs(spec, tmp_path))


@pytest.mark.spark
def test_end_of_input_flushes_exactly_once(spark: Any, generated: Path, tmp_path: Path) -> None:
    """Running the finished job again from its checkpoint reads and writes nothing more."""
    from windtunnel.spark_impl.job import records_source, run_job

    spec = idle_spec(generated)
    sink = Sink("json", path=str(tmp_path / "out"))
    checkpoint = str(tmp_path / "checkpoint")
    source = generated / "spark-dir"
    first = run_job(spec, records_source(spark, source), sink, checkpoint=checkpoint)
    again = run_job(spec, records_source(spark, source), sink, checkpoint=checkpoint)
    assert first.rows_out > 0
    assert again.batches == ()
    assert lines(read_outputs(spark, tmp_path / "out")) == lines(oracle_outputs(spec, generated))


@pytest.mark.spark
def test_user_dataframes_stream_and_batch(spark: Any, generated: Path) -> None:
    """A user's streaming DataFrame (Spark's own file source) into foreachBatch, and a batch
    DataFrame into a memory table: both equal the oracle (the batch one ends by itself)."""
    from windtunnel.spark_impl.job import dataframe_source, run_job

    spec = idle_spec(generated)
    expected = lines(oracle_outputs(spec, generated))
    schema = "seq LONG, arrival_ms LONG, value STRING"
    batch_df = spark.read.schema(schema).json(str(generated / "records.jsonl"))
    table = "windtunnel_test_job_batch"
    run_job(spec, dataframe_source(batch_df, payload="value"), Sink("memory", name=table))
    assert lines(_rows_as_outputs(spark.table(table).collect())) == expected

    stream = (
        spark.readStream.schema(schema)
        .option("maxFilesPerTrigger", 1)
        .json(str(generated / "spark-dir"))
    )
    collected: list[Any] = []

    def keep(frame: Any, batch_id: int) -> None:
        collected.extend(frame.collect())

    report = run_job(
        spec, dataframe_source(stream, payload="value"), Sink("foreach_batch", function=keep)
    )
    assert report.rows_in == EVENTS
    assert len(collected) == report.rows_out
    # no end row in a plain file stream: everything except the end-of-input flush
    assert lines(_rows_as_outputs(collected)) == lines(
        [o for o in oracle_outputs(spec, generated) if o.reason != "end_of_input"]
    )


def _rows_as_outputs(rows: list[Any]) -> list[Output]:
    from windtunnel.spark_impl.schema import outputs_in_order

    return outputs_in_order(r.asDict() for r in rows)


@pytest.mark.spark
def test_dataframe_source_names_a_missing_column(spark: Any) -> None:
    from windtunnel.spark_impl.job import dataframe_source

    frame = spark.createDataFrame([(0, 1)], "seq long, v long")
    with pytest.raises(InvalidInput, match="arrival_ms='arrival_ms': not a column"):
        dataframe_source(frame)


def _kafka_connector_present(spark: Any) -> bool:
    try:
        spark._jvm.java.lang.Class.forName("org.apache.spark.sql.kafka010.KafkaSourceProvider")
    except Exception:
        return False
    return True


@pytest.mark.spark
def test_kafka_without_the_connector_names_the_package(spark: Any) -> None:
    from windtunnel.spark_impl.job import kafka_source

    if _kafka_connector_present(spark):
        pytest.skip("Spark's Kafka connector is on the classpath here")
    with pytest.raises(EngineUnavailable, match=re.escape(f"--packages {KAFKA_PACKAGE}")):
        kafka_source(spark, bootstrap="127.0.0.1:9", topic="windtunnel")


@pytest.mark.spark
def test_kafka_package_matches_the_installed_spark(spark: Any) -> None:
    scala = spark._jvm.scala.util.Properties.versionNumberString()
    assert (
        f"org.apache.spark:spark-sql-kafka-0-10_{'.'.join(scala.split('.')[:2])}:{spark.version}"
    ) == KAFKA_PACKAGE


@pytest.mark.spark
def test_system_clock_closes_event_time_windows_like_the_oracle(
    spark: Any, generated: Path, tmp_path: Path
) -> None:
    """System clock (processing-time timers): windows closed by event time, late drops and
    the end-of-input flush are the oracle's; only the wall clock fields differ."""
    from windtunnel.spark_impl.job import records_source, run_job

    spec = load_job_spec(generated / "scenario.yaml")  # no idle timeout: event time decides
    table = "windtunnel_test_job_system"
    started_ms = int(time.time() * 1000)
    report = run_job(
        spec,
        records_source(spark, generated / "spark-dir"),
        Sink("memory", name=table),
        clock="system",
        tick_ms=200,
        timeout_s=600,
    )
    assert not report.timed_out  # the job stopped by itself once its input was consumed
    got = _rows_as_outputs(spark.table(table).collect())

    def key(o: Output) -> str:
        data = json.loads(to_jsonl_line(o))
        data.pop("wall_ms", None)
        data.pop("after_seq", None)
        return json.dumps(data, sort_keys=True)

    assert sorted(map(key, got)) == sorted(map(key, oracle_outputs(spec, generated)))
    walls = [o.wall_ms for o in got if o.type == "emit"]
    assert walls and min(walls) >= started_ms  # the wall clock was the system clock
