"""The general operator survives stop and restart from its checkpoint: nothing lost, nothing
duplicated.

One streaming query (scripted micro-batches -> ``apply_window`` -> JSON file sink) is
run in pieces: each run sees the stream only up to a stop point and ends there
(AvailableNow); the next run restarts from the same checkpoint with more of the stream
and continues from the committed source offset and operator state. One stop also
simulates a crash after the sink wrote a micro-batch but before Spark committed it (its
commit-log entry is deleted): the restart runs that micro-batch again, and the file
sink's log must keep its output once. The union of everything the sink committed must
equal the oracle's outputs for the whole stream, every field included.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from windtunnel.oracle.engine import replay
from windtunnel.oracle.model.results import Result
from windtunnel.oracle.scenario import parse_scenario
from windtunnel.spark_impl.harness.feed import feed
from windtunnel.spark_impl.harness.replay import compare_with_oracle
from windtunnel.spark_impl.harness.runs import SparkRun
from windtunnel.spark_impl.schema import OUTPUT_DDL, output_of, print_order
from windtunnel.spark_impl.session import SPEED_CONF

from .json_runs import run_piece

pytestmark = pytest.mark.spark

BUCKETS = 2


def stream(seed: int, n: int = 40, batch: int = 8, idle: bool = True) -> dict:
    """Grouped disordered events with arrival times and a null time, in batches of ``batch``:
    hopping windows with tolerance, late drops, idle_timeout closes (``idle``) and an end
    flush."""
    rng = random.Random(seed)
    items, t, wall = [], 0, 0
    for i in range(0, n, batch):
        events = []
        for _ in range(batch):
            t += rng.randrange(0, 300)
            wall += rng.randrange(0, 200)
            late = rng.randrange(0, 2500) if rng.random() < 0.2 else 0
            ts = None if rng.random() < 0.03 else t - late
            events.append({"event": {"ts": ts, "k": f"k{rng.randrange(5)}", "v": i}, "at": wall})
        items.append({"batch": events})
    items.append({"advance": 300})
    window = {"size": 1000, "every": 500, "tolerance": 200, "idle_timeout": 1200}
    if not idle:
        del window["idle_timeout"]
    return {
        "window": window,
        "group_by": "k",
        "aggregate": {"n": "count()", "total": "sum(v)"},
        "input": items,
    }


def committed(spark, out: Path, scenario, fed) -> SparkRun:
    """Everything the file sink committed (its metadata log), as one run."""
    records = [r.asDict() for r in spark.read.schema(OUTPUT_DDL).json(str(out)).collect()]
    records.sort(key=print_order)
    return SparkRun(
        Result(tuple(output_of(r) for r in records)), fed, tuple(r["step"] for r in records)
    )


@pytest.mark.parametrize("idle", [True, False], ids=["idle-timeout", "no-idle-timeout"])
def test_stop_and_restart_at_several_points_loses_and_duplicates_nothing(
    spark, tmp_path, idle
) -> None:
    scenario = parse_scenario(stream(seed=9, idle=idle))
    oracle = replay(scenario)
    reasons = {(o.type, o.reason) for o in oracle}
    assert {("drop", "late"), ("drop", "null_time"), ("emit", "end_of_input")} <= reasons
    assert (("emit", "idle_timeout") in reasons) is idle
    fed = feed(scenario.items, scenario.query.group_by, buckets=BUCKETS, micro_batch=1)
    assert len(fed.batches) == 6  # 5 batches, the advance and end of input in the 6th
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    # stop after micro-batches 0..1; then a crash after micro-batch 3 was written but
    # not committed; then the rest of the stream
    assert run_piece(spark, fed, scenario, 2, out, checkpoint, BUCKETS) == [0, 1]
    assert run_piece(spark, fed, scenario, 4, out, checkpoint, BUCKETS) == [2, 3]
    commits = checkpoint / "commits"
    assert sorted(int(p.name) for p in commits.iterdir() if p.name.isdigit()) == [0, 1, 2, 3]
    (commits / "3").unlink()  # micro-batch 3 runs again on restart
    (commits / ".3.crc").unlink(missing_ok=True)  # with its checksum, as if never written
    assert run_piece(spark, fed, scenario, len(fed.batches), out, checkpoint, BUCKETS) == [3, 4, 5]
    assert state_files(checkpoint, ".changelog")  # the restart committed the new way
    run = committed(spark, out, scenario, fed)
    assert compare_with_oracle(scenario, run) == []
    assert len(run.result) == len(oracle)



SPARK_DEFAULT_FILES = {
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "false",
    "spark.sql.streaming.checkpointFileManagerClass": (
        "org.apache.spark.sql.execution.streaming.checkpointing.FileContextBasedCheckpointFileManager"
    ),
}
"""Spark's own defaults for the settings ``spark_session`` changes (windtunnel before them)."""


def state_files(checkpoint: Path, suffix: str) -> list[str]:
    """Names of the operator state's files ending in ``suffix`` (RocksDB snapshots ``.zip``,
    changelogs ``.changelog``)."""
    return [p.name for p in (checkpoint / "state").rglob(f"*{suffix}") if p.is_file()]


def test_a_checkpoint_written_with_sparks_default_file_settings_restarts_under_ours(
    spark, tmp_path
) -> None:
    # micro-batches 0..2 under Spark's defaults (snapshot commits, FileContext files), the rest
    # under spark_session's settings (changelog commits, FileSystem files), one checkpoint
    scenario = parse_scenario(stream(seed=4, idle=False))
    oracle = replay(scenario)
    fed = feed(scenario.items, scenario.query.group_by, buckets=BUCKETS, micro_batch=1)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    ours = {name: spark.conf.get(name) for name in SPARK_DEFAULT_FILES}
    assert ours == {name: SPEED_CONF[name] for name in SPARK_DEFAULT_FILES}  # spark_session's
    for name, value in SPARK_DEFAULT_FILES.items():
        spark.conf.set(name, value)
    try:
        assert run_piece(spark, fed, scenario, 3, out, checkpoint, BUCKETS) == [0, 1, 2]
        assert state_files(checkpoint, ".zip") and not state_files(checkpoint, ".changelog")
    finally:
        for name, value in ours.items():
            spark.conf.set(name, value)
    assert run_piece(spark, fed, scenario, len(fed.batches), out, checkpoint, BUCKETS) == [3, 4, 5]
    assert state_files(checkpoint, ".changelog")  # the restart committed the new way
    run = committed(spark, out, scenario, fed)
    assert compare_with_oracle(scenario, run) == []
    assert len(run.result) == len(oracle)
