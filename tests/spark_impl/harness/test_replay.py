"""windtunnel's operators on a real local Spark against the oracle: scenarios as micro-batches.

Outputs are compared as multisets of the contract's JSON lines (Spark returns rows in
no particular order); every field must match, ``after_seq`` and ``wall_ms`` included.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from windtunnel.oracle.engine import replay
from windtunnel.oracle.scenario import load_scenario, load_yaml, parse_scenario
from windtunnel.spark_impl.harness.replay import compare_with_oracle, replay_on_spark

pytestmark = pytest.mark.spark

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

# Grouped hopping windows, every drop reason, idle_timeout driven by the other key's
# arrival and by an advance, aggregate_by; batches of two events:
#
#   a: ts 0 5 | null | "x" |  2 (late for [-5,5) only? no: clock a=5, size 10 hop 5 ->
#      windows of 2 are [-5,5) closed at 5, [0,10) open: delivered to one, not dropped)
#   b: ts 30 (clock b=30) then 12: all windows of 12 ([5,15), [10,20)) closed -> late drop
#   wall: 0 .. 50 (b) .. advance to 400: a's windows idle since 0 -> idle_timeout
MIXED = """
window: {size: 10, every: 5, on: ts, idle_timeout: 100}
group_by: k
aggregate: {n: count(), vs: collect(v)}
aggregate_by: [c]
input:
  - batch:
    - {event: {ts: 0, k: a, v: 1, c: x}, at: 0}
    - {event: {ts: 5, k: a, v: 2, c: y}, at: 0}
  - batch:
    - {event: {ts: null, k: a, v: 3, c: x}, at: 1}
    - {event: {ts: not a time, k: a, v: 4, c: x}, at: 2}
  - batch:
    - {event: {ts: 2, k: a, v: 5, c: x}, at: 3}
    - {event: {ts: 30, k: b, v: 6, c: x}, at: 50}
  - {event: {ts: 12, k: b, v: 7, c: x}, at: 60}
  - {advance: 340}
  - {event: {ts: 31, k: b, v: 8, c: y}, at: 410}
"""

# Ungrouped pass-through on the arrival wall clock (one global clock: serial by nature).
NOW_PASS_THROUGH = """
window: {size: 100, on: "now()"}
input:
  - {event: {v: 1}, at: 10}
  - {event: {v: 2}, at: 150}
  - {event: {v: 3}}
  - {event: {v: 4}, at: 260}
"""


def random_scenario(n: int, keys: int, seed: int) -> dict:
    """A grouped stream with disorder, arrival times and null times (batches of 40)."""
    rng = random.Random(seed)
    items, batch, t, wall = [], [], 0, 0
    for _ in range(n):
        t += rng.randrange(0, 400)
        wall += rng.randrange(0, 300)
        ts = None if rng.random() < 0.03 else t - (rng.randrange(0, 3000) if rng.random() < 0.2 else 0)
        batch.append({"event": {"ts": ts, "k": f"k{rng.randrange(keys)}", "v": rng.randrange(9)}, "at": wall})
        if len(batch) == 40:
            items.append({"batch": batch})
            batch = []
    items += batch
    return {
        "window": {"size": 2000, "every": 500, "on": "ts", "tolerance": 300, "idle_timeout": 1500},
        "group_by": "k",
        "aggregate": {"n": "count()", "total": "sum(v)"},
        "input": items,
    }


@pytest.mark.parametrize(
    ("source", "micro_batch"),
    [
        (EXAMPLES / "brute-force.yaml", 2),
        (EXAMPLES / "password-spraying.yaml", 3),
        (MIXED, 1),
        (NOW_PASS_THROUGH, 2),
    ],
    ids=["brute-force", "password-spraying", "mixed", "now-pass-through"],
)
def test_spark_equals_the_oracle(spark, source, micro_batch) -> None:
    scenario = (
        load_scenario(source) if isinstance(source, Path) else parse_scenario(load_yaml(source))
    )
    run = replay_on_spark(scenario, spark, micro_batch=micro_batch)
    assert compare_with_oracle(scenario, run) == []
    assert len(run.result) == len(replay(scenario))


def test_generated_stream_in_five_micro_batches(spark) -> None:
    scenario = parse_scenario(random_scenario(200, keys=7, seed=3))
    oracle = replay(scenario)
    assert {o.type for o in oracle} == {"emit", "drop"}  # the stream exercises both
    run = replay_on_spark(scenario, spark, buckets=3)
    assert len(run.feed.batches) == 5
    assert compare_with_oracle(scenario, run) == []


def test_batch_clock_meets_the_granularity_rule(spark) -> None:
    """One clock row per micro-batch: idle closes land in the oracle's micro-batch."""
    scenario = parse_scenario(random_scenario(120, keys=5, seed=11))
    run = replay_on_spark(scenario, spark, buckets=2, clock="batch")
    assert compare_with_oracle(scenario, run) == []
