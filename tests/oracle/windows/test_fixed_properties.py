"""Hypothesis properties of fixed windows in the default profile, on the reference and on
the fast path (fast: skipped, with the reason, where it does not take the run)."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.oracle import Aggregation, Batch, FixedWindows, Query
from windtunnel.oracle.model.results import Emission, Output
from windtunnel.oracle.model.stream import Event, Item, events_of
from windtunnel.simulator.strategies import streams, window_specs

from ..implementations import RunQuery

COUNT = (Aggregation("n", "count"), Aggregation("total", "sum", "value"))
SETTINGS = settings(max_examples=150, deadline=None)

# small time grids make boundary coincidences (t == end, clock == end + tolerance) common
disordered = streams(max_events=25, keys=2, max_step_ms=6, max_disorder_ms=25, allow_null_times=True)
fixed = window_specs(kinds=("fixed",), max_size_ms=20, max_tolerance_ms=6)
IMPLEMENTATIONS = pytest.mark.parametrize("run_query", [RunQuery("reference"), RunQuery("fast")], ids=["reference", "fast"])
PASS_THROUGH = pytest.mark.parametrize("run_query", [RunQuery("reference")], ids=["reference"])
"""Pass-through windows (no aggregate) have no fast path: the reference only."""


def flat(items: tuple[Item, ...]) -> list[Event]:
    return list(events_of(items))


def without_wall(outputs: list[Output]) -> list[Any]:
    return [o.to_json() | {"wall_ms": None, "after_seq": None} if isinstance(o, Emission) else o.to_json() for o in outputs]


@IMPLEMENTATIONS
@SETTINGS
@given(window=fixed, items=disordered, cuts=st.lists(st.integers(0, 25), max_size=6))
def test_result_does_not_depend_on_batching(run_query: RunQuery, window: FixedWindows, items: tuple[Item, ...], cuts: list[int]) -> None:
    query = Query(window, group_by=("key",), aggregate=COUNT)
    events = flat(items)
    bounds = sorted({0, len(events), *(c for c in cuts if c <= len(events))})
    batched = tuple(Batch(tuple(events[a:b])) for a, b in pairwise(bounds))
    assert run_query(query, tuple(events)).outputs == run_query(query, batched).outputs


@PASS_THROUGH
@SETTINGS
@given(window=fixed, items=disordered)
def test_every_event_is_delivered_or_dropped_exactly_once(run_query: RunQuery, window: FixedWindows, items: tuple[Item, ...]) -> None:
    # pass-through: each delivery is one emission carrying the event's seq as after_seq
    result = run_query(Query(window, group_by=("key",)), items)
    delivered = Counter(e.after_seq for e in result.emissions)
    dropped = Counter(d.seq for d in result.drops)
    for event in flat(items):
        assert (delivered[event.seq] >= 1) != (dropped[event.seq] == 1), event
        assert dropped[event.seq] <= 1


@PASS_THROUGH
@SETTINGS
@given(window=fixed, items=disordered)
def test_tumbling_windows_partition_the_delivered_events(run_query: RunQuery, window: FixedWindows, items: tuple[Item, ...]) -> None:
    tumbling = FixedWindows(window.size_ms, tolerance_ms=window.tolerance_ms)
    result = run_query(Query(tumbling, group_by=("key",)), items)
    delivered = Counter(e.after_seq for e in result.emissions)
    assert set(delivered.values()) <= {1}
    for emission in result.emissions:
        assert emission.window.start_ms <= emission.row["ts"] < emission.window.end_ms  # type: ignore[operator]


@PASS_THROUGH
@SETTINGS
@given(
    size_in_hops=st.integers(1, 6), hop_ms=st.integers(1, 8),
    items=streams(max_events=20, keys=2, max_step_ms=6),
)
def test_on_time_hopping_event_lands_in_size_over_every_windows(run_query: RunQuery, size_in_hops: int, hop_ms: int, items: tuple[Item, ...]) -> None:
    window = FixedWindows(size_in_hops * hop_ms, every_ms=hop_ms)
    result = run_query(Query(window, group_by=("key",)), items)  # in-order stream: nothing is late
    assert result.drops == []
    assert set(Counter(e.after_seq for e in result.emissions).values()) <= {size_in_hops}


@IMPLEMENTATIONS
@SETTINGS
@given(window=fixed, items=disordered, shift=st.integers(-50, 50))
def test_shifting_times_by_multiples_of_every_shifts_the_windows(run_query: RunQuery, window: FixedWindows, items: tuple[Item, ...], shift: int) -> None:
    offset = shift * window.hop_ms
    shifted = tuple(
        Event(e.seq, {**e.payload, "ts": None if e.payload["ts"] is None else e.payload["ts"] + offset}, e.at_ms)
        for e in flat(items)
    )
    query = Query(window, group_by=("key",), aggregate=COUNT)
    before = run_query(query, tuple(flat(items))).outputs
    after = run_query(query, shifted).outputs
    assert len(before) == len(after)
    for a, b in zip(before, after, strict=True):
        if isinstance(a, Emission):
            assert isinstance(b, Emission) and a.row == b.row and a.reason == b.reason
            assert (b.window.start_ms, b.window.end_ms) == (a.window.start_ms + offset, a.window.end_ms + offset)  # type: ignore[operator]
        else:
            assert (a.seq, a.reason) == (b.seq, b.reason)  # type: ignore[union-attr]


@IMPLEMENTATIONS
@SETTINGS
@given(window=fixed, items=streams(max_events=25, keys=["a", "b"], max_step_ms=6, max_disorder_ms=25))
def test_interleaving_two_keys_leaves_each_keys_result_unchanged(run_query: RunQuery, window: FixedWindows, items: tuple[Item, ...]) -> None:
    query = Query(window, group_by=("key",), aggregate=COUNT)
    merged = run_query(query, tuple(Event(e.seq, e.payload) for e in flat(items))).outputs
    for key in ("a", "b"):
        alone = tuple(Event(i, e.payload) for i, e in enumerate(e for e in flat(items) if e.payload["key"] == key))
        mine = [o for o in merged if isinstance(o, Emission) and o.group == key]
        assert without_wall(list(run_query(query, alone).emissions)) == without_wall(list(mine))
