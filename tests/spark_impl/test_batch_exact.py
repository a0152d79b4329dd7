"""The foreachBatch exact path (spark_impl/batch_exact.py) against the oracle, on Spark.

Random keyed streams (out of order, late events, tolerances) are cut into random
micro-batches (one Parquet file each, ``maxFilesPerTrigger=1``); the path's output files
must equal the oracle's outputs, end-of-input flush included. A query stopped after k
micro-batches and restarted from its checkpoint, with a micro-batch replayed after its
output and state were written, must lose and duplicate nothing.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from windtunnel.oracle.engine import DEFAULT_RULES, operator_for
from windtunnel.oracle.model.results import Output
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Aggregation, FixedWindows, Query, SessionWindows
from windtunnel.oracle.model.stream import End, Event
from windtunnel.oracle.windows.driver import Driver

from .test_cluster import connect_server, standalone, windtunnel  # noqa: F401  (fixtures)

pytestmark = pytest.mark.spark

SCHEMA = "seq long, arrival_ms long, ts long, k long"


def events(n: int, keys: int, disorder: float, seed: int, spread_ms: int) -> pa.Table:
    """``n`` events: arrival one ms apart on average, ``disorder`` of them pushed back up to
    ``spread_ms`` in event time, keys uniform."""
    rng = np.random.default_rng(seed)
    arrival = np.cumsum(rng.integers(0, 3, n, dtype=np.int64))
    late = rng.random(n) < disorder
    ts = np.where(late, arrival - rng.integers(0, spread_ms + 1, n, dtype=np.int64), arrival)
    return pa.table(
        {
            "seq": np.arange(n, dtype=np.int64),
            "arrival_ms": arrival,
            "ts": ts,
            "k": rng.integers(0, keys, n, dtype=np.int64),
        }
    )


def write_batches(table: pa.Table, cuts: list[int], directory: Path) -> None:
    """One Parquet file per micro-batch, cut at ``cuts``, modification times in order."""
    directory.mkdir(parents=True, exist_ok=True)
    bounds = [0, *sorted(set(cuts)), table.num_rows]
    index = 0
    for lo, hi in itertools.pairwise(bounds):
        if hi > lo:
            path = directory / f"part-{index:05d}.parquet"
            pq.write_table(table.slice(lo, hi - lo), path)
            os.utime(path, (1_700_000_000 + index, 1_700_000_000 + index))
            index += 1


def oracle(query: Query, table: pa.Table, rules: Rules = DEFAULT_RULES, end: bool = True) -> list[Output]:
    driver = Driver(query, lambda q, c: operator_for(q, c, "tenzir"), rules)
    out: list[Output] = []
    data = table.to_pydict()
    for seq, at, ts, k in zip(data["seq"], data["arrival_ms"], data["ts"], data["k"], strict=True):
        driver.feed(Event(seq, {"k": k, "ts": ts}, at), out)
    if end:
        driver.feed(End(), out)
    return out


def run_path(spark: Any, query: Query, data: Path, root: Path, rules: Rules = DEFAULT_RULES, jvm: bool = True) -> Any:
    from windtunnel.spark_impl.batch_exact import ExactBatches, FileOutput, start, state_dir_of

    checkpoint = str(root / "ckpt")
    batches = ExactBatches(
        query, FileOutput(str(root / "out"), "parquet"), state_dir_of(checkpoint), rules=rules, jvm=jvm
    )
    frame = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(data))
    query_handle = start(frame, batches, checkpoint)
    query_handle.awaitTermination()
    return batches


def outputs(spark: Any, root: Path) -> list[Output]:
    from windtunnel.spark_impl.schema import OUTPUT_DDL, outputs_in_order

    rows = spark.read.schema(OUTPUT_DDL).parquet(str(root / "out")).collect()
    return outputs_in_order(r.asDict() for r in rows)


def assert_same(expected: list[Output], actual: list[Output]) -> None:
    from windtunnel.spark_impl.runs import divergences

    problems = divergences(expected, actual)
    assert not problems, "\n".join(problems[:10])
    assert len(expected) == len(actual)


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    n=st.integers(50, 2000),
    keys=st.integers(1, 30),
    disorder=st.sampled_from([0.0, 0.1, 0.4]),
    size_ms=st.sampled_from([5, 40, 300]),
    tolerance_ms=st.sampled_from([0, 7, 100]),
    close_at=st.sampled_from(["reaches", "passes", "max_timestamp"]),
    seed=st.integers(0, 2**16),
    cut_fractions=st.lists(st.floats(0.0, 1.0), max_size=4),
    count_only=st.booleans(),
    jvm=st.booleans(),
)
def test_equals_oracle_on_random_streams_and_micro_batches(
    spark: Any,
    n: int,
    keys: int,
    disorder: float,
    size_ms: int,
    tolerance_ms: int,
    close_at: str,
    seed: int,
    cut_fractions: list[float],
    count_only: bool,
    jvm: bool,
) -> None:
    from dataclasses import replace

    # the typed tumbling path (the JVM step in one Spark task, or int64 columns collected to
    # the Python step), with the count alone or with the window's start in the row
    query = Query(
        FixedWindows(size_ms, on="ts", tolerance_ms=tolerance_ms),
        group_by=("k",),
        aggregate=(Aggregation("n", "count"),) if count_only else (Aggregation("n", "count"), Aggregation("ws", "window_start")),
    )
    rules = replace(DEFAULT_RULES, close_at=close_at)
    table = events(n, keys, disorder, seed, 3 * size_ms)
    root = Path(tempfile.mkdtemp(prefix="wt-batch-exact-"))
    write_batches(table, [int(f * n) for f in cut_fractions], root / "data")
    batches = run_path(spark, query, root / "data", root, rules, jvm=jvm)
    batches.finish(spark)
    assert_same(oracle(query, table, rules), outputs(spark, root))


def test_null_times_and_keys_take_the_general_step_on_the_same_rows(spark: Any, tmp_path: Path) -> None:
    # micro-batch 1 has a null time (seq 3: an unusable-time drop) and a null key (seq 5:
    # the group null), so it runs on the general step; micro-batches 0 and 2 on the typed path
    query = Query(FixedWindows(10, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    table = pa.table(
        {
            "seq": pa.array(range(9), pa.int64()),
            "arrival_ms": pa.array([0, 1, 2, 3, 4, 5, 6, 7, 8], pa.int64()),
            "ts": pa.array([1, 12, 3, None, 25, 26, 2, 40, 41], pa.int64()),
            "k": pa.array([1, 1, 2, 1, 1, None, 1, 2, None], pa.int64()),
        }
    )
    write_batches(table, [3, 6], tmp_path / "data")
    batches = run_path(spark, query, tmp_path / "data", tmp_path)
    batches.finish(spark)
    expected = oracle(query, table)
    assert any(getattr(o, "reason", None) == "null_time" for o in expected)
    assert_same(expected, outputs(spark, tmp_path))


def test_restart_after_k_batches_and_a_replay_loses_and_duplicates_nothing(spark: Any, tmp_path: Path) -> None:
    from windtunnel.spark_impl.batch_state import forget_cached

    query = Query(FixedWindows(50, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    table = events(3000, 20, 0.2, 11, 200)
    cuts = [400, 900, 1300, 2000, 2600]
    write_batches(table.slice(0, 1300), cuts[:2], tmp_path / "data")  # 3 micro-batches first
    run_path(spark, query, tmp_path / "data", tmp_path)
    # a crash after micro-batch 2 wrote its output and state, before Spark's commit
    commits = tmp_path / "ckpt" / "commits"
    (commits / "2").unlink()
    forget_cached(tmp_path / "ckpt" / "windtunnel-batch-state")
    # more input arrives; the restart replays micro-batch 2, then runs the rest
    rest = table.slice(1300)
    bounds = [0, 700, 1300, rest.num_rows]
    for index, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        path = tmp_path / "data" / f"part-{3 + index:05d}.parquet"
        pq.write_table(rest.slice(lo, hi - lo), path)
        os.utime(path, (1_700_000_100 + index, 1_700_000_100 + index))
    batches = run_path(spark, query, tmp_path / "data", tmp_path)
    batches.finish(spark)
    assert_same(oracle(query, table), outputs(spark, tmp_path))
    state = tmp_path / "ckpt" / "windtunnel-batch-state"
    assert sorted(p.name for p in state.glob("*.state")) == ["4.state", "5.state"]


def test_not_eligible_queries_fall_back() -> None:
    from windtunnel.spark_impl.batch_exact import eligible

    fixed = Query(FixedWindows(60_000, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    idle = Query(
        FixedWindows(60_000, on="ts", idle_timeout_ms=5_000), group_by=("k",),
        aggregate=(Aggregation("n", "count"),),
    )
    sessions = Query(SessionWindows(1_000, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    assert eligible(fixed)
    assert not eligible(fixed, clock="system")
    assert not eligible(idle)
    assert not eligible(sessions)


FAST_SPEC = """
name: fast-job
window: {size: 200ms, on: ts, tolerance: 50ms}
group_by: user_id
aggregate: {txns: count(), amount: sum(amount_paise)}
"""


def payments(tmp: Path) -> Path:
    """A small payments stream as a spark-dir (three files, one micro-batch each)."""
    from windtunnel.simulator.outputs import write_spark_dir
    from windtunnel.simulator.workloads import simulate

    out = tmp / "stream"
    write_spark_dir(simulate("payments", events=240, seed=4, batch_size=80, late_fraction=0.2), out)
    return out


def oracle_lines(stream: Path) -> list[str]:
    import json

    from windtunnel.oracle.engine import run
    from windtunnel.oracle.model.results import to_jsonl_line
    from windtunnel.oracle.scenario import load_yaml, parse_scenario

    scenario = parse_scenario(load_yaml(FAST_SPEC) | {"input": []})
    records = [
        json.loads(line)
        for path in sorted(stream.glob("batch-*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    items = [Event(r["seq"], json.loads(r["value"]), r["arrival_ms"]) for r in records]
    return sorted(to_jsonl_line(o) for o in run(scenario.query, items))


def file_lines(out: Path) -> list[str]:
    import json

    from windtunnel.oracle.model.results import to_jsonl_line
    from windtunnel.spark_impl.schema import OUTPUT_COLUMNS, output_of

    rows = [
        json.loads(line)
        for path in sorted(out.glob("part-*.json"))
        for line in path.read_text().splitlines()
    ]
    return sorted(to_jsonl_line(output_of({c: r.get(c) for c in OUTPUT_COLUMNS})) for r in rows)


def test_run_job_picks_the_fast_path_and_a_rerun_adds_nothing(spark: Any, tmp_path: Path) -> None:
    from windtunnel.oracle.scenario import load_yaml, parse_scenario
    from windtunnel.spark_impl.job import Sink, records_source, run_job, spec_of

    spec = spec_of(parse_scenario(load_yaml(FAST_SPEC) | {"input": []}))
    stream = payments(tmp_path)
    sink = Sink("json", path=str(tmp_path / "out"))
    checkpoint = str(tmp_path / "ckpt")
    first = run_job(spec, records_source(spark, stream), sink, checkpoint=checkpoint)
    again = run_job(spec, records_source(spark, stream), sink, checkpoint=checkpoint)
    assert (tmp_path / "ckpt" / "windtunnel-batch-state").is_dir()
    assert not (tmp_path / "ckpt" / "state").exists()  # no Spark operator state: not the general path
    assert [b.rows_in for b in first.batches] == [80, 80, 81]  # the end row rides in the last
    assert first.rows_out == len(oracle_lines(stream)) and again.rows_out == 0
    assert file_lines(tmp_path / "out") == oracle_lines(stream)


def test_a_checkpoint_of_the_general_operator_stays_on_it(tmp_path: Path) -> None:
    from windtunnel.spark_impl.batch_exact import checkpoint_allows

    assert checkpoint_allows(str(tmp_path / "new"))
    (tmp_path / "general" / "state").mkdir(parents=True)
    assert not checkpoint_allows(str(tmp_path / "general"))
    (tmp_path / "both" / "state").mkdir(parents=True)
    (tmp_path / "both" / "windtunnel-batch-state").mkdir()
    assert checkpoint_allows(str(tmp_path / "both"))


@pytest.mark.cluster
@pytest.mark.parametrize("where", ["standalone", "connect"])
def test_fast_path_on_a_standalone_cluster_and_spark_connect(
    where: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    address = request.getfixturevalue("standalone" if where == "standalone" else "connect_server")
    (tmp_path / "spec.yaml").write_text(FAST_SPEC)
    stream = payments(tmp_path)
    ran = windtunnel(
        "run", str(tmp_path / "spec.yaml"), str(stream), "--out", str(tmp_path / "out"),
        "--checkpoint", str(tmp_path / "ckpt"), "--master" if where == "standalone" else "--remote",
        address, tmp=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "fast-job: 3 micro-batches, 241 rows in" in ran.stderr
    assert (tmp_path / "ckpt" / "windtunnel-batch-state").is_dir()
    assert file_lines(tmp_path / "out") == oracle_lines(stream)


def test_fast_path_hands_each_micro_batch_to_foreach_batch_and_console(
    spark: Any, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from windtunnel.oracle.model.results import to_jsonl_line
    from windtunnel.oracle.scenario import load_yaml, parse_scenario
    from windtunnel.spark_impl.job import Sink, records_source, run_job, spec_of
    from windtunnel.spark_impl.schema import outputs_in_order

    spec = spec_of(parse_scenario(load_yaml(FAST_SPEC) | {"input": []}))
    stream = payments(tmp_path)
    seen: list[tuple[int, list[dict[str, Any]]]] = []

    def keep(df: Any, batch_id: int) -> None:
        seen.append((batch_id, [r.asDict() for r in df.collect()]))

    checkpoint = str(tmp_path / "ckpt")
    report = run_job(spec, records_source(spark, stream), Sink("foreach_batch", function=keep), checkpoint=checkpoint)
    assert (tmp_path / "ckpt" / "windtunnel-batch-state").is_dir()
    assert [batch_id for batch_id, _ in seen] == [0, 1, 2]
    rows = [row for _, part in seen for row in part]
    assert report.rows_out == len(rows)
    assert sorted(to_jsonl_line(o) for o in outputs_in_order(rows)) == oracle_lines(stream)
    run_job(spec, records_source(spark, stream), Sink("console"), checkpoint=str(tmp_path / "c2"))
    assert "end_of_input" in capfd.readouterr().out


def test_answers_a_stopped_process_left_are_written_by_the_next_run(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the JVM step's output files are written in the background from answers kept before
    # each state version (spark_impl/answer_log.py); a process that stops first leaves them
    # as answers: the next run over the checkpoint writes them, and loses nothing
    from windtunnel.spark_impl.answer_log import AnswerLog, writer_for
    from windtunnel.spark_impl.batch_exact import ExactBatches, state_dir_of

    query = Query(FixedWindows(50, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    table = events(3000, 20, 0.2, 12, 200)
    write_batches(table.slice(0, 1500), [500, 1000], tmp_path / "data")
    state_dir = state_dir_of(str(tmp_path / "ckpt"))
    writer = writer_for(state_dir)
    monkeypatch.setattr(ExactBatches, "_write_answer", lambda *args: None)  # the process stops first
    run_path(spark, query, tmp_path / "data", tmp_path)
    writer.wait()
    monkeypatch.undo()
    log = AnswerLog(state_dir)
    assert log.pending() == [0, 1, 2]  # committed micro-batches, their rows only in answers
    assert not list((tmp_path / "out").glob("part-*"))
    (log.directory / "3.answer").write_bytes(b"never saved")  # no state version 3: Spark replays 3
    rest = table.slice(1500)
    for index, (lo, hi) in enumerate(itertools.pairwise([0, 800, rest.num_rows])):
        path = tmp_path / "data" / f"part-{3 + index:05d}.parquet"
        pq.write_table(rest.slice(lo, hi - lo), path)
        os.utime(path, (1_700_000_100 + index, 1_700_000_100 + index))
    batches = run_path(spark, query, tmp_path / "data", tmp_path)
    batches.finish(spark)
    assert log.pending() == []
    assert_same(oracle(query, table), outputs(spark, tmp_path))


def test_a_failed_background_write_stops_the_query_and_a_restart_writes_it(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from windtunnel.spark_impl.batch_exact import FileOutput

    query = Query(FixedWindows(50, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    table = events(2000, 20, 0.2, 13, 200)
    write_batches(table, [500, 1000, 1500], tmp_path / "data")
    original = FileOutput.__call__

    def full(self: Any, out: Any, name: str, spark: Any) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(FileOutput, "__call__", full)
    with pytest.raises(Exception, match="No space left on device"):
        run_path(spark, query, tmp_path / "data", tmp_path).flush()
    monkeypatch.setattr(FileOutput, "__call__", original)
    batches = run_path(spark, query, tmp_path / "data", tmp_path)
    batches.finish(spark)
    assert_same(oracle(query, table), outputs(spark, tmp_path))


def test_rows_in_are_the_rows_the_step_read_when_the_jvm_task_declines(spark: Any, tmp_path: Path) -> None:
    # a count per string key: the JVM task reads the first row, declines (the key is JSON
    # text, not an integer) and the Python step reads the micro-batch again; Spark counts
    # the rows of both reads, the report the rows of the micro-batch
    from windtunnel.oracle.scenario import load_yaml, parse_scenario
    from windtunnel.spark_impl.job import Sink, records_source, run_job, spec_of

    counted = FAST_SPEC.replace("aggregate: {txns: count(), amount: sum(amount_paise)}", "aggregate: {txns: count()}")
    spec = spec_of(parse_scenario(load_yaml(counted) | {"input": []}))
    stream = payments(tmp_path)
    report = run_job(spec, records_source(spark, stream), Sink("json", path=str(tmp_path / "out")),
                     checkpoint=str(tmp_path / "ckpt"))
    assert [b.rows_in for b in report.batches] == [80, 80, 81]  # the end row rides in the last


def test_a_job_on_the_jvm_step_writes_its_files_in_the_background_and_equals_the_oracle(
    spark: Any, tmp_path: Path
) -> None:
    # run_job over typed columns (a user's streaming DataFrame): count per integer key, so
    # the JVM step runs and its output files are written from the answer log; by the time
    # run_job returns every file is there and the log is empty
    from windtunnel.spark_impl.batch_exact import state_dir_of
    from windtunnel.spark_impl.job import Sink, run_job
    from windtunnel.spark_impl.schema import OUTPUT_DDL, outputs_in_order
    from windtunnel.spark_impl.sources import dataframe_source

    query = Query(FixedWindows(50, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    table = events(2500, 15, 0.2, 21, 200)
    write_batches(table, [600, 1400, 2000], tmp_path / "data")
    frame = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(tmp_path / "data"))
    checkpoint = str(tmp_path / "ckpt")
    report = run_job(query, dataframe_source(frame), Sink("parquet", path=str(tmp_path / "out")), checkpoint=checkpoint)
    answers = Path(state_dir_of(checkpoint)) / "answers"
    assert answers.is_dir() and not list(answers.iterdir())  # the JVM step ran; all written out
    assert [b.rows_in for b in report.batches] == [600, 800, 600, 500]
    rows = spark.read.schema(OUTPUT_DDL).parquet(str(tmp_path / "out")).collect()
    assert report.rows_out == len(rows)
    assert_same(oracle(query, table, end=False), outputs_in_order(r.asDict() for r in rows))
