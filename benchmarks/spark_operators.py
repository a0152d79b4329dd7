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

Run: python benchmarks/spark_operators.py [--events N] [--repeat R] [--stock-store both|hdfs]
     [--general] [--floors] [--check]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from windtunnel.oracle import Aggregation, FixedWindows, Query
from windtunnel.oracle.model.results import Emission
from windtunnel.oracle.model.stream import Batch, Event

MINUTE_MS = 60_000
QUERY = Query(FixedWindows(MINUTE_MS, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
"""Count per key per 1-minute tumbling window of ``ts``."""
HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
FLOORS = ("fb/noop", "fb/packed-shuffle", "fb/row-shuffle", "fb/direct", "fmgws/bucket", "tws/key")


def workload(n: int, keys: int = 1000, disorder: float = 0.05, seed: int = 7,
             step_ms: int = 1) -> pa.Table:
    """seq, arrival_ms, ts (event time, epoch ms) and k (key) of ``n`` events, arrivals
    0 to ``step_ms`` apart."""
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.integers(0, step_ms + 1, n, dtype=np.int64))
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
    return stock_of(source(spark, directory))


def stock_of(stream: Any) -> Any:
    """What a Spark user writes: ``withWatermark`` + ``groupBy(window, k).count()`` (as ``n``)."""
    from pyspark.sql import functions as F

    df = stream.select(F.timestamp_millis("ts").alias("time"), "k")
    return (df.withWatermark("time", "0 seconds").groupBy(F.window("time", "1 minute"), "k")
            .agg(F.count(F.lit(1)).alias("n")))


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


def events_of(table: pa.Table) -> list[Event]:
    """The table's rows as oracle events: seq, arrival_ms and the other columns as payload."""
    return [Event(r.pop("seq"), r, r.pop("arrival_ms")) for r in table.to_pylist()]


def oracle_lines(query: Query, table: pa.Table) -> Counter[str]:
    """The oracle's outputs (default profile) as contract lines, up to the end of input: a
    file stream never ends, so what its end would flush (open windows, a reorder buffer's
    events and the closes they cause) is left out."""
    from windtunnel.oracle.engine import reference_outputs
    from windtunnel.spark_impl.schema import canonical_lines

    ended: list[bool] = []

    def events() -> Iterator[Event]:
        yield from events_of(table)
        ended.append(True)

    outputs = []
    for output in reference_outputs(query, events()):  # item by item: the end comes last
        if ended:
            break
        outputs.append(output)
    return Counter(canonical_lines(outputs))


def written_lines(spark: Any, out: Path) -> Counter[str]:
    """The production operator's output files as contract lines."""
    from windtunnel.spark_impl.schema import OUTPUT_DDL, canonical_lines, outputs_in_order

    rows = [r.asDict() for r in spark.read.schema(OUTPUT_DDL).parquet(str(out)).collect()]
    return Counter(canonical_lines(outputs_in_order(rows)))


def window_rows(rows: Iterable[tuple[int, int, Any, Mapping[str, Any]]]) -> Counter[str]:
    """(start_ms, end_ms, key, aggregates) rows as text, floats to 9 significant digits."""
    def value(v: Any) -> Any:
        return float(f"{v:.9g}") if isinstance(v, float) else v

    return Counter(f"[{a}, {b}) {k}: {sorted((n, value(v)) for n, v in row.items())}"
                   for a, b, k, row in rows)


def stock_rows(spark: Any, frame: Any, key: str) -> Counter[str]:
    """A stock query's windows (its ``window`` or ``session_window`` column, ``key`` and the
    aggregates), run to its end into the memory sink."""
    from pyspark.sql import functions as F

    name = f"stock_check_{uuid.uuid4().hex}"
    window = "session_window" if "session_window" in frame.columns else "window"
    frame = frame.select(F.unix_millis(f"{window}.start").alias("start_ms"),
                         F.unix_millis(f"{window}.end").alias("end_ms"), "*").drop(window)
    query = (frame.writeStream.format("memory").queryName(name).outputMode("append")
             .option("checkpointLocation", tempfile.mkdtemp(prefix="bench-check-"))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    rows = [r.asDict() for r in spark.table(name).collect()]
    spark.catalog.dropTempView(name)
    return window_rows((r.pop("start_ms"), r.pop("end_ms"), r.pop(key), r) for r in rows)


def oracle_stock_rows(query: Query, batches: Sequence[pa.Table]) -> Counter[str]:
    """The oracle's ``spark`` profile emissions over ``batches`` (one micro-batch each) and
    the no-data micro-batch Spark runs after them."""
    from windtunnel.oracle.engine import run
    from windtunnel.oracle.profiles import SPARK_PROFILE

    items = [*(Batch(tuple(events_of(b))) for b in batches), Batch(())]
    outputs = run(query, items, rules=SPARK_PROFILE.rules, profile="spark").outputs
    return window_rows((o.window.start_ms, o.window.end_ms, o.group, o.row)
                       for o in outputs if isinstance(o, Emission))


def check_sides(spark: Any, query: Query, table: pa.Table, directory: Path,
                batches: Sequence[pa.Table], read: Callable[[Path], Any],
                stock: Callable[[Any], Any], key: str) -> None:
    """The sides agree with the oracle on ``table`` (written to ``directory``, read as the
    micro-batches ``batches`` by ``read``): the production operator's output files equal
    the oracle's outputs line for line (drops too), the stock query ``stock(stream)`` the
    ``spark`` profile's emissions. Raises AssertionError naming the side that differs."""
    root = Path(tempfile.mkdtemp(prefix="bench-check-"))
    run_job_into(query, read(directory), root)
    got, want = written_lines(spark, root / "out"), oracle_lines(query, table)
    assert got == want, ("the production operator differs from the oracle: "
                         f"{sorted((got - want).elements())[:3]} / {sorted((want - got).elements())[:3]}")
    stock_got = stock_rows(spark, stock(read(directory)), key)
    stock_want = oracle_stock_rows(query, batches)
    assert stock_got == stock_want, (
        "stock Spark differs from the oracle's spark profile: "
        f"{sorted((stock_got - stock_want).elements())[:3]} / {sorted((stock_want - stock_got).elements())[:3]}")
    emitted = sum(n for line, n in want.items() if '"type": "emit"' in line)
    assert emitted and stock_want, "the check stream closes no window: give more --check-events"
    drops = sum(want.values()) - emitted
    print(f"check: production {sum(got.values())} outputs ({drops} drops) equal the oracle's; "
          f"stock {sum(stock_got.values())} windows equal the spark profile's", flush=True)


def run_job_into(query: Query, stream: Any, root: Path) -> None:
    """``run_job`` of ``query`` over ``stream`` into Parquet files under ``root/out``."""
    from windtunnel.spark_impl.job import Sink, run_job
    from windtunnel.spark_impl.jobs.sources import dataframe_source

    run_job(query, dataframe_source(stream), Sink("parquet", path=str(root / "out")),
            checkpoint=str(root / "ckpt"))


def micro_batches(table: pa.Table, files: int) -> list[pa.Table]:
    """The rows of each of :func:`write_files`' ``files`` files (one micro-batch each)."""
    bounds = np.linspace(0, table.num_rows, files + 1).astype(int)
    return [table.slice(bounds[i], bounds[i + 1] - bounds[i]) for i in range(files)]


CHECK_STEP_MS = 2_000
"""Largest gap between the check stream's arrivals: its 1-minute windows close."""


def check(spark: Any, directory: Path, table: pa.Table) -> None:
    """The production operator's output on the measured stream equals the oracle's."""
    root = Path(tempfile.mkdtemp(prefix="bench-check-"))
    run_job_into(QUERY, source(spark, directory), root)
    got = written_lines(spark, root / "out")
    assert got == oracle_lines(QUERY, table), "the production operator differs from the oracle"
    print(f"check: {sum(got.values())} outputs equal the oracle's", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=3_000_000)
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--batches", type=int, default=10, help="micro-batches (files)")
    parser.add_argument("--warmup-events", type=int, default=20_000,
                        help="events of the warm-up run of each side (0: none)")
    parser.add_argument("--check-events", type=int, default=5_000,
                        help="events of the stream the sides are checked on before timing")
    parser.add_argument("--stock-store", choices=["both", "hdfs"], default="hdfs")
    parser.add_argument("--general", action="store_true")
    parser.add_argument("--floors", action="store_true")
    parser.add_argument("--check", action="store_true",
                        help="also compare the production operator with the oracle on the measured stream")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv)

    from windtunnel.spark_impl.session import spark_session

    root = Path(tempfile.mkdtemp(prefix="bench-exact-"))
    conf = {}
    if args.floors:
        conf["spark.jars"] = str(floors_jar(root))
    spark = spark_session(master=args.master, conf=conf)
    spark.sparkContext.setLogLevel("ERROR")
    checked = workload(args.check_events, min(args.keys, 20), seed=3, step_ms=CHECK_STEP_MS)
    write_files(checked, root / "check", 3)
    check_sides(spark, QUERY, checked, root / "check", micro_batches(checked, 3),
                lambda d: source(spark, d), stock_of, "k")
    table = workload(args.events, args.keys)
    data, warm = root / "data", root / "warm"
    write_files(table, data, args.batches)
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
    if args.warmup_events:
        write_files(workload(args.warmup_events, args.keys, seed=1), warm, 2)
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
