"""The stock mapping (withWatermark + window()/session_window(), append mode) on a real
local Spark against the oracle's ``spark`` profile, micro-batch by micro-batch.

Emissions are compared as multisets of the contract's JSON lines, ``after_seq`` and
``wall_ms`` included (they say in which micro-batch Spark emitted the window). Drops are
not compared: stock Spark drops late rows without reporting them.
"""

from __future__ import annotations

import json
import os
import random

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli
from windtunnel.oracle.engine import replay
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.stream import Advance, Batch, End, Event
from windtunnel.oracle.scenario import load_yaml, parse_scenario
from windtunnel.spark_impl.harness.stock_replay import compare_stock, micro_batches, replay_stock
from windtunnel.spark_impl.stock.mapping import check_stock, stock_window
from windtunnel.spark_impl.stock.payload import payload_schema

# Tumbling 10, delay 5, lone events. One global watermark: wm_N = max event time of
# micro-batches 0..N-1, minus 5, never below 0; a row is late when its window's end
# <= wm_{N-1}.
#
#   seq  0    1   2   3   4   5   6   7     8   9
#   ts  -20   2  25  12   3  31   1  44  null  60
#   key  a    a   a   b   b   b   a   a     b   c
#
# seq 0: [-20,-10) ends before the epoch floor -> late in every split.
# The advance ends a run of lone events. Two per micro-batch: (0 1) (2) (3 4) (5 6) ...:
# seq 6 (batch 3) sees wm_2 = 25 - 5 = 20 >= 10 -> late. Four: (0 1 2) (3 4 5 6) (7 8 9):
# seq 6 (batch 1) sees wm_0 = 0 -> kept in [0,10).
# [40,50) is emitted by the no-data micro-batch after the input (wm 55); [60,70) never.
TUMBLING = """
profile: spark
window: {size: 10, tolerance: 5}
group_by: k
aggregate: {n: count(), s: sum(v), lo: min(v), hi: max(v), mean: avg(v),
            from: window_start(), to: window_end()}
input:
  - {event: {ts: -20, k: a, v: 9}, at: 1}
  - {event: {ts: 2, k: a, v: 1}, at: 2}
  - {event: {ts: 25, k: a, v: 4}, at: 3}
  - {advance: 5}
  - {event: {ts: 12, k: b, v: 2}}
  - {event: {ts: 3, k: b, v: 5}, at: 12}
  - {event: {ts: 31, k: b, v: x}, at: 13}
  - {event: {ts: 1, k: a, v: 6}, at: 14}
  - {event: {ts: 44, k: a, v: true}, at: 15}
  - {event: {ts: null, k: b, v: 7}, at: 16}
  - {event: {ts: 60, k: c, v: 8}, at: 17}
  - {advance: 99}
"""

# spark.md: size 10 every 5; micro-batch 2 has lateWm = 12: ts 8 misses [0,10) but
# joins [5,15) (partial delivery). Ungrouped, split by aggregate_by.
HOPPING = """
profile: spark
window: {size: 10, every: 5}
aggregate: {n: count(), s: sum(v)}
aggregate_by: [c]
input:
  - {event: {ts: 12, v: 1, c: x}}
  - {event: {ts: 13, v: 2, c: y}}
  - {event: {ts: 8, v: 4, c: x}}
  - {event: {ts: 40, v: 8, c: x}}
"""

# Delay 10, gap 5 (spark.md's sessions). wm_1 = 34 - 10 = 24, wm_2 = 38 - 10 = 28.
#   k: (30 34) then 38; micro-batch 2 has lateWm = 24: 26's own window [26,31) ends
#      after 24 -> kept, and it merges backwards: one session 26..38, [26,43).
#   m: (19) = [19,24) is evicted in micro-batch 1 (24 <= wm_1). 20 in micro-batch 2 is
#      not late ([20,25) ends after lateWm 24) but the evicted session is gone: a second
#      session over the same stretch of time, [20,25), evicted at once (25 <= wm_2).
SESSIONS = """
profile: spark
window: {kind: session, gap: 5, tolerance: 10}
group_by: [k, r]
aggregate: {n: count(), first: window_start(), last: window_end()}
input:
  - batch:
    - {event: {ts: 30, k: k, r: 1}}
    - {event: {ts: 34, k: k, r: 1}}
    - {event: {ts: 19, k: m, r: 1}}
  - {event: {ts: 38, k: k, r: 1}}
  - batch:
    - {event: {ts: 26, k: k, r: 1}}
    - {event: {ts: 20, k: m, r: 1}}
  - {event: {ts: 100, k: z, r: 2}}
"""


