"""The exact Spark operator against stock Spark streaming window aggregation, same workload.

Workload: N events (default 3,000,000), 1000 keys, about one event per millisecond, 5% of
events out of order (event time pushed back by up to two minutes), written as 10 Parquet
files (columns seq, arrival_ms, ts, k) and read as a stream with ``maxFilesPerTrigger=1``:
10 micro-batches. Query: count per key per 1-minute tumbling window.

- stock: ``withWatermark(time, "0 seconds")`` + ``groupBy(window(time, "1 minute"), k).count()``,
  append mode (Spark's global, per-micro-batch watermark; no flush at the end);
- exact: ``apply_window`` (the default profile, per-key clocks, late drops reported as rows);
- batch: the exact fast path (``spark_impl/batch_exact.py``: ``foreachBatch``, state
  versioned by micro-batch id) as it is picked for this query: the JVM step
  (``spark_impl/jvm_step.py``: the window logic in one Spark task over Spark's internal rows,
  only its results sent to the driver), writing its rows as Parquet files;
- batch/python: the same with the Python step (the rows' int64 columns collected to the
  driver with ``toArrow``, the numpy step there), as on Spark Connect;
- batch/job-rows (``--job-rows``): the fast path over the same stream as ``windtunnel run``
  hands it over (a job's input rows: the event as JSON text), the JVM step parsing the time
  and key fields; batch/job-rows/python the same on the general Python step.

Both write to the ``noop`` sink with ``trigger(availableNow=True)`` in the same local[2]
session; each is timed from query start to termination and the best of ``--repeat`` runs is
kept. The stock query runs with the RocksDB state store (which the exact operator needs) and,
with ``--stock-store both`` (default), also with the default HDFS-backed store. Prints
events/s of each side and the ratio exact/stock, each also as a steady rate over the
micro-batches after the first (no query start, no first-batch planning). ``--check`` (small
sizes) also collects the exact operator's output and compares it with the oracle's. ``--reference`` also times the
operator with its reference step (``apply_window(..., fast=False)``: one oracle driver per
bucket, fed event by event) for the before/after comparison. ``--floor`` (default on) also
times the machinery floor: the operator's own pipeline (the pack stage, the shuffle,
``transformWithStateInPandas`` over the same buckets) with a processor that reads its input
and does nothing else. No window logic can make the operator faster than its floor, so
``floor/stock`` bounds what any processor on this pipeline can reach. ``--api-floors`` also
times the floor of each API tried for the fast path, on the same input, each a
``foreachBatch`` function that does no window logic: ``fb/noop`` (reads the micro-batch into
the ``noop`` sink), ``fb/coalesce(1)`` (the same in one task: the JVM step's floor), ``fb/toArrow`` (the general fast step's pipeline and floor: the operator's
input rows collected to the driver), ``fb/toArrow(int64)`` (the typed tumbling path's floor:
the four stream columns collected as int64), ``fb/sql-window`` (the window logic in Spark
SQL, its first piece only: each key's running clock by a window function, into ``noop``),
``fb/sql-agg`` (the pre-aggregation piece only: counts per key and window, into ``noop``), ``fb/mapInArrow`` (the same rows, ``coalesce(1)``, one Python task
that reads them and returns a count: the step could run there instead), ``fb/repartition+mapInArrow`` (shuffled by
key bucket, then Python workers returning the rows) and ``fb/applyInArrow`` (grouped by bucket).

Run: python benchmarks/spark_exact.py [--events N] [--repeat R] [--stock-store both|rocksdb|hdfs]
     [--check] [--reference] [--no-floor] [--api-floors]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from windtunnel.oracle import Aggregation, FixedWindows, Query

MINUTE_MS = 60_000
QUERY = Query(FixedWindows(MINUTE_MS, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
"""Count per key per 1-minute tumbling window of ``ts``, for the exact operator and the oracle."""
HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"


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
    return (
        df.withWatermark("time", "0 seconds")
        .groupBy(F.window("time", "1 minute"), "k")
        .count()
    )


def exact_query(spark: Any, directory: Path, fast: bool = True) -> Any:
    from windtunnel.spark_impl.operator import apply_window

    return apply_window(source(spark, directory), QUERY, seq="seq", arrival_ms="arrival_ms", fast=fast)


def floor_query(spark: Any, directory: Path) -> Any:
    """The exact operator's pipeline with a processor that only reads its input."""
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    from windtunnel.spark_impl.operator import default_buckets, spread_labels, typed_chunks
    from windtunnel.spark_impl.schema import OUTPUT_DDL

    class ReadOnly(StatefulProcessor):  # type: ignore[misc]
        def init(self, handle: Any) -> None:
            pass

        def handleInputRows(self, key: Any, rows: Any, timerValues: Any) -> Any:
            for _ in rows:
                pass
            yield from ()

        def close(self) -> None:
            pass

    partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
    buckets = default_buckets(spark)
    chunks = typed_chunks(
        source(spark, directory), QUERY, buckets, spread_labels(buckets, partitions), "seq", "arrival_ms"
    )
    assert chunks is not None
    return chunks.groupBy("bucket").transformWithStateInPandas(
        statefulProcessor=ReadOnly(), outputStructType=OUTPUT_DDL, outputMode="Append", timeMode="None"
    )


