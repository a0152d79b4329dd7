"""Many scenarios through the production operator's real streaming path, in one query.

Each scenario is a *lane*: an independent stream with its own seq, wall clock, keys and end
of input (the operator keeps lanes apart: a lane's key is part of its slice's key, and its
wall clock moves only with its own arrivals). Micro-batch ``i`` of the query holds
micro-batch ``i`` of every scenario (:func:`windtunnel.spark_impl.harness.feed.feed`: a ``batch``
item is one micro-batch, lone events one each, end of input in the last), written as
``partitions`` Parquet files read by Spark's file source with ``maxFilesPerTrigger``, so a
micro-batch arrives in several input partitions, as from Kafka. ``restarts`` stops the
query after those micro-batches and starts it again from the checkpoint (the input of later
micro-batches is written only then). The outputs are read back from the Parquet sink and
returned per scenario, in the oracle's order where it is defined.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from windtunnel.oracle.model.results import Output
from windtunnel.oracle.scenario import Scenario
from windtunnel.spark_impl.harness.feed import Feed, feed
from windtunnel.spark_impl.schema import output_of, print_order

INPUT_SCHEMA = pa.schema(
    [("lane", pa.int64()), ("kind", pa.string()), ("seq", pa.int64()),
     ("arrival_ms", pa.int64()), ("after_seq", pa.int64()), ("payload", pa.string())]
)
INPUT_DDL = "lane long, kind string, seq long, arrival_ms long, after_seq long, payload string"


@dataclass(frozen=True, slots=True)
class LaneRun:
    """One scenario's outputs (in print order), each output's stream step, and how it was fed."""

    outputs: tuple[Output, ...]
    feed: Feed
    steps: tuple[int, ...] = ()


def _write_batch(directory: Path, index: int, rows: list[tuple[Any, ...]], partitions: int,
                 rng: random.Random) -> None:
    """Micro-batch ``index`` as ``partitions`` files (rows spread at random, order kept),
    modification times after every earlier micro-batch's."""
    parts: list[list[tuple[Any, ...]]] = [[] for _ in range(partitions)]
    for row in rows:
        parts[rng.randrange(partitions)].append(row)
    for part, chunk in enumerate(parts):
        columns: list[Any] = list(zip(*chunk, strict=True)) if chunk else [() for _ in INPUT_SCHEMA]
        table = pa.table(
            {f.name: pa.array(list(col), type=f.type) for f, col in zip(INPUT_SCHEMA, columns, strict=True)}
        )
        path = directory / f"batch-{index:05d}-{part:03d}.parquet"
        pq.write_table(table, path)
        stamp = 1_700_000_000 + index * 10 + part * 0.001
        os.utime(path, (stamp, stamp))


def run_lanes(
    spark: Any,
    scenarios: Sequence[Scenario],
    *,
    slices: int = 3,
    partitions: int = 2,
    restarts: Sequence[int] = (),
    seed: int = 0,
    workdir: str | None = None,
    micro_batch: int = 1,
) -> list[LaneRun]:
    """Every scenario as a lane of one production query (they must share one query: window,
    group_by, aggregate, rules, time unit and start of the wall clock); ``restarts``: stop
    after these micro-batch indexes and resume from the checkpoint; ``micro_batch``: lone
    events per micro-batch (a ``batch`` item is always one). Raises InvalidSpec when
    the scenarios do not share a query, EngineUnavailable when their path
    (:func:`~windtunnel.spark_impl.jobs.path.choose_path`) is not the production operator."""
    from windtunnel.oracle.model.errors import EngineUnavailable, InvalidSpec
    from windtunnel.spark_impl.jobs.path import choose_path
    from windtunnel.spark_impl.jobs.spec import spec_of
    from windtunnel.spark_impl.jvm.engine_spec import engine_spec
    from windtunnel.spark_impl.production.run import run_production
    from windtunnel.spark_impl.production.sink import ProductionSink

    if not scenarios:
        return []
    jobs = {spec_of(s) for s in scenarios}
    specs = {engine_spec(j.query, j.rules, j.time_unit_ms, j.start_wall_ms) for j in jobs}
    if len(specs) != 1:
        raise InvalidSpec("scenarios", len(specs), "lanes of one query share its spec",
                          "group the scenarios by spec")
    job = spec_of(scenarios[0])
    choice = choose_path(job, spark=spark, sink_kind="parquet", slices=slices)
    if not choice.production:
        raise EngineUnavailable(
            f"the production operator cannot run these scenarios: {'; '.join(choice.reasons)}"
        )
    feeds = [
        feed(s.items, s.query.group_by, buckets=1, micro_batch=micro_batch,
             start_wall_ms=s.start_wall_ms)
        for s in scenarios
    ]
    count = max(len(f.batches) for f in feeds)
    batches: list[list[tuple[Any, ...]]] = [[] for _ in range(count)]
    for lane, fed in enumerate(feeds):
        for index, rows in enumerate(fed.batches):
            for _bucket, kind, seq, arrival, after, payload in rows:
                batches[index].append((lane, kind, seq, arrival, after, payload))
    root = Path(workdir or tempfile.mkdtemp(prefix="windtunnel-lanes-"))
    rng = random.Random(seed)
    source_dir, out_dir, checkpoint = root / "in", root / "out", root / "checkpoint"
    source_dir.mkdir(parents=True, exist_ok=True)
    stops = [*sorted({r for r in restarts if 0 <= r < count - 1}), count - 1]
    written = 0
    try:
        for stop in stops:
            while written <= stop:
                _write_batch(source_dir, written, batches[written], partitions, rng)
                written += 1
            source = (spark.readStream.schema(INPUT_DDL)
                      .option("maxFilesPerTrigger", partitions).parquet(str(source_dir)))
            run_production(
                job, source, ProductionSink("parquet", str(out_dir)), slices=slices,
                options={"availableNow": True}, checkpoint=str(checkpoint), timeout_s=None,
            )
        from windtunnel.spark_impl.schema import OUTPUT_DDL

        rows = spark.read.schema(OUTPUT_DDL + ", lane long").parquet(str(out_dir)).collect()
    finally:
        if workdir is None:
            shutil.rmtree(root, ignore_errors=True)
    by_lane: dict[int, list[dict[str, Any]]] = {i: [] for i in range(len(scenarios))}
    for row in rows:
        record = row.asDict()
        by_lane[int(record.pop("lane"))].append(record)
    runs = []
    for i in range(len(scenarios)):
        records = sorted(by_lane[i], key=print_order)
        runs.append(LaneRun(tuple(output_of(r) for r in records), feeds[i],
                            tuple(int(r["step"]) for r in records)))
    return runs