def scenario_of(text: str):
    return parse_scenario(load_yaml(text))


def windows(run) -> list[tuple]:
    return sorted(
        (e.group if not isinstance(e.group, list) else tuple(e.group), e.window.start_ms,
         e.window.end_ms, e.row.get("n"), e.after_seq)
        for e in run.result.emissions
    )


@pytest.mark.spark
@pytest.mark.parametrize("micro_batch", [2, 4])
def test_tumbling_equals_the_spark_profile_for_each_split(spark, micro_batch) -> None:
    scenario = scenario_of(TUMBLING)
    run = replay_stock(scenario, spark, micro_batch=micro_batch)
    assert len(run.feed.batches) == (6 if micro_batch == 2 else 3)  # the advance cuts a run
    assert compare_stock(scenario, run) == []
    got = windows(run)
    assert ("c", 60, 70, 1, 9) not in got  # never flushed at end of input
    assert [w[:2] for w in got if w[1] < 0] == []  # before the epoch: late
    assert ("a", 0, 10, 1 if micro_batch == 2 else 2) in [w[:4] for w in got]  # seq 6
    assert ("a", 40, 50, 1, 9) in got  # the no-data micro-batch after the input
    assert run.result.drops == []  # stock Spark reports none
    # the comparison can fail: the same run against a larger watermark delay
    later = scenario_of(TUMBLING.replace("tolerance: 5", "tolerance: 15"))
    assert compare_stock(later, run) != []


@pytest.mark.spark
def test_replay_engine_both_runs_the_stock_mapping_for_profile_spark(spark, tmp_path) -> None:
    """Hopping windows through the CLI: a late row goes to its still-open window."""
    path = tmp_path / "hopping.yaml"
    path.write_text(HOPPING)
    result = CliRunner().invoke(cli, ["replay", str(path), "--engine", "both", "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    assert "stock spark matches the oracle's spark profile" in result.output
    emitted = [json.loads(x) for x in result.output.splitlines() if x.startswith('{"type": "emit"')]
    rows = {(e["window"]["start_ms"], e["row"]["c"]): e["row"] for e in emitted}
    assert len(rows) == 4
    assert rows[(5, "x")] == {"c": "x", "n": 2, "s": 5}  # 12 and the late-ish 8
    assert (0, "x") not in rows  # 8 missed [0,10): the window never opened


@pytest.mark.spark
def test_sessions_merge_backwards_and_reopen_after_eviction(spark) -> None:
    scenario = scenario_of(SESSIONS)
    run = replay_stock(scenario, spark)
    assert compare_stock(scenario, run) == []
    assert windows(run) == [
        (("k", 1), 26, 43, 4, 6),
        (("m", 1), 19, 24, 1, 3),
        (("m", 1), 20, 25, 1, 5),
    ]


def generated(seed: int, n: int = 90, batch: int = 18) -> dict:
    """Disordered grouped events in scenario batches of ``batch`` (5 micro-batches)."""
    rng = random.Random(seed)
    events, t = [], 1000
    for _ in range(n):
        t += rng.randrange(0, 60)
        late = rng.randrange(0, 1500) if rng.random() < 0.25 else 0
        events.append({"event": {"ts": t - late, "k": f"k{rng.randrange(4)}", "v": rng.randrange(9)}})
    return {
        "profile": "spark",
        "window": {"size": 200, "every": 100, "tolerance": 50},
        "group_by": "k",
        "aggregate": {"n": "count()", "s": "sum(v)", "hi": "max(v)"},
        "input": [{"batch": events[i : i + batch]} for i in range(0, n, batch)],
    }


@pytest.mark.spark
def test_a_generated_disordered_stream(spark) -> None:
    scenario = parse_scenario(generated(seed=5))
    run = replay_stock(scenario, spark)
    assert len(run.feed.batches) == 5
    assert len(run.result.emissions) > 10
    assert any(d.reason == "late" for d in replay(scenario).drops)  # lateness is exercised
    assert compare_stock(scenario, run) == []


# --- without Spark ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ("aggregate: {n: count_distinct(v)}", "aggregate.n"),
        ("aggregate: {n: collect(v)}", "aggregate.n"),
        ("aggregate: {n: first(v)}", "aggregate.n"),
        ("window: {size: 10, idle_timeout: 5}", "window.idle_timeout"),
        ("rules: {close_at: passes}", "rules.close_at"),
        ("window: {kind: session, gap: 5}\ngroup_by: []", "group_by"),
    ],
)
def test_what_stock_spark_cannot_express_is_an_input_error(change, field) -> None:
    text = HOPPING.replace("aggregate_by: [c]\n", "")
    key = change.split(":")[0]
    lines = [line for line in text.splitlines() if not line.startswith(key + ":")]
    scenario = scenario_of("\n".join([*lines[:3], change, *lines[3:]]))
    with pytest.raises(InvalidSpec) as error:
        check_stock(scenario.query, scenario.rules)
    assert error.value.field == field


