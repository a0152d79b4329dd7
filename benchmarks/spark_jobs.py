"""The production operator against stock Spark on the jobs people write, same session.

Shapes (each a stream of Parquet files, ``--files`` per micro-batch (default 2: two input
partitions, as from a topic with two partitions) read with ``maxFilesPerTrigger``, 10
micro-batches):

- ``realistic``: string user ids (``user-000042``), 10-minute windows every minute
  (hopping), ``count()``, ``sum(amount)``, ``avg(amount)`` per user; 1M events over 20k
  users by default (``--events``, ``--keys``), an event every ~7 ms, 5% of them up to two
  minutes out of order, tolerance one minute;
- ``tumbling``: ``benchmarks/spark_operators.py``'s workload: 1-minute tumbling ``count()`` per
  integer key, 1000 keys, 3M events, tolerance 0;
- ``session``: 5-minute session windows per user with ``count()`` and ``sum(amount)``
  (stock: ``session_window``), the realistic stream.

Sides, each timed from query start to termination, best of ``--repeat``:

- ``stock``: what a Spark user writes: ``withWatermark(time, tolerance)`` +
  ``groupBy(window(...) | session_window(...), key).agg(...)``, append mode, the HDFS-backed
  state store, into the ``noop`` sink (its cheapest sink);
- ``stock-parquet``: the same stock query into Spark's Parquet file sink (what a job that
  keeps its results writes; the production side writes Parquet files too);
- ``production``: ``run_job(spec, dataframe_source(stream), Sink("parquet", dir))`` as a
  user calls it: the production operator, partitioned by key slice, state on the checkpoint, output
  Parquet files written and published before the clock stops;
- ``general`` (``--general``): ``apply_window`` into ``noop`` (transformWithStateInPandas).

Before timing, each shape's sides are checked on a small stream of its own shape whose
windows close (``--check-events`` events over 20 keys, arrivals up to 20 s apart, written as
three micro-batches): the production operator's output files must equal the oracle's outputs
line for line, drops included, and the stock query's windows the oracle's ``spark`` profile
(``spark_operators.check_sides``; an AssertionError otherwise).

Prints events/s per side and ``production/stock``. ``--scaling`` runs the chosen shapes in
two more processes at ``local[1]`` and ``local[2]`` and prints each side's 2-core/1-core
throughput ratio. ``local[1]`` only limits Spark's task slots: the driver, the JIT, the
garbage collector and the Python side still use every CPU. ``--pin`` also pins each process
(and the JVM and Python workers it starts) to that many CPUs, so the 1-core run has one CPU.
``--sides production`` runs one side alone (no stock runs between its repeats);
``--driver-memory`` sets the heap a local session's driver and tasks share (default:
windtunnel's local default, a quarter of the memory up to 4g; ``1g`` is Spark's own).

Run: python benchmarks/spark_jobs.py [--shapes realistic,tumbling,session] [--events N]
     [--keys K] [--repeat R] [--files F] [--batches B] [--warmup-events N] [--check-events N]
     [--general] [--scaling] [--cores C] [--sides stock,stock-parquet,production]
     [--driver-memory 4g]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from windtunnel.oracle import Aggregation, FixedWindows, Query
from windtunnel.oracle.model.spec import SessionWindows

sys.path.insert(0, str(Path(__file__).resolve().parent))
from spark_operators import check_sides  # the sides' check lives beside this script

MINUTE_MS = 60_000
EPOCH = 1_700_000_000_000
HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"


@dataclass(frozen=True, slots=True)
class Shape:
    """A benchmark job: its stream, its windtunnel query, its stock Spark query."""

    name: str
    events: int
    keys: int
    query: Query
    tolerance_ms: int
    string_keys: bool
    schema: str = ""
    """The stream's columns as Spark DDL; empty: :meth:`table`'s columns."""
    file_format: str = "parquet"
    """``parquet`` or ``json`` (JSON lines), the files :func:`stream` reads."""

    @property
    def columns(self) -> str:
        kind = "string" if self.string_keys else "long"
        return self.schema or f"seq long, arrival_ms long, ts long, user {kind}, amount double"

    def table(self, n: int, seed: int = 7, keys: int | None = None,
              step_ms: int | None = None) -> pa.Table:
        """seq, arrival_ms, ts (event time), user (key) and amount of ``n`` events over
        ``keys`` keys (default the shape's), arrivals up to ``step_ms`` apart (default 14 ms
        with string keys, 1 ms without)."""
        rng = np.random.default_rng(seed)
        step = (step_ms or (14 if self.string_keys else 1)) + 1
        t = EPOCH + np.cumsum(rng.integers(0, step, n, dtype=np.int64))
        late = rng.random(n) < 0.05
        ts = np.where(late, t - rng.integers(0, 2 * MINUTE_MS, n, dtype=np.int64), t)
        keys = rng.integers(0, keys or self.keys, n, dtype=np.int64)
        user: Any = pa.array([f"user-{k:06d}" for k in keys]) if self.string_keys else keys
        return pa.table(
            {
                "seq": np.arange(n, dtype=np.int64),
                "arrival_ms": t,
                "ts": ts,
                "user": user,
                "amount": np.round(rng.random(n) * 100, 2),
            }
        )

    def stock(self, df: Any) -> Any:
        from pyspark.sql import functions as F

        fields = [a.field for a in self.query.aggregate or () if a.field]
        timed = df.select(F.timestamp_millis(self.query.window.on).alias("time"),
                          *self.query.group_by, *dict.fromkeys(fields))
        timed = timed.withWatermark("time", f"{self.tolerance_ms} milliseconds")
        window = self.query.window
        if isinstance(window, SessionWindows):
            by = F.session_window("time", f"{window.gap_ms} milliseconds")
        else:
            every = window.every_ms or window.size_ms
            by = F.window("time", f"{window.size_ms} milliseconds", f"{every} milliseconds")
        columns = []
        for a in self.query.aggregate or ():
            if a.function == "count":
                columns.append(F.count(F.lit(1)).alias(a.name))
            else:
                columns.append(getattr(F, a.function)(a.field).alias(a.name))
        return timed.groupBy(by, *self.query.group_by).agg(*columns)


def shapes(events: int | None, keys: int | None) -> dict[str, Shape]:
    aggregates = (
        Aggregation("n", "count"),
        Aggregation("total", "sum", "amount"),
        Aggregation("mean", "avg", "amount"),
    )
    return {
        "realistic": Shape(
            "realistic", events or 1_000_000, keys or 20_000,
            Query(FixedWindows(10 * MINUTE_MS, on="ts", every_ms=MINUTE_MS, tolerance_ms=MINUTE_MS),
                  group_by=("user",), aggregate=aggregates),
            MINUTE_MS, True,
        ),
        "tumbling": Shape(
            "tumbling", events or 3_000_000, keys or 1000,
            Query(FixedWindows(MINUTE_MS, on="ts"), group_by=("user",),
                  aggregate=(Aggregation("n", "count"),)),
            0, False,
        ),
        "session": Shape(
            "session", events or 1_000_000, keys or 20_000,
            Query(SessionWindows(5 * MINUTE_MS, on="ts", tolerance_ms=MINUTE_MS),
                  group_by=("user",), aggregate=aggregates[:2]),
            MINUTE_MS, True,
        ),
    }


FILES_PER_BATCH = 2
"""Input files (partitions) per micro-batch; ``--files`` sets it."""


def write_files(table: pa.Table, directory: Path, batches: int) -> None:
    """``batches`` micro-batches in stream order, each as :data:`FILES_PER_BATCH` Parquet
    files (the batch's rows split in seq order), modification times increasing."""
    directory.mkdir(parents=True, exist_ok=True)
    bounds = np.linspace(0, table.num_rows, batches * FILES_PER_BATCH + 1).astype(int)
    for index in range(batches * FILES_PER_BATCH):
        path = directory / f"part-{index:05d}.parquet"
        pq.write_table(table.slice(bounds[index], bounds[index + 1] - bounds[index]), path)
        stamp = 1_700_000_000 + index
        os.utime(path, (stamp, stamp))


def micro_batches(table: pa.Table, batches: int) -> list[pa.Table]:
    """The rows of each micro-batch :func:`write_files` wrote (:data:`FILES_PER_BATCH` files)."""
    bounds = np.linspace(0, table.num_rows, batches * FILES_PER_BATCH + 1).astype(int)
    edges = bounds[::FILES_PER_BATCH]
    return [table.slice(edges[i], edges[i + 1] - edges[i]) for i in range(batches)]


CHECK_STEP_MS = 20_000
"""Largest gap between the check stream's arrivals: its windows and sessions close."""


def check(spark: Any, shape: Shape, events: int, root: Path) -> None:
    """The shape's sides agree with the oracle on a small stream (see the docstring)."""
    table = shape.table(events, seed=3, keys=20, step_ms=CHECK_STEP_MS)
    directory = root / f"{shape.name}-check"
    write_files(table, directory, 3)
    print(f"{shape.name}: ", end="", flush=True)
    check_sides(spark, shape.query, table, directory, micro_batches(table, 3),
                lambda d: stream(spark, d, shape), shape.stock, "user")


@contextlib.contextmanager
def hdfs_store(spark: Any) -> Iterator[None]:
    """The HDFS-backed state store for the queries started inside, the session's after."""
    before = spark.conf.get("spark.sql.streaming.stateStore.providerClass")
    spark.conf.set("spark.sql.streaming.stateStore.providerClass", HDFS)
    try:
        yield
    finally:
        spark.conf.set("spark.sql.streaming.stateStore.providerClass", before)


def stream(spark: Any, directory: Path, shape: Shape) -> Any:
    """The shape's files in ``directory`` as a stream, :data:`FILES_PER_BATCH` a micro-batch."""
    reader = spark.readStream.schema(shape.columns).option("maxFilesPerTrigger", FILES_PER_BATCH)
    return reader.format(shape.file_format).load(str(directory))


def timed(start: Callable[[], Any]) -> float:
    began = time.perf_counter()
    query = start()
    if query is not None:
        query.awaitTermination()
    return time.perf_counter() - began


def run_stock(spark: Any, shape: Shape, directory: Path) -> float:
    out = shape.stock(stream(spark, directory, shape))
    writer = (
        out.writeStream.format("noop").outputMode("append")
        .option("checkpointLocation", tempfile.mkdtemp(prefix="bench-stock-"))
        .trigger(availableNow=True)
    )
    with hdfs_store(spark):
        return timed(writer.start)


def run_stock_parquet(spark: Any, shape: Shape, directory: Path) -> float:
    out = shape.stock(stream(spark, directory, shape))
    root = Path(tempfile.mkdtemp(prefix="bench-stock-parquet-"))
    writer = (
        out.writeStream.format("parquet").outputMode("append").option("path", str(root / "out"))
        .option("checkpointLocation", str(root / "ckpt"))
        .trigger(availableNow=True)
    )
    with hdfs_store(spark):
        return timed(writer.start)


def run_production(spark: Any, shape: Shape, directory: Path) -> float:
    from windtunnel.spark_impl.job import Sink, run_job
    from windtunnel.spark_impl.jobs.sources import dataframe_source

    root = Path(tempfile.mkdtemp(prefix="bench-production-"))
    source = dataframe_source(stream(spark, directory, shape))

    def start() -> None:
        run_job(shape.query, source, Sink("parquet", path=str(root / "out")),
                checkpoint=str(root / "ckpt"))

    return timed(start)


def run_general(spark: Any, shape: Shape, directory: Path) -> float:
    from windtunnel.spark_impl.general.operator import apply_window

    out = apply_window(stream(spark, directory, shape), shape.query,
                       seq="seq", arrival_ms="arrival_ms")
    writer = (
        out.writeStream.format("noop").outputMode("append")
        .option("checkpointLocation", tempfile.mkdtemp(prefix="bench-general-"))
        .trigger(availableNow=True)
    )
    return timed(writer.start)


SIDES: dict[str, Callable[[Any, Shape, Path], float]] = {
    "stock": run_stock,
    "stock-parquet": run_stock_parquet,
    "production": run_production,
    "general": run_general,
}


def measure(cores: int, names: list[str], events: int | None, keys: int | None, repeat: int,
            sides: list[str], driver_memory: str | None, batches: int = 10,
            warmup_events: int = 20_000, check_events: int = 1_000) -> dict[str, dict[str, float]]:
    """events/s per shape and side, in one session at ``local[cores]``, each shape's sides
    checked first (:func:`check`)."""
    from windtunnel.spark_impl.session import spark_session

    conf = {"spark.driver.memory": driver_memory} if driver_memory else {}
    spark = spark_session(master=f"local[{cores}]", conf=conf)
    spark.sparkContext.setLogLevel("ERROR")
    chosen = shapes(events, keys)
    root = Path(tempfile.mkdtemp(prefix="bench-jobs-"))
    results: dict[str, dict[str, float]] = {}
    for name in names:
        shape = chosen[name]
        check(spark, shape, check_events, root)
        data = root / name
        write_files(shape.table(shape.events), data, batches)
        if warmup_events:
            warm = root / f"{name}-warm"
            write_files(shape.table(warmup_events, seed=1), warm, 2)
            for side in sides:
                SIDES[side](spark, shape, warm)
        best: dict[str, float] = {}
        for _ in range(repeat):
            for side in sides:
                seconds = SIDES[side](spark, shape, data)
                best[side] = min(best.get(side, seconds), seconds)
        results[name] = {side: shape.events / seconds for side, seconds in best.items()}
    return results


def report(results: dict[str, dict[str, float]], cores: int) -> None:
    for name, rates in results.items():
        stock = rates.get("stock")
        for side, rate in rates.items():
            ratio = "" if side == "stock" or stock is None else f"  {rate / stock:.2f}x stock"
            if side == "production" and "stock-parquet" in rates:
                ratio += f", {rate / rates['stock-parquet']:.2f}x stock-parquet"
            print(f"[local[{cores}]] {name:10s} {side:10s} {rate / 1e6:7.3f}M events/s{ratio}",
                  flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="realistic,tumbling,session")
    parser.add_argument("--events", type=int)
    parser.add_argument("--keys", type=int)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--general", action="store_true", help="add the general operator's side")
    parser.add_argument("--sides", default="stock,stock-parquet,production",
                        help="comma-separated sides to run (production alone: no stock ratio)")
    parser.add_argument("--driver-memory",
                        help="spark.driver.memory, the heap a local session's tasks share "
                        "(default windtunnel's: a quarter of the memory up to 4g; Spark's is 1g)")
    parser.add_argument("--scaling", action="store_true")
    parser.add_argument("--pin", action="store_true",
                        help="with --scaling: pin each process (Python, JVM, Python workers) to "
                        "as many CPUs as its cores, so local[1] runs on one CPU")
    parser.add_argument("--files", type=int, default=2, help="input files per micro-batch")
    parser.add_argument("--batches", type=int, default=10, help="micro-batches")
    parser.add_argument("--warmup-events", type=int, default=20_000,
                        help="events of each side's warm-up run per shape (0: none)")
    parser.add_argument("--check-events", type=int, default=1_000,
                        help="events of the stream each shape's sides are checked on")
    parser.add_argument("--json", action="store_true", help="print the results as JSON (internal)")
    args = parser.parse_args(argv)
    global FILES_PER_BATCH
    FILES_PER_BATCH = args.files
    names = [n for n in args.shapes.split(",") if n]
    sides = [x for x in args.sides.split(",") if x] + (["general"] if args.general else [])
    unknown = sorted(set(sides) - set(SIDES))
    if unknown:
        parser.error(f"--sides: unknown {unknown}; use some of {', '.join(SIDES)}")
    if not args.scaling:
        results = measure(args.cores, names, args.events, args.keys, args.repeat, sides,
                          args.driver_memory, args.batches, args.warmup_events, args.check_events)
        if args.json:
            print("RESULTS " + json.dumps(results))
        else:
            report(results, args.cores)
        return 0
    by_cores: dict[int, dict[str, dict[str, float]]] = {}
    for cores in (1, 2):
        command = [sys.executable, __file__, "--shapes", args.shapes, "--repeat", str(args.repeat),
                   "--cores", str(cores), "--files", str(args.files), "--json",
                   "--sides", ",".join(sides), "--batches", str(args.batches),
                   "--warmup-events", str(args.warmup_events),
                   "--check-events", str(args.check_events)]
        if args.driver_memory:
            command += ["--driver-memory", args.driver_memory]
        if args.events:
            command += ["--events", str(args.events)]
        if args.keys:
            command += ["--keys", str(args.keys)]
        pinned = None
        if args.pin and hasattr(os, "sched_setaffinity"):
            pinned = functools.partial(os.sched_setaffinity, 0,
                                       sorted(os.sched_getaffinity(0))[:cores])
        done = subprocess.run(command, capture_output=True, text=True, check=True,
                              preexec_fn=pinned)
        line = next(x for x in done.stdout.splitlines() if x.startswith("RESULTS "))
        by_cores[cores] = json.loads(line.removeprefix("RESULTS "))
        report(by_cores[cores], cores)
    for name in names:
        for side in by_cores[1][name]:
            ratio = by_cores[2][name][side] / by_cores[1][name][side]
            print(f"scaling {name:10s} {side:10s} 2 cores / 1 core: {ratio:.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
