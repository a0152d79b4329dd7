"""The production operator's cost per micro-batch as its keys grow: flat, or growing with history.

Workload: Nexmark's bid stream (the generator's rules, ``simulator/nexmark/rules.py``: new
auctions at 3 in 50 events, each bid to the hot auction or one of the 100 latest), in event
order at 10,000 events a second, written as ``--batches`` Parquet files of ``--bids`` bids
(one micro-batch each). Query: Nexmark Q5's window stage (``examples/nexmark/q5-hot-items.yaml``):
bids counted per auction in 10 s windows every 2 s, default profile. Every auction keeps its
clock, so the keys held grow with the stream (about 0.065 per bid).

Runs ``run_job`` (the production operator, a Parquet sink) in one session after a small warm-up
run, and prints per quarter of the micro-batches the median and mean micro-batch duration
(one micro-batch in K+1 also writes its slices' snapshots) and the median bytes of state
written per micro-batch (the files of its state version); the ratio last quarter / second
quarter of both; the whole run's rate; the state at the end on the checkpoint (the files the
last version is read from, and per key) and in memory (the driver JVM's heap growth per key
added, local mode, after full collections).

``--distinct`` sends every bid to an auction of its own (as many keys as bids, each holding
its clock and five open windows): the memory per key at millions of keys.

``--jar PATH`` runs another build of the operator (e.g. the jar shipped by an earlier commit)
for a before/after comparison.

Run: python benchmarks/state_growth.py [--batches B] [--bids N] [--distinct] [--jar PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from windtunnel.oracle import Aggregation, FixedWindows, Query
from windtunnel.simulator.nexmark import rules
from windtunnel.simulator.nexmark.config import NexmarkKnobs

QUERY = Query(
    FixedWindows(10_000, on="dateTime", every_ms=2_000),
    group_by=("auction",),
    aggregate=(Aggregation("num", "count"),),
)
"""Nexmark Q5's window stage: bids per auction, 10 s windows every 2 s."""
BASE_MS = 1_767_225_600_000
EVENT_US = 100
"""Nexmark's default rate: 10,000 events a second of event time."""


@dataclass(frozen=True, slots=True)
class Growth:
    """One run: per micro-batch its duration (ms) and state bytes written; at the end the
    state's bytes on the checkpoint and the keys it holds; the JVM's heap in use after a full
    collection at the second and the last micro-batch, and the keys held then."""

    durations_ms: tuple[int, ...]
    written: tuple[int, ...]
    seconds: float
    bids: int
    state_bytes: int
    keys: int
    heap: tuple[int, int] = (0, 0)
    heap_keys: tuple[int, int] = (0, 0)
    snapshots: tuple[bool, ...] = ()
    """Per micro-batch: whether it wrote a slice's snapshot."""


