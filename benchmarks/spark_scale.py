"""The exact fast path at scale on one machine, against stock Spark in the same run.

Workload (``spark_exact.workload``): 10,000,000 events over 100,000 keys, 5% out of order
(pushed back up to two minutes), 30 Parquet files read as 30 micro-batches
(``maxFilesPerTrigger=1``); 1-minute tumbling count per key. Sides, one session, local[2]:

- stock: ``withWatermark`` + ``groupBy(window, k).count()`` on the HDFS-backed state store,
  ``noop`` sink (the baseline);
- batch: the exact fast path (``spark_impl/batch_exact.py``), rows written as Parquet files.

Prints for each side the events/s over the whole run and the steady rate (micro-batches after
the first), the ratio batch/stock; for the fast path the state after the run (keys, open
windows, bytes of the state version file), the state file size after every fifth micro-batch
(it levels off: closed windows leave the state, only open windows and per-key clocks stay) and
the driver process's peak resident memory.

Run: python benchmarks/spark_scale.py [--events N] [--keys K] [--batches B] [--no-stock]
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

from spark_exact import HDFS, QUERY, source, stock_query, workload, write_files


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


def run_batch(spark: Any, directory: Path) -> tuple[float, float, str, list[tuple[int, int]]]:
    """(seconds, steady rate, state directory, [(micro-batch id, state file bytes)])."""
    from windtunnel.spark_impl.batch_exact import ExactBatches, FileOutput, start, state_dir_of
    from windtunnel.spark_impl.batch_state import BatchStateStore

    root = Path(tempfile.mkdtemp(prefix="spark-scale-batch-"))
    checkpoint = str(root / "ckpt")
    state_dir = state_dir_of(checkpoint)
    batches = ExactBatches(QUERY, FileOutput(str(root / "out"), "parquet"), state_dir)
    sizes: list[tuple[int, int]] = []

    def tracked(df: Any, batch_id: int) -> None:
        batches(df, batch_id)
        sizes.append((batch_id, BatchStateStore(state_dir).size_bytes()))

    started = time.perf_counter()
    query = start(source(spark, directory), tracked, checkpoint)
    query.awaitTermination()
    batches.flush()  # output files still written in the background count too
    return time.perf_counter() - started, steady_rate(query), state_dir, sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--batches", type=int, default=30)
    parser.add_argument("--stock", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()

    from windtunnel.spark_impl.batch_state import BatchStateStore
    from windtunnel.spark_impl.session import spark_session

    spark = spark_session(shuffle_partitions=2)
    spark.sparkContext.setLogLevel("ERROR")
    root = Path(tempfile.mkdtemp(prefix="spark-scale-"))
    write_files(workload(args.events, args.keys), root / "data", args.batches)
    write_files(workload(20_000, args.keys, seed=1), root / "warmup", 2)
    if args.stock:
        run_stock(spark, root / "warmup")
    run_batch(spark, root / "warmup")

    print(f"{args.events:,} events, {args.keys:,} keys, {args.batches} micro-batches, 1-minute tumbling count")
    if args.stock:
        seconds, steady = run_stock(spark, root / "data")
        stock_rate = args.events / seconds
        print(f"stock/hdfs  {stock_rate / 1e6:6.3f}M ev/s ({seconds:6.2f} s; steady {steady / 1e6:6.3f}M ev/s)")
    seconds, batch_steady, state_dir, sizes = run_batch(spark, root / "data")
    rate = args.events / seconds
    print(f"batch       {rate / 1e6:6.3f}M ev/s ({seconds:6.2f} s; steady {batch_steady / 1e6:6.3f}M ev/s)")
    if args.stock:
        print(f"ratio batch/stock(hdfs): {rate / stock_rate:.2f}x (steady {batch_steady / steady:.2f}x)")
    latest = BatchStateStore(state_dir).latest()
    assert latest is not None
    state = latest.state
    print(
        f"state after micro-batch {latest.batch_id}: {len(state.keys):,} keys (clocks), "
        f"{len(state.win_key):,} open windows, {BatchStateStore(state_dir).size_bytes() / 1e6:.1f} MB on disk"
    )
    print("state file by micro-batch: " + ", ".join(
        f"{batch_id}: {size / 1e6:.1f} MB" for batch_id, size in sizes if batch_id % 5 == 4 or batch_id == 0
    ))
    print(f"driver peak resident memory: {peak_rss_mb():,.0f} MB")
    spark.stop()


if __name__ == "__main__":
    main()
