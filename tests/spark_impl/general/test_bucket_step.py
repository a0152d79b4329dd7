"""The bucket step against the oracle, without Spark: any buckets, micro-batches, row order.

Each property feeds a generated scenario through :func:`feed`, splits rows into buckets
as the Spark operator does, shuffles every micro-batch, pickles the drivers between
micro-batches, and requires the oracle's outputs exactly (compared as multisets).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.oracle.engine import replay
from windtunnel.oracle.scenario import load_yaml, parse_scenario
from windtunnel.simulator.strategies import scenarios
from windtunnel.spark_impl.harness.feed import bucket_of, feed
from windtunnel.spark_impl.harness.runs import divergences

from .local_run import run_locally


@settings(max_examples=60, deadline=None)
@given(
    scenario=scenarios(
        idle_timeouts=True,
        max_disorder_ms=30_000,
        allow_null_times=True,
        with_batches=True,
        with_advances=True,
        max_events=25,
    ),
    buckets=st.integers(1, 5),
    micro_batch=st.integers(1, 6),
    seed=st.integers(0, 1000),
)
def test_exact_clock_equals_the_oracle(scenario, buckets, micro_batch, seed) -> None:
    used = buckets if scenario.query.group_by else 1
    fed = feed(
        scenario.items,
        scenario.query.group_by,
        buckets=used,
        micro_batch=micro_batch,
        start_wall_ms=scenario.start_wall_ms,
    )
    got = run_locally(scenario, fed, used, seed)
    assert divergences(replay(scenario).outputs, got) == []


@pytest.mark.parametrize("values", [(1, 1.0, True), ("a", "a"), ((1, "x"), (1.0, "x"))])
def test_keys_python_treats_as_equal_share_a_bucket(values) -> None:
    buckets = {bucket_of(v if isinstance(v, tuple) else (v,), 7) for v in values}
    assert len(buckets) == 1


# Two keys in different buckets; the wall clock is moved only by key b's events:
#
#   wall:   0      200           400
#           a@0    b@200         b@400   (idle_timeout 300: a's window is due at 300, b's at 500)
#
# a's window must close at the wall step before b@400 (after_seq 1, wall 400), although
# no event of a's own bucket arrives: the clock row copied to every bucket carries it.
IDLE_ACROSS_KEYS = """
window: {size: 1000, on: ts, idle_timeout: 300}
group_by: k
aggregate: {n: count()}
input:
  - {event: {ts: 0, k: a}, at: 0}
  - {event: {ts: 5, k: b}, at: 200}
  - {event: {ts: 6, k: b}, at: 400}
"""


def test_idle_timeout_driven_by_another_keys_arrival_is_exact() -> None:
    scenario = parse_scenario(load_yaml(IDLE_ACROSS_KEYS))
    buckets = 8
    assert bucket_of(["a"], buckets) != bucket_of(["b"], buckets)
    fed = feed(scenario.items, ("k",), buckets=buckets, micro_batch=3)
    got = run_locally(scenario, fed, buckets)
    idle = [o for o in got if getattr(o, "reason", "") == "idle_timeout"]
    assert [(o.group, o.after_seq, o.wall_ms) for o in idle] == [("a", 1, 400)]
    assert divergences(replay(scenario).outputs, got) == []