def test_lone_events_are_grouped_into_micro_batches_up_to_an_advance() -> None:
    e = [Event(i, {"ts": i}) for i in range(5)]
    items = (e[0], e[1], e[2], Advance(9), e[3], Batch((e[4],)), End())
    assert micro_batches(items, 2) == (
        Batch((e[0], e[1])), Batch((e[2],)), Advance(9), Batch((e[3],)), Batch((e[4],))
    )
    assert micro_batches(items, 1) == (e[0], e[1], e[2], Advance(9), e[3], Batch((e[4],)))


def test_typed_columns_follow_the_json_types() -> None:
    query = scenario_of(TUMBLING).query
    schema = payload_schema(query, [{"k": "a", "v": 1}, {"k": "b", "v": "x"}])
    assert schema.simpleString() == "struct<k:string,v:bigint>"
    with pytest.raises(InvalidSpec) as error:
        payload_schema(query, [{"k": "a", "v": 1}, {"k": 2, "v": 1}])
    assert error.value.field == "input.k"


@pytest.mark.spark
def test_stock_window_on_a_file_stream_with_a_timestamp_column(spark, tmp_path) -> None:
    """A user's DataFrame: JSON files (one per micro-batch) with ISO times and a nested key."""
    scenario = scenario_of("""
profile: spark
window: {size: 1min, on: time, tolerance: 10s}
group_by: [user.name]
aggregate: {n: count(), bytes: sum(size)}
input:
  - batch:
    - {event: {time: "2026-01-01T00:00:05Z", user: {name: ann}, size: 10}}
    - {event: {time: "2026-01-01T00:01:20Z", user: {name: bob}, size: 5}}
  - batch:
    - {event: {time: "2026-01-01T00:00:50Z", user: {name: ann}, size: 1}}
    - {event: {time: "2026-01-01T00:02:30Z", user: {name: ann}, size: 2}}
  - batch:
    - {event: {time: "2026-01-01T00:00:59Z", user: {name: bob}, size: 7}}
    - {event: {time: "2026-01-01T00:03:45Z", user: {name: bob}, size: 3}}
""")
    directory = tmp_path / "in"
    directory.mkdir()
    for index, batch in enumerate(scenario.items):
        path = directory / f"part-{index}.json"
        path.write_text("".join(json.dumps(dict(e.payload)) + "\n" for e in batch.events))
        os.utime(path, (1_700_000_000 + index, 1_700_000_000 + index))  # file order
    df = (
        spark.readStream.schema("time timestamp, user struct<name: string>, size long")
        .option("maxFilesPerTrigger", 1)
        .json(str(directory))
    )
    query = (
        stock_window(df, scenario.query).writeStream.format("memory").queryName("stock_files")
        .outputMode("append").option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(availableNow=True).start()
    )
    query.awaitTermination()
    query.stop()
    got = sorted(
        (r["start_ms"], r["end_ms"], json.loads(r["group"]), json.loads(r["row"]))
        for r in spark.table("stock_files").collect()
    )
    want = sorted(
        (e.window.start_ms, e.window.end_ms, e.group, dict(e.row)) for e in replay(scenario).emissions
    )
    # micro-batch 2's lateWm is 80 s - 10 s: ann's 00:00:50 still joins [0,60); bob's
    # 00:00:59 in micro-batch 2 sees 150 s - 10 s and is dropped; [3min,4min) never closes
    assert got == want == [
        (1767225600000, 1767225660000, "ann", {"n": 2, "bytes": 11}),
        (1767225660000, 1767225720000, "bob", {"n": 1, "bytes": 5}),
        (1767225720000, 1767225780000, "ann", {"n": 1, "bytes": 2}),
    ]


def test_replay_on_spark_rejects_what_stock_spark_cannot_express_before_spark_starts(
    tmp_path,
) -> None:
    path = tmp_path / "distinct.yaml"
    path.write_text(HOPPING.replace("n: count()", "n: count_distinct(v)"))
    result = CliRunner().invoke(cli, ["replay", str(path), "--engine", "spark"])
    assert result.exit_code == 2
    assert "aggregate.n='count_distinct(v)': no exact stock Spark streaming aggregation" in (
        result.output
    )
    assert "Traceback" not in result.output
