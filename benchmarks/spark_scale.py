"""The production operator at scale on one machine, against stock Spark in the same run.

Workload (``spark_operators.workload``): 10,000,000 events over 100,000 keys, 5% out of order
(pushed back up to two minutes), 30 Parquet files read as 30 micro-batches
(``maxFilesPerTrigger=1``); 1-minute tumbling count per key. Sides, one session, local[2]:

- stock: ``withWatermark`` + ``groupBy(window, k).count()`` on the HDFS-backed state store,
  ``noop`` sink (the baseline);
- production: ``run_job`` over ``dataframe_source`` (the production operator, key slices in
  parallel, state on the checkpoint), rows written as Parquet files.

Prints for each side the events/s over the whole run and the steady rate (micro-batches after
the first), the ratio production/stock; for the production operator the state after the run
(bytes of the files the newest version is read from: per slice a snapshot and the deltas
after it), the state size after every fifth micro-batch
(it levels off: closed windows leave the state, only open windows and per-key clocks stay) and
the driver process's peak resident memory. Before timing, both sides are checked against
the oracle on a small stream whose windows close (``spark_operators.check_sides``:
``--check-events`` events, an AssertionError when a side differs).

Run: python benchmarks/spark_scale.py [--events N] [--keys K] [--batches B] [--no-stock]
     [--warmup-events N] [--check-events N]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from spark_operators import (
    CHECK_STEP_MS,
    HDFS,
    QUERY,
    check_sides,
    micro_batches,
    source,
    stock_of,
    stock_query,
    workload,
    write_files,
)
from state_growth import held_bytes


def peak_rss_mb() -> float:
    """This process's peak resident memory in MB (Linux reports KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def steady_rate(query: Any) -> float:
    data = [p for p in query.recentProgress if p["numInputRows"] > 0][1:]
    seconds = sum(p["durationMs"]["triggerExecution"] for p in data) / 1000
    return sum(p["numInputRows"] for p in data) / seconds if seconds else 0.0


def run_stock(spark: Any, directory: Path) -> tuple[float, float]:
    rocksdb = spark.conf.get("spark.sql.streaming.stateStore.providerClass")
    spark.conf.set("spark.sql.streaming.stateStore.providerClass", HDFS)
    try:
        started = time.perf_counter()
        query = (
            stock_query(spark, directory).writeStream.format("noop").outputMode("append")
            .option("checkpointLocation", tempfile.mkdtemp(prefix="spark-scale-ckpt-"))
            .trigger(availableNow=True).start()
        )
        query.awaitTermination()
        return time.perf_counter() - started, steady_rate(query)
    finally:
        spark.conf.set("spark.sql.streaming.stateStore.providerClass", rocksdb)


def state_bytes(checkpoint: Path) -> int:
    """Bytes of the files the newest committed state version is read from (0: none yet)."""
    root = checkpoint / "windtunnel" / "state"
    if not any((p / "COMMIT").is_file() for p in root.iterdir()):
        return 0
    return held_bytes(checkpoint)


def run_production(spark: Any, directory: Path) -> tuple[float, float, int, list[tuple[int, int]]]:
    """(seconds, steady rate, state bytes after the run, [(micro-batch id, state bytes)])."""
    from windtunnel.spark_impl.job import Sink, run_job
    from windtunnel.spark_impl.jobs.sources import dataframe_source

    root = Path(tempfile.mkdtemp(prefix="spark-scale-production-"))
    checkpoint = root / "ckpt"
    sizes: list[tuple[int, int]] = []
    durations: list[tuple[int, int]] = []

    def tracked(batch: Any) -> None:
        sizes.append((batch.batch_id, state_bytes(checkpoint)))
        durations.append((batch.rows_in, batch.duration_ms))

    started = time.perf_counter()
    run_job(QUERY, dataframe_source(source(spark, directory)), Sink("parquet", path=str(root / "out")),
            checkpoint=str(checkpoint), on_batch=tracked)
    seconds = time.perf_counter() - started
    steady = durations[1:]
    rate = sum(n for n, _ in steady) / (sum(ms for _, ms in steady) / 1000) if steady else 0.0
    return seconds, rate, state_bytes(checkpoint), sizes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--batches", type=int, default=30)
    parser.add_argument("--stock", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--warmup-events", type=int, default=20_000,
                        help="events of each side's warm-up run (0: none)")
    parser.add_argument("--check-events", type=int, default=5_000,
                        help="events of the stream the sides are checked on before timing")
    args = parser.parse_args(argv)

    from windtunnel.spark_impl.session import spark_session

    spark = spark_session(shuffle_partitions=2)
    spark.sparkContext.setLogLevel("ERROR")
    root = Path(tempfile.mkdtemp(prefix="spark-scale-"))
    checked = workload(args.check_events, min(args.keys, 20), seed=3, step_ms=CHECK_STEP_MS)
    write_files(checked, root / "check", 3)
    check_sides(spark, QUERY, checked, root / "check", micro_batches(checked, 3),
                lambda d: source(spark, d), stock_of, "k")
    write_files(workload(args.events, args.keys), root / "data", args.batches)
    if args.warmup_events:
        write_files(workload(args.warmup_events, args.keys, seed=1), root / "warmup", 2)
        if args.stock:
            run_stock(spark, root / "warmup")
        run_production(spark, root / "warmup")

    print(f"{args.events:,} events, {args.keys:,} keys, {args.batches} micro-batches, 1-minute tumbling count")
    if args.stock:
        seconds, steady = run_stock(spark, root / "data")
        stock_rate = args.events / seconds
        print(f"stock/hdfs  {stock_rate / 1e6:6.3f}M ev/s ({seconds:6.2f} s; steady {steady / 1e6:6.3f}M ev/s)")
    seconds, steady_production, state, sizes = run_production(spark, root / "data")
    rate = args.events / seconds
    print(f"production  {rate / 1e6:6.3f}M ev/s ({seconds:6.2f} s; steady {steady_production / 1e6:6.3f}M ev/s)")
    if args.stock:
        print(f"ratio production/stock(hdfs): {rate / stock_rate:.2f}x (steady {steady_production / steady if steady else float('nan'):.2f}x)")
    print(f"state after the run: {state / 1e6:.1f} MB on the checkpoint")
    print("state by micro-batch: " + ", ".join(
        f"{batch_id}: {size / 1e6:.1f} MB" for batch_id, size in sizes if batch_id % 5 == 4 or batch_id == 0
    ))
    print(f"driver peak resident memory: {peak_rss_mb():,.0f} MB")


if __name__ == "__main__":
    main()
