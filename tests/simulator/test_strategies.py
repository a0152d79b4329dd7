"""The Hypothesis strategies produce valid oracle values and shrink to the simplest case."""

from __future__ import annotations

import pytest
from faker import Faker
from hypothesis import Phase, find, given, settings

from windtunnel.oracle.engine import replay
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.spec import FixedWindows, WindowSpec
from windtunnel.oracle.model.stream import Advance, Batch, Event, checked, events_of
from windtunnel.oracle.scenario import Scenario, parse_scenario
from windtunnel.simulator.strategies import (
    MAX_WINDOWS_PER_EVENT,
    faker_values,
    scenario_dicts,
    scenarios,
    streams,
    window_blocks,
    window_specs,
)

QUICK_SHRINK = (Phase.generate, Phase.shrink)  # no explain phase: it reruns every example


@settings(max_examples=50, deadline=None)
@given(window_specs(max_size_ms=5_000))
def test_window_specs_are_fixed_windows_within_bounds(spec: FixedWindows) -> None:
    assert isinstance(spec, FixedWindows)
    assert 1 <= spec.size_ms <= 5_000
    assert spec.hop_ms <= spec.size_ms
    assert 0 <= spec.tolerance_ms <= 10_000


@settings(max_examples=50, deadline=None)
@given(
    streams(
        max_events=15,
        max_disorder_ms=5_000,
        allow_null_times=True,
        with_batches=True,
        with_advances=True,
    )
)
def test_streams_are_valid_oracle_streams(items: tuple) -> None:
    # checked() raises on a wall clock going back or seq out of order
    assert list(checked(items))[: len(items)] == list(items)
    events = list(events_of(items))
    assert [e.seq for e in events] == list(range(len(events)))
    walls = [e.at_ms for e in events]
    assert walls == sorted(walls)
    assert all(isinstance(i, Event | Batch | Advance) for i in items)


def test_streams_shrink_to_short_in_order_single_key() -> None:
    # the smallest stream with at least 2 events: in order, one key, one wall instant
    items = find(
        streams(max_events=4, keys=2, max_disorder_ms=1_000, with_advances=True),
        lambda s: len(list(events_of(s))) >= 2,
        settings=settings(database=None, max_examples=50, phases=QUICK_SHRINK),
    )
    events = list(events_of(items))
    assert len(events) == 2
    assert len({e.payload["key"] for e in events}) == 1
    assert [e.payload["ts"] for e in events] == [0, 0]
    assert {e.at_ms for e in events} == {0}
    assert not [i for i in items if isinstance(i, Advance)]


@settings(max_examples=60, deadline=None)
@given(window_specs(kinds=("fixed", "session", "count", "trailing"), idle_timeouts=True))
def test_window_specs_of_every_kind(spec: WindowSpec) -> None:
    assert (
        type(spec).__name__
        == {
            "fixed": "FixedWindows",
            "session": "SessionWindows",
            "count": "CountWindows",
            "trailing": "TrailingWindows",
        }[spec.kind]
    )


@settings(max_examples=60, deadline=None)
@given(
    scenarios(
        kinds=("fixed", "session", "count", "trailing"),
        max_events=10,
        max_disorder_ms=5_000,
        allow_null_times=True,
        with_batches=True,
        with_advances=True,
    )
)
def test_scenarios_of_every_kind_replay(scenario: Scenario) -> None:
    result = replay(scenario)
    events = len(list(events_of(scenario.items)))
    assert {d.seq for d in result.drops} <= set(range(events))


def test_window_specs_shrink_to_one_large_tumbling_window() -> None:
    spec = find(
        window_specs(max_size_ms=60_000),
        lambda s: True,
        settings=settings(database=None, phases=QUICK_SHRINK),
    )
    assert spec == FixedWindows(size_ms=60_000, on="ts")


@settings(max_examples=40, deadline=None)
@given(scenarios(max_events=12, max_disorder_ms=20_000, with_batches=True, allow_null_times=True))
def test_scenarios_replay_and_account_for_every_event(scenario: Scenario) -> None:
    result = replay(scenario)
    # nothing lost silently: each event is delivered or dropped; with a count() aggregate
    # the counted events plus the dropped ones equal the input
    window = scenario.query.window
    assert isinstance(window, FixedWindows)
    if scenario.query.aggregate is not None and window.hop_ms == window.size_ms:
        counted = sum(e.row["n"] for e in result.emissions)
        assert counted + len(result.drops) == len(list(events_of(scenario.items)))


@settings(max_examples=20, deadline=None)
@given(scenario_dicts(max_events=5))
def test_scenario_dicts_parse(data: dict) -> None:
    assert isinstance(parse_scenario(data), Scenario)


@settings(max_examples=20, deadline=None)
@given(faker_values("ipv4_private"))
def test_faker_values_come_from_a_seeded_pool(ip: str) -> None:
    assert ip.count(".") == 3


def test_faker_values_shrink_to_the_first_pool_value() -> None:
    first = find(
        faker_values("user_name"),
        lambda v: True,
        settings=settings(database=None, phases=QUICK_SHRINK),
    )
    fake = Faker()
    fake.seed_instance(0)
    assert first == fake.user_name()


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: window_specs(kinds=("nope",)), "kinds"),
        (lambda: window_specs(max_size_ms=0), "max_size_ms"),
        (lambda: streams(max_events=-1), "max_events"),
        (lambda: streams(keys=0), "keys"),
        (lambda: faker_values("nope"), "provider"),
    ],
)
def test_bad_options_raise_invalid_spec(call, field: str) -> None:
    with pytest.raises(InvalidSpec) as info:
        call()
    assert info.value.field == field


def test_scenarios_shrink_to_one_tumbling_window_over_a_short_in_order_single_key_stream() -> None:
    scenario = find(
        scenarios(max_events=6, keys=3, max_disorder_ms=5_000, with_batches=True),
        lambda s: len(list(events_of(s.items))) >= 2,
        settings=settings(database=None, max_examples=50, phases=QUICK_SHRINK),
    )
    assert scenario.profile.name == "tenzir"
    assert scenario.query.window == FixedWindows(size_ms=60_000, on="ts")
    assert scenario.query.group_by == ()
    assert [a.function for a in scenario.query.aggregate or ()] == ["count", "sum"]
    events = list(events_of(scenario.items))
    assert len(events) == 2
    assert len({e.payload["key"] for e in events}) == 1
    assert [e.payload["ts"] for e in events] == [0, 0]


@settings(max_examples=200, deadline=None)
@given(window_blocks(kinds=("fixed",), max_size_ms=3_600_000))
def test_a_hop_puts_an_event_in_at_most_a_thousand_windows(block: dict[str, object]) -> None:
    size, every = block["size"], block.get("every", block["size"])
    assert isinstance(size, int) and isinstance(every, int)
    assert -(-size // every) <= MAX_WINDOWS_PER_EVENT


def test_hops_near_the_bound_are_still_drawn() -> None:
    block = find(window_blocks(kinds=("fixed",), max_size_ms=60_000),
                 lambda b: "every" in b and b["size"] >= 900 * b["every"],
                 settings=settings(database=None, max_examples=5_000, phases=QUICK_SHRINK))
    assert block["size"] >= 900 * block["every"]  # 900 to 1,000 windows per event
