"""The Java engine against the oracle: Hypothesis streams (disorder, late events, null and
non-time values, keys of every JSON type, idle gaps, end of input) through the line harness,
with random slice counts and random snapshot points, give the oracle's outputs as the
contract's records, every column included (step, group_first_seq, emit_index, wall_ms,
after_seq)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.scenario import Scenario
from windtunnel.simulator.strategies import scenarios

from .harness import HarnessProcess, Reference, by_step_and_slice, harness_lines
from .strategies import engine_queries, engine_streams, harness_plans

pytestmark = pytest.mark.process  # the Java engine in a JVM

RULES = Rules()


def examples(n: int) -> settings:
    """``n`` examples, no deadline (one JVM serves them all)."""
    return settings(
        max_examples=n, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def check(harness: HarnessProcess, data: st.DataObject, kind: str) -> None:
    query: Query = data.draw(engine_queries(kind=kind), label="query")
    unit_ms = data.draw(st.sampled_from((1, 1, 1000)), label="time_unit_ms")
    items = data.draw(engine_streams(query, unit_ms=unit_ms), label="items")
    slices, snapshots = data.draw(harness_plans(max_items=len(items)), label="plan")
    start_wall_ms = data.draw(st.sampled_from((0, 0, -5)), label="start_wall_ms")
    items = tuple(_from_wall(items, start_wall_ms))
    expected = Reference(query, RULES, items, unit_ms, start_wall_ms).records
    lines = harness_lines(
        query, RULES, items, time_unit_ms=unit_ms, start_wall_ms=start_wall_ms,
        slices=slices, snapshots=snapshots,
    )
    actual = harness.run(lines)
    theirs, mine = by_step_and_slice(expected, actual)
    assert mine == theirs


def _from_wall(items: Any, start_wall_ms: int) -> Any:
    """The items with arrivals and advances moved by ``start_wall_ms``."""
    from dataclasses import replace

    from windtunnel.oracle.model.stream import Advance, Event

    for item in items:
        if isinstance(item, Event) and item.at_ms is not None:
            yield replace(item, at_ms=item.at_ms + start_wall_ms)
        elif isinstance(item, Advance):
            yield Advance(item.to_ms + start_wall_ms)
        else:
            yield item


@examples(300)
@given(data=st.data())
def test_fixed_windows_equal_the_oracle(harness: HarnessProcess, data: st.DataObject) -> None:
    check(harness, data, "fixed")


@examples(300)
@given(data=st.data())
def test_session_windows_equal_the_oracle(harness: HarnessProcess, data: st.DataObject) -> None:
    check(harness, data, "session")


@examples(200)
@given(data=st.data())
def test_count_windows_equal_the_oracle(harness: HarnessProcess, data: st.DataObject) -> None:
    check(harness, data, "count")


@examples(100)
@given(
    scenario=scenarios(
        kinds=("fixed", "session", "count"), idle_timeouts=True, max_disorder_ms=20_000,
        allow_null_times=True, with_batches=True, with_advances=True,
    ),
    plan=harness_plans(),
)
def test_simulator_scenarios_equal_the_oracle(
    harness: HarnessProcess, scenario: Scenario, plan: tuple[int, tuple[tuple[int, str], ...]]
) -> None:
    """The simulator's scenarios (batches, advances, null times; its own shrinking) too."""
    slices, snapshots = plan
    expected = Reference(
        scenario.query, scenario.rules, scenario.items, scenario.time_unit_ms, scenario.start_wall_ms
    ).records
    lines = harness_lines(
        scenario.query, scenario.rules, scenario.items, time_unit_ms=scenario.time_unit_ms,
        start_wall_ms=scenario.start_wall_ms, slices=slices, snapshots=snapshots,
    )
    theirs, mine = by_step_and_slice(expected, harness.run(lines))
    assert mine == theirs