def batch_run(spark: Any, directory: Path, jvm: bool = True) -> Timing:
    """The fast path over the stream (output as Parquet files in a temporary directory);
    ``jvm`` False: the Python step."""
    return batch_run_in(spark, directory, Path(tempfile.mkdtemp(prefix="spark-bench-batch-")), jvm)


def batch_run_in(spark: Any, directory: Path, root: Path, jvm: bool = True, job_rows: bool = False) -> Timing:
    """The fast path over the stream, output files in ``root/out``, checkpoint ``root/ckpt``;
    ``job_rows``: the stream as a job's input rows (``sources.dataframe_source``: the event
    as JSON text), as ``windtunnel run`` hands it over."""
    from windtunnel.spark_impl.batch_exact import (
        Columns,
        ExactBatches,
        FileOutput,
        start,
        state_dir_of,
    )

    checkpoint = str(root / "ckpt")
    columns = Columns("seq", "arrival_ms", "kind", "after_seq", "payload") if job_rows else Columns()
    batches = ExactBatches(
        QUERY, FileOutput(str(root / "out"), "parquet"), state_dir_of(checkpoint), jvm=jvm, columns=columns
    )
    frame = source(spark, directory)
    if job_rows:
        from windtunnel.spark_impl.sources import dataframe_source

        frame = dataframe_source(frame)
    # the clock stops once every output file is written (the JVM step's are written in the
    # background while Spark runs the next micro-batch)
    return timed(lambda: start(frame, batches, checkpoint), after=batches.flush)


