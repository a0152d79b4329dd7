"""Hypothesis properties of fixed windows in the default profile (issue: foundation)."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.oracle import Aggregation, Batch, FixedWindows, Query, Rules, run
from windtunnel.oracle.engine import operator_for
from windtunnel.oracle.model.errors import InvalidStream
from windtunnel.oracle.model.results import Emission, Output
from windtunnel.oracle.model.stream import Advance, End, Event, Item, events_of
from windtunnel.oracle.windows.driver import Driver
from windtunnel.oracle.windows.fixed_fast import eligible
from windtunnel.simulator.strategies import streams, window_specs

COUNT = (Aggregation("n", "count"), Aggregation("total", "sum", "value"))
SETTINGS = settings(max_examples=150, deadline=None)

# small time grids make boundary coincidences (t == end, clock == end + tolerance) common
disordered = streams(max_events=25, keys=2, max_step_ms=6, max_disorder_ms=25, allow_null_times=True)
fixed = window_specs(kinds=("fixed",), max_size_ms=20, max_tolerance_ms=6)


DEFAULT_RULES = Rules()


def reference(query: Query, items: tuple[Item, ...], rules: Rules = DEFAULT_RULES) -> list[Output]:
    """The reference operator, bypassing the fast path."""
    driver = Driver(query, lambda q, ctx: operator_for(q, ctx), rules)
    return list(driver.run(items))


def flat(items: tuple[Item, ...]) -> list[Event]:
    return list(events_of(items))


def without_wall(outputs: list[Output]) -> list[Any]:
    return [o.to_json() | {"wall_ms": None, "after_seq": None} if isinstance(o, Emission) else o.to_json() for o in outputs]


@SETTINGS
@given(window=fixed, items=disordered, cuts=st.lists(st.integers(0, 25), max_size=6))
def test_result_does_not_depend_on_batching(window: FixedWindows, items: tuple[Item, ...], cuts: list[int]) -> None:
    query = Query(window, group_by=("key",), aggregate=COUNT)
    events = flat(items)
    bounds = sorted({0, len(events), *(c for c in cuts if c <= len(events))})
    batched = tuple(Batch(tuple(events[a:b])) for a, b in pairwise(bounds))
    assert run(query, tuple(events)).outputs == run(query, batched).outputs


@SETTINGS
@given(window=fixed, items=disordered)
def test_every_event_is_delivered_or_dropped_exactly_once(window: FixedWindows, items: tuple[Item, ...]) -> None:
    # pass-through: each delivery is one emission carrying the event's seq as after_seq
    result = run(Query(window, group_by=("key",)), items)
    delivered = Counter(e.after_seq for e in result.emissions)
    dropped = Counter(d.seq for d in result.drops)
    for event in flat(items):
        assert (delivered[event.seq] >= 1) != (dropped[event.seq] == 1), event
        assert dropped[event.seq] <= 1


@SETTINGS
@given(window=fixed, items=disordered)
def test_tumbling_windows_partition_the_delivered_events(window: FixedWindows, items: tuple[Item, ...]) -> None:
    tumbling = FixedWindows(window.size_ms, tolerance_ms=window.tolerance_ms)
    result = run(Query(tumbling, group_by=("key",)), items)
    delivered = Counter(e.after_seq for e in result.emissions)
    assert set(delivered.values()) <= {1}
    for emission in result.emissions:
        assert emission.window.start_ms <= emission.row["ts"] < emission.window.end_ms  # type: ignore[operator]


@SETTINGS
@given(
    size_in_hops=st.integers(1, 6), hop_ms=st.integers(1, 8),
    items=streams(max_events=20, keys=2, max_step_ms=6),
)
def test_on_time_hopping_event_lands_in_size_over_every_windows(size_in_hops: int, hop_ms: int, items: tuple[Item, ...]) -> None:
    window = FixedWindows(size_in_hops * hop_ms, every_ms=hop_ms)
    result = run(Query(window, group_by=("key",)), items)  # in-order stream: nothing is late
    assert result.drops == []
    assert set(Counter(e.after_seq for e in result.emissions).values()) <= {size_in_hops}


@SETTINGS
@given(window=fixed, items=disordered, shift=st.integers(-50, 50))
def test_shifting_times_by_multiples_of_every_shifts_the_windows(window: FixedWindows, items: tuple[Item, ...], shift: int) -> None:
    offset = shift * window.hop_ms
    shifted = tuple(
        Event(e.seq, {**e.payload, "ts": None if e.payload["ts"] is None else e.payload["ts"] + offset}, e.at_ms)
        for e in flat(items)
    )
    query = Query(window, group_by=("key",), aggregate=COUNT)
    before = run(query, tuple(flat(items))).outputs
    after = run(query, shifted).outputs
    assert len(before) == len(after)
    for a, b in zip(before, after, strict=True):
        if isinstance(a, Emission):
            assert isinstance(b, Emission) and a.row == b.row and a.reason == b.reason
            assert (b.window.start_ms, b.window.end_ms) == (a.window.start_ms + offset, a.window.end_ms + offset)  # type: ignore[operator]
        else:
            assert (a.seq, a.reason) == (b.seq, b.reason)  # type: ignore[union-attr]


@SETTINGS
@given(window=fixed, items=streams(max_events=25, keys=["a", "b"], max_step_ms=6, max_disorder_ms=25))
def test_interleaving_two_keys_leaves_each_keys_result_unchanged(window: FixedWindows, items: tuple[Item, ...]) -> None:
    query = Query(window, group_by=("key",), aggregate=COUNT)
    merged = run(query, tuple(Event(e.seq, e.payload) for e in flat(items))).outputs
    for key in ("a", "b"):
        alone = tuple(Event(i, e.payload) for i, e in enumerate(e for e in flat(items) if e.payload["key"] == key))
        mine = [o for o in merged if isinstance(o, Emission) and o.group == key]
        assert without_wall(list(run(query, alone).emissions)) == without_wall(list(mine))


@SETTINGS
@given(
    window=fixed,
    items=streams(max_events=25, keys=3, max_step_ms=6, max_disorder_ms=25, allow_null_times=True, with_batches=True, with_advances=True),
    close_at=st.sampled_from(["reaches", "passes", "max_timestamp"]),
    end=st.sampled_from(["flush", "discard"]),
    by=st.booleans(),
)
def test_fast_path_equals_the_reference(window: FixedWindows, items: tuple[Item, ...], close_at: str, end: str, by: bool) -> None:
    rules = Rules(close_at=close_at, end_of_input=end)
    aggregate = COUNT if by else (Aggregation("n", "count"),)
    query = Query(window, group_by=("key",), aggregate=aggregate, aggregate_by=("value",) if by else ())
    assert eligible(query, rules, "tenzir")
    assert run(query, items, rules=rules).outputs == tuple(reference(query, items, rules))


INVALID_STREAMS = {
    "seq skips": (Event(0, {"ts": 1, "key": "a"}), Event(2, {"ts": 2, "key": "a"})),
    "arrival goes back": (Event(0, {"ts": 1, "key": "a"}, 50), Event(1, {"ts": 2, "key": "a"}, 40)),
    "arrival goes back in a batch": (Batch((Event(0, {"ts": 1, "key": "a"}, 50), Event(1, {"ts": 2, "key": "a"}, 40))),),
    "advance goes back": (Event(0, {"ts": 1, "key": "a"}, 50), Advance(10)),
    "event after end": (Event(0, {"ts": 1, "key": "a"}), End(), Event(1, {"ts": 2, "key": "a"})),
}


@pytest.mark.parametrize("items", INVALID_STREAMS.values(), ids=INVALID_STREAMS.keys())
def test_fast_path_rejects_invalid_streams_like_the_reference(items: tuple[Item, ...]) -> None:
    query = Query(FixedWindows(10), group_by=("key",), aggregate=(Aggregation("n", "count"),))
    assert eligible(query, DEFAULT_RULES, "tenzir")
    with pytest.raises(InvalidStream) as fast:
        run(query, items)
    with pytest.raises(InvalidStream) as slow:
        reference(query, items)
    assert str(fast.value) == str(slow.value)