def bids(count: int, seed: int = 5, *, distinct: bool = False) -> pa.Table:
    """The first ``count`` bids of Nexmark's stream: seq, arrival_ms (= dateTime: in order),
    dateTime (epoch ms) and auction; ``distinct``: every bid to an auction of its own."""
    config = NexmarkKnobs()
    per_epoch = config.total_proportion
    numbers = np.arange(count * per_epoch // config.bid_proportion + per_epoch, dtype=np.int64)
    ids = numbers[rules.kinds(numbers, config) == rules.BID][:count]
    auction = (np.arange(len(ids), dtype=np.int64) + rules.FIRST_AUCTION_ID if distinct
               else rules.bid_auctions(ids, config, np.random.default_rng(seed)))
    date_time = BASE_MS + ids * EVENT_US // 1000
    return pa.table({
        "seq": np.arange(len(ids), dtype=np.int64),
        "arrival_ms": date_time,
        "dateTime": date_time,
        "auction": auction,
    })


def write_batches(table: pa.Table, directory: Path, batches: int) -> None:
    """``batches`` Parquet files in stream order, modification times increasing."""
    directory.mkdir(parents=True, exist_ok=True)
    size = -(-table.num_rows // batches)
    for index in range(batches):
        path = directory / f"part-{index:05d}.parquet"
        pq.write_table(table.slice(index * size, size), path)
        os.utime(path, (1_700_000_000 + index, 1_700_000_000 + index))


def version_bytes(checkpoint: Path, version: int) -> int:
    """Bytes of the state files micro-batch ``version`` wrote (its version folder)."""
    folder = checkpoint / "windtunnel" / "state" / str(version)
    if not folder.is_dir():
        return 0
    return sum(p.stat().st_size for p in folder.iterdir() if not p.name.startswith("."))


def wrote_snapshot(checkpoint: Path, version: int) -> bool:
    """Whether micro-batch ``version`` wrote a snapshot of some slice (a chain starting at it;
    a COMMIT without chains: every file written is one)."""
    commit = checkpoint / "windtunnel" / "state" / str(version) / "COMMIT"
    if not commit.is_file():
        return False
    fields = dict(line.split("=", 1) for line in commit.read_text().splitlines() if "=" in line)
    if "chains" not in fields:
        return str(version) in fields["files"].split(",")
    return any(part.split(":")[0] == str(version) for part in fields["chains"].split(","))


def held_bytes(checkpoint: Path) -> int:
    """Bytes of the files the newest committed version is read from (per slice its chain: a
    snapshot and the deltas after it; a COMMIT without chains names one file per slice)."""
    root = checkpoint / "windtunnel" / "state"
    newest = max(int(p.name) for p in root.iterdir() if (p / "COMMIT").is_file())
    fields = dict(line.split("=", 1) for line in (root / str(newest) / "COMMIT").read_text().splitlines()
                  if "=" in line)
    parts = fields["chains"].split(",") if "chains" in fields else fields["files"].split(",")
    return sum((root / version / f"slice-{index}").stat().st_size
               for index, part in enumerate(parts) for version in part.split(":") if version not in ("", "-1"))


def heap_in_use(spark: Any) -> int:
    """Bytes of the driver JVM's heap in use after a full collection (local mode: the tasks'
    slice states live there)."""
    jvm = spark.sparkContext._jvm
    jvm.java.lang.System.gc()
    runtime = jvm.java.lang.Runtime.getRuntime()
    return int(runtime.totalMemory() - runtime.freeMemory())


def keys_so_far(directory: Path) -> list[int]:
    """The distinct auctions up to and including each file (micro-batch) of ``directory``."""
    columns = [pq.read_table(path, columns=["auction"]).column("auction").to_numpy()
               for path in sorted(directory.glob("*.parquet"))]
    ends = np.cumsum([len(column) for column in columns])
    _, first = np.unique(np.concatenate(columns), return_index=True)
    return [int(n) for n in np.searchsorted(np.sort(first), ends)]


def run(spark: Any, directory: Path, work: Path, *, heap: bool = False) -> Growth:
    """``run_job`` over the Parquet files in ``directory`` (one micro-batch each); ``heap``:
    also measure the heap in use at the second and the last micro-batch."""
    from windtunnel.spark_impl.job import Sink, run_job
    from windtunnel.spark_impl.sources import dataframe_source

    checkpoint = work / "ckpt"
    durations: list[int] = []
    written: list[int] = []
    counts = keys_so_far(directory)
    heaps: dict[int, int] = {}
    snapshots: list[bool] = []

    def tracked(batch: Any) -> None:
        durations.append(batch.duration_ms)
        written.append(version_bytes(checkpoint, batch.batch_id))
        snapshots.append(wrote_snapshot(checkpoint, batch.batch_id))
        if heap and batch.batch_id in (1, len(counts) - 1):
            heaps[batch.batch_id] = heap_in_use(spark)

    source = (
        spark.readStream.schema("seq long, arrival_ms long, dateTime long, auction long")
        .option("maxFilesPerTrigger", 1).parquet(str(directory))
    )
    started = time.perf_counter()
    report = run_job(QUERY, dataframe_source(source), Sink("parquet", path=str(work / "out")),
                     checkpoint=str(checkpoint), on_batch=tracked)
    seconds = time.perf_counter() - started
    last = len(counts) - 1
    return Growth(tuple(durations), tuple(written), seconds, sum(b.rows_in for b in report.batches),
                  held_bytes(checkpoint), counts[-1], (heaps.get(1, 0), heaps.get(last, 0)),
                  (counts[1], counts[last]) if len(counts) > 1 else (0, 0), tuple(snapshots))


def quarters(values: tuple[int, ...]) -> list[float]:
    """The median of each quarter of ``values`` (at least one value each)."""
    n = len(values)
    bounds = [round(n * q / 4) for q in range(5)]
    return [float(statistics.median(values[bounds[q]:max(bounds[q + 1], bounds[q] + 1)])) for q in range(4)]


def report_lines(growth: Growth) -> list[str]:
    durations, written = quarters(growth.durations_ms), quarters(growth.written)
    n = len(growth.durations_ms)
    means = [statistics.fmean(growth.durations_ms[round(n * q / 4):max(round(n * (q + 1) / 4), round(n * q / 4) + 1)])
             for q in range(4)]
    lines = [f"{len(growth.durations_ms)} micro-batches, {growth.bids:,} bids, {growth.keys:,} auctions"]
    for q in range(4):
        lines.append(f"quarter {q + 1}: median {durations[q]:7.0f} ms (mean {means[q]:7.0f}), written "
                     f"{written[q] / 1e6:8.3f} MB per micro-batch (median)")
    lines.append(f"ratio last/second quarter: duration {durations[3] / max(durations[1], 1):.2f}x, "
                 f"bytes written {written[3] / max(written[1], 1):.2f}x")
    # the second half: the first micro-batches include the warm-up of the JIT compiler
    half = len(growth.durations_ms) // 2
    full = [d for d, snap in zip(growth.durations_ms[half:], growth.snapshots[half:], strict=False) if snap]
    delta = [d for d, snap in zip(growth.durations_ms[half:], growth.snapshots[half:], strict=False) if not snap]
    if full and delta:
        lines.append(f"second half: {len(full)} micro-batches writing snapshots, median {statistics.median(full):.0f} ms;"
                     f" {len(delta)} writing deltas only, median {statistics.median(delta):.0f} ms")
    lines.append(f"whole run: {growth.bids / growth.seconds / 1e6:.3f}M bids/s ({growth.seconds:.1f} s)")
    lines.append(f"state at the end: {growth.state_bytes / 1e6:.1f} MB on the checkpoint (the last version's files), "
                 f"{growth.state_bytes / max(growth.keys, 1):.1f} bytes per key")
    added = growth.heap_keys[1] - growth.heap_keys[0]
    if growth.heap[1] and added > 0:
        lines.append(f"in memory: {(growth.heap[1] - growth.heap[0]) / added:.0f} bytes per key (heap growth "
                     f"after a full collection over the {added:,} keys added after micro-batch 1)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--bids", type=int, default=100_000, help="bids per micro-batch")
    parser.add_argument("--distinct", action="store_true",
                        help="every bid to an auction of its own: as many keys as bids")
    parser.add_argument("--jar", type=Path, help="this operator jar instead of the sources' build")
    args = parser.parse_args()

    from windtunnel.spark_impl.session import spark_session

    if args.jar is not None:
        from windtunnel.spark_impl.jvm import binding

        jar = args.jar.resolve()
        binding.jar_for_spark = lambda: (jar, "given")

    spark = spark_session(shuffle_partitions=2)
    spark.sparkContext.setLogLevel("ERROR")
    root = Path(tempfile.mkdtemp(prefix="state-growth-"))
    write_batches(bids(args.batches * args.bids, distinct=args.distinct), root / "data", args.batches)
    write_batches(bids(20_000, seed=1), root / "warmup", 2)
    run(spark, root / "warmup", root / "warm")
    for line in report_lines(run(spark, root / "data", root / "run", heap=True)):
        print(line)
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