def api_floor(spark: Any, directory: Path, api: str) -> Timing:
    """A ``foreachBatch`` query over the stream whose function moves the micro-batch through
    ``api`` and does no window logic (see the module docstring)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from windtunnel.spark_impl.batch_exact import ExactBatches, FileOutput

    by_key = Window.partitionBy("k").orderBy("seq")
    exact = ExactBatches(QUERY, FileOutput(tempfile.mkdtemp()), tempfile.mkdtemp())

    def same(batches: Any) -> Any:
        yield from batches

    def count(batches: Any) -> Any:
        import pyarrow as pa

        rows = sum(b.num_rows for b in batches)
        yield pa.RecordBatch.from_pydict({"rows_out": pa.array([rows], pa.int64())})

    def function(df: Any, batch_id: int) -> None:
        bucketed = df.withColumn("bucket", F.pmod(F.xxhash64("k"), F.lit(4)))
        if api == "fb/noop":
            df.write.format("noop").mode("append").save()
        elif api == "fb/coalesce(1)":
            df.coalesce(1).write.format("noop").mode("append").save()
        elif api == "fb/toArrow":
            exact.rows(df)
        elif api == "fb/toArrow(int64)":
            exact.collect_direct(df, ["seq", "arrival_ms", "ts", "k"])
        elif api == "fb/sql-window":
            clock = F.max("ts").over(by_key.rowsBetween(Window.unboundedPreceding, -1))
            df.withColumn("clock", clock).write.format("noop").mode("append").save()
        elif api == "fb/sql-agg":
            start = F.col("ts") - F.pmod("ts", F.lit(MINUTE_MS))
            df.groupBy("k", start.alias("start")).count().write.format("noop").mode("append").save()
        elif api == "fb/mapInArrow":
            exact.prepared(df)[0].coalesce(1).mapInArrow(count, "rows_out long").collect()
        elif api == "fb/repartition+mapInArrow":
            shuffled = bucketed.repartition(2, "bucket")
            shuffled.mapInArrow(same, shuffled.schema).write.format("noop").mode("append").save()
        else:
            bucketed.groupBy("bucket").applyInArrow(lambda t: t, bucketed.schema).write.format(
                "noop"
            ).mode("append").save()

    writer = (
        source(spark, directory).writeStream.foreachBatch(function)
        .option("checkpointLocation", tempfile.mkdtemp(prefix="spark-bench-ckpt-"))
        .trigger(availableNow=True)
    )
    return timed(writer.start)


API_FLOORS = (
    "fb/noop",
    "fb/coalesce(1)",
    "fb/toArrow",
    "fb/toArrow(int64)",
    "fb/sql-window",
    "fb/sql-agg",
    "fb/mapInArrow",
    "fb/repartition+mapInArrow",
    "fb/applyInArrow",
)


Timing = tuple[float, int, float]
"""Seconds from start to termination, micro-batches with input, and the steady rate: events
per second over the micro-batches after the first (trigger time from Spark's progress), which
leaves out the query start and the first micro-batch's planning."""


def run(frame: Any, sink: str = "noop", name: str | None = None) -> Timing:
    """The query's :data:`Timing`."""
    writer = (
        frame.writeStream.format(sink)
        .outputMode("append")
        .option("checkpointLocation", tempfile.mkdtemp(prefix="spark-bench-ckpt-"))
        .trigger(availableNow=True)
    )
    if name:
        writer = writer.queryName(name)
    return timed(writer.start)


def timed(starter: Any, after: Any = None) -> Timing:
    """The :data:`Timing` of the query ``starter()`` starts, from the call to its end (and
    ``after()``'s, when given)."""
    started = time.perf_counter()
    query = starter()
    try:
        query.awaitTermination()
    finally:
        query.stop()
    if after is not None:
        after()
    elapsed = time.perf_counter() - started
    data = [p for p in query.recentProgress if p["numInputRows"] > 0]
    later = data[1:]
    seconds = sum(p["durationMs"]["triggerExecution"] for p in later) / 1000
    steady = sum(p["numInputRows"] for p in later) / seconds if seconds else 0.0
    return elapsed, len(data), steady


def check(spark: Any, table: pa.Table, directory: Path) -> None:
    """The exact operator's and the fast path's output over the stream equal the oracle's
    (no end of input)."""
    from windtunnel.oracle.engine import DEFAULT_RULES, operator_for
    from windtunnel.oracle.model.stream import Event
    from windtunnel.oracle.windows.driver import Driver
    from windtunnel.spark_impl.runs import divergences
    from windtunnel.spark_impl.schema import OUTPUT_DDL, outputs_in_order

    run(exact_query(spark, directory), "memory", "bench_check")
    rows = [r.asDict() for r in spark.table("bench_check").collect()]
    spark.sql("DROP VIEW IF EXISTS bench_check")
    driver = Driver(QUERY, lambda q, c: operator_for(q, c, "tenzir"), DEFAULT_RULES)
    expected: list[Any] = []
    data = table.to_pydict()
    for seq, at, ts, k in zip(data["seq"], data["arrival_ms"], data["ts"], data["k"], strict=True):
        driver.feed(Event(seq, {"k": k, "ts": ts}, at), expected)
    sides = [("exact", rows)]
    for side, jvm, job_rows in (("batch", True, False), ("batch/python", False, False), ("batch/job-rows", True, True)):
        root = Path(tempfile.mkdtemp(prefix="spark-bench-check-"))
        batch_run_in(spark, directory, root, jvm, job_rows)
        sides.append((side, [r.asDict() for r in spark.read.schema(OUTPUT_DDL).parquet(str(root / "out")).collect()]))
    failed = False
    for side, found in sides:
        problems = divergences(expected, outputs_in_order(found))
        print(f"check {side}: {len(found):,} output rows, {len(problems)} divergences from the oracle")
        if problems:
            print("\n".join(problems[:10]))
            failed = True
    if failed:
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=3_000_000)
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--stock-store", choices=("both", "rocksdb", "hdfs"), default="both")
    parser.add_argument("--check", action="store_true", help="compare the exact output with the oracle")
    parser.add_argument(
        "--reference", action="store_true", help="also time the exact operator's reference step (fast=False)"
    )
    parser.add_argument(
        "--floor",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also time the pipeline with a processor that only reads its input",
    )
    parser.add_argument(
        "--api-floors", action="store_true", help="also time the floor of each API tried for the fast path"
    )
    parser.add_argument(
        "--job-rows", action="store_true", help="also time the fast path over a job's input rows (JSON payload)"
    )
    args = parser.parse_args()

    from windtunnel.spark_impl.session import spark_session

    spark = spark_session(shuffle_partitions=2)
    spark.sparkContext.setLogLevel("ERROR")
    root = Path(tempfile.mkdtemp(prefix="spark-bench-"))
    table = workload(args.events, args.keys)
    write_files(table, root / "data", args.batches)
    write_files(workload(20_000, args.keys, seed=1), root / "warmup", 2)
    stores = {"both": ("rocksdb", "hdfs"), "rocksdb": ("rocksdb",), "hdfs": ("hdfs",)}[args.stock_store]
    rocksdb = spark.conf.get("spark.sql.streaming.stateStore.providerClass")

    def stock(store: str, directory: Path) -> Timing:
        spark.conf.set("spark.sql.streaming.stateStore.providerClass", HDFS if store == "hdfs" else rocksdb)
        try:
            return run(stock_query(spark, directory))
        finally:
            spark.conf.set("spark.sql.streaming.stateStore.providerClass", rocksdb)

    for store in stores:  # warm up: JIT, Python workers
        stock(store, root / "warmup")
    run(exact_query(spark, root / "warmup"))
    batch_run(spark, root / "warmup")
    batch_run(spark, root / "warmup", jvm=False)
    if args.job_rows:
        batch_run_in(spark, root / "warmup", Path(tempfile.mkdtemp()), True, job_rows=True)
    apis = API_FLOORS if args.api_floors else ()
    for api in apis:
        api_floor(spark, root / "warmup", api)
    if args.floor:
        run(floor_query(spark, root / "warmup"))

    best: dict[str, float] = {}
    batches: dict[str, int] = {}
    steady: dict[str, float] = {}

    def keep(label: str, timing: Timing) -> None:
        seconds, count, rate = timing
        best[label] = min(best.get(label, float("inf")), seconds)
        batches[label] = count
        steady[label] = max(steady.get(label, 0.0), rate)

    for _ in range(args.repeat):
        for store in stores:
            keep(f"stock/{store}", stock(store, root / "data"))
        keep("exact", run(exact_query(spark, root / "data")))
        keep("batch", batch_run(spark, root / "data"))
        keep("batch/python", batch_run(spark, root / "data", jvm=False))
        if args.job_rows:
            for label, jvm in (("batch/job-rows", True), ("batch/job-rows/python", False)):
                keep(label, batch_run_in(spark, root / "data", Path(tempfile.mkdtemp()), jvm, job_rows=True))
        for api in apis:
            keep(api, api_floor(spark, root / "data", api))
        if args.floor:
            keep("floor", run(floor_query(spark, root / "data")))
        if args.reference:
            keep("exact/reference", run(exact_query(spark, root / "data", fast=False)))
    print(
        f"{args.events:,} events, {args.keys} keys, {args.batches} files (maxFilesPerTrigger=1), "
        f"1-minute tumbling count, best of {args.repeat}"
    )
    for label, seconds in best.items():
        print(
            f"{label:26s} {args.events / seconds / 1e6:6.3f}M ev/s  ({seconds:6.2f} s, "
            f"{batches[label]} micro-batches; steady {steady[label] / 1e6:6.3f}M ev/s)"
        )
    jobs = ["batch/job-rows", "batch/job-rows/python"] if args.job_rows else []
    sides = ["batch", "batch/python", *jobs, "exact", *apis] + (["floor"] if args.floor else []) + (["exact/reference"] if args.reference else [])
    for side in sides:
        for store in stores:
            print(
                f"ratio {side}/stock({store}): {best[f'stock/{store}'] / best[side]:.2f}x "
                f"(steady {steady[side] / steady[f'stock/{store}']:.2f}x)"
            )
    if args.floor:
        print(
            f"ratio exact/floor: {best['floor'] / best['exact']:.2f}x "
            f"(steady {steady['exact'] / steady['floor']:.2f}x)"
        )
    if args.check:
        check(spark, table, root / "data")
    spark.stop()


if __name__ == "__main__":
    main()
