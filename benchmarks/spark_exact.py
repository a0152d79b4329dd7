"""windtunnel's operators against stock Spark on a tumbling count, same workload, same session.

Workload: N events (default 3,000,000), 1000 integer keys, about one event per millisecond,
5% of events out of order (event time pushed back by up to two minutes), written as 10
Parquet files (columns seq, arrival_ms, ts, k) and read as a stream with
``maxFilesPerTrigger=1``: 10 micro-batches. Query: count per key per 1-minute tumbling
window, tolerance 0.

Sides (each timed from query start to termination, best of ``--repeat``):

- ``stock``: ``withWatermark(time, "0 seconds")`` + ``groupBy(window(time, "1 minute"),
  k).count()``, append mode, into the ``noop`` sink, on the HDFS-backed state store (and the
  RocksDB one with ``--stock-store both``);
- ``production``: ``run_job(query, dataframe_source(stream), Sink("parquet", dir))``: the
  production operator, key slices in parallel, state on the checkpoint, output files published;
- ``general`` (``--general``): ``apply_window`` into ``noop`` (transformWithStateInPandas,
  one oracle driver per bucket).

``--floors`` also times each design's floor on the same input: the same machinery with no
window logic (``benchmarks/jvm/Floors.java``, compiled against the installed Spark when
the benchmark starts): ``fb/noop`` (foreachBatch reading the micro-batch into ``noop``),
``fb/packed-shuffle`` (the production operator's pipeline: rows packed per key slice, one
shuffle, a task per slice that reads its blobs), ``fb/row-shuffle`` (a row shuffle by key,
then a Java task per partition), ``fb/direct`` (a Java task per input partition, no
shuffle: a source already partitioned by key), ``fmgws/bucket`` (``flatMapGroupsWithState``
in Java keyed by a hash bucket, a state blob per bucket, HDFS store) and ``tws/key``
(``transformWithState`` in Java keyed by the key, a value per key, RocksDB store).
``--check`` compares the production operator's output with the oracle's (small sizes).

Run: python benchmarks/spark_exact.py [--events N] [--repeat R] [--stock-store both|hdfs]
     [--general] [--floors] [--check]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from windtunnel.oracle import Aggregation, FixedWindows, Query

MINUTE_MS = 60_000
QUERY = Query(FixedWindows(MINUTE_MS, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
"""Count per key per 1-minute tumbling window of ``ts``."""
HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
FLOORS = ("fb/noop", "fb/packed-shuffle", "fb/row-shuffle", "fb/direct", "fmgws/bucket", "tws/key")


def workload(n: int, keys: int = 1000, disorder: float = 0.05, seed: int = 7) -> pa.Table:
    """seq, arrival_ms, ts (event time, epoch ms) and k (key) of ``n`` events."""
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.integers(0, 2, n, dtype=np.int64))
    late = rng.random(n) < disorder
    ts = np.where(late, t - rng.integers(0, 2 * MINUTE_MS, n, dtype=np.int64), t)
    return pa.table(
        {
            "seq": np.arange(n, dtype=np.int64),
            "arrival_ms": t,
            "ts": ts,
            "k": rng.integers(0, keys, n, dtype=np.int64),
        }
    )


def write_files(table: pa.Table, directory: Path, files: int) -> None:
    """``files`` Parquet files in stream order, modification times increasing."""
    directory.mkdir(parents=True, exist_ok=True)
    bounds = np.linspace(0, table.num_rows, files + 1).astype(int)
    for index in range(files):
        path = directory / f"part-{index:05d}.parquet"
        pq.write_table(table.slice(bounds[index], bounds[index + 1] - bounds[index]), path)
        stamp = 1_700_000_000 + index
        os.utime(path, (stamp, stamp))


def source(spark: Any, directory: Path) -> Any:
    return (
        spark.readStream.schema("seq long, arrival_ms long, ts long, k long")
        .option("maxFilesPerTrigger", 1)
        .parquet(str(directory))
    )


def stock_query(spark: Any, directory: Path) -> Any:
    from pyspark.sql import functions as F

    df = source(spark, directory).select(F.timestamp_millis("ts").alias("time"), "k")
    return df.withWatermark("time", "0 seconds").groupBy(F.window("time", "1 minute"), "k").count()


def timed(start: Callable[[], Any]) -> float:
    began = time.perf_counter()
    query = start()
    if query is not None:
        query.awaitTermination()
    return time.perf_counter() - began


def noop(frame: Any) -> Callable[[], Any]:
    return lambda: (
        frame.writeStream.format("noop").outputMode("append")
        .option("checkpointLocation", tempfile.mkdtemp(prefix="bench-ckpt-"))
        .trigger(availableNow=True).start()
    )


def run_stock(spark: Any, directory: Path, store: str) -> float:
    spark.conf.set("spark.sql.streaming.stateStore.providerClass", store)
    try:
        return timed(noop(stock_query(spark, directory)))
    finally:
        spark.conf.set("spark.sql.streaming.stateStore.providerClass", ROCKSDB)


def run_production(spark: Any, directory: Path, out: Path | None = None) -> float:
    from windtunnel.spark_impl.job import Sink, run_job
    from windtunnel.spark_impl.jobs.sources import dataframe_source

    root = Path(tempfile.mkdtemp(prefix="bench-production-"))
    target = out or root / "out"

    def start() -> None:
        run_job(QUERY, dataframe_source(source(spark, directory)), Sink("parquet", path=str(target)),
                checkpoint=str(root / "ckpt"))

    return timed(start)


def run_general(spark: Any, directory: Path) -> float:
    from windtunnel.spark_impl.general.operator import apply_window

    return timed(noop(apply_window(source(spark, directory), QUERY, seq="seq", arrival_ms="arrival_ms")))


def floors_jar(build_dir: Path) -> Path:
    """benchmarks/jvm/windtunnel/bench/*.java compiled against the installed Spark."""
    from windtunnel.spark_impl.jvm.build import compile_jar

    floors = Path(__file__).resolve().parent / "jvm" / "windtunnel" / "bench"
    return compile_jar(build_dir / "floors.jar", root=floors)


def run_floor(spark: Any, directory: Path, name: str, floors: Any) -> float:
    from pyspark.sql import DataFrame

    slices = int(spark.sparkContext.defaultParallelism)
    if name in ("fmgws/bucket", "tws/key"):
        spark.conf.set("spark.sql.streaming.stateStore.providerClass", HDFS if name == "fmgws/bucket" else ROCKSDB)
        method = "fmgws" if name == "fmgws/bucket" else "twsKey"
        frame = DataFrame(getattr(floors, method)(source(spark, directory)._jdf, slices), spark)
        try:
            return timed(noop(frame))
        finally:
            spark.conf.set("spark.sql.streaming.stateStore.providerClass", ROCKSDB)
    method = {"fb/noop": "noop", "fb/packed-shuffle": "packed", "fb/row-shuffle": "rows",
              "fb/direct": "direct"}[name]

    def batch(df: Any, batch_id: int) -> None:
        getattr(floors, method)(df._jdf, slices)

    writer = (
        source(spark, directory).writeStream.foreachBatch(batch)
        .option("checkpointLocation", tempfile.mkdtemp(prefix="bench-floor-"))
        .trigger(availableNow=True)
    )
    return timed(writer.start)


def check(spark: Any, directory: Path, table: pa.Table) -> None:
    """The production operator's output equals the oracle's (no end of input: a file stream
    never ends, so no end-of-input flush)."""
    from collections import Counter

    from windtunnel.oracle.engine import run
    from windtunnel.oracle.model.stream import Event
    from windtunnel.spark_impl.schema import OUTPUT_DDL, canonical_lines, outputs_in_order

    out = Path(tempfile.mkdtemp(prefix="bench-check-")) / "out"
    run_production(spark, directory, out)
    rows = [r.asDict() for r in spark.read.schema(OUTPUT_DDL).parquet(str(out)).collect()]
    got = Counter(canonical_lines(outputs_in_order(rows)))
    events = [Event(r["seq"], {"ts": r["ts"], "k": r["k"]}, r["arrival_ms"]) for r in table.to_pylist()]
    want = [o for o in run(QUERY, events).outputs if getattr(o, "reason", "") != "end_of_input"]
    assert got == Counter(canonical_lines(want)), "the production operator differs from the oracle"
    print(f"check: {sum(got.values())} outputs equal the oracle's", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=3_000_000)
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--stock-store", choices=["both", "hdfs"], default="hdfs")
    parser.add_argument("--general", action="store_true")
    parser.add_argument("--floors", action="store_true")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()

    from windtunnel.spark_impl.session import spark_session

    root = Path(tempfile.mkdtemp(prefix="bench-exact-"))
    conf = {}
    if args.floors:
        conf["spark.jars"] = str(floors_jar(root))
    spark = spark_session(master=args.master, conf=conf)
    spark.sparkContext.setLogLevel("ERROR")
    table = workload(args.events, args.keys)
    data, warm = root / "data", root / "warm"
    write_files(table, data, 10)
    write_files(workload(20_000, args.keys, seed=1), warm, 2)
    if args.check:
        check(spark, data, table)
    sides: dict[str, Callable[[Path], float]] = {
        "stock (HDFS store)": lambda d: run_stock(spark, d, HDFS),
        "production": lambda d: run_production(spark, d),
    }
    if args.stock_store == "both":
        sides["stock (RocksDB store)"] = lambda d: run_stock(spark, d, ROCKSDB)
    if args.general:
        sides["general (apply_window)"] = lambda d: run_general(spark, d)
    if args.floors:
        floors = spark.sparkContext._jvm.windtunnel.bench.Floors
        for name in FLOORS:
            sides[f"floor {name}"] = lambda d, n=name: run_floor(spark, d, n, floors)
    for side in sides.values():
        side(warm)
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        for name, side in sides.items():
            seconds = side(data)
            best[name] = min(best.get(name, seconds), seconds)
    stock = args.events / best["stock (HDFS store)"]
    for name, seconds in best.items():
        rate = args.events / seconds
        print(f"{name:26s} {rate / 1e6:6.2f}M events/s  {seconds:6.2f} s  {rate / stock:5.2f}x stock (HDFS)",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
