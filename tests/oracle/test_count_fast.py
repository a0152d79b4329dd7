"""The count-window fast path (oracle/windows/count_fast.py) against the reference operator.

Offsets per key, count 3 every 2 (hopping):

    offset  0 1 2 3 4 5 6
    [0, 3)  x x x              emitted at offset 2
    [2, 5)      x x x          emitted at offset 4
    [4, 7)          x x x      emitted at offset 6
    [6, 9)              x      flushed at the end with 1 event
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.oracle.engine import operator_for, run
from windtunnel.oracle.model.errors import InvalidStream
from windtunnel.oracle.model.results import Emission, Output
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Aggregation, CountWindows, FixedWindows, Query
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item, numbered
from windtunnel.oracle.windows.count_fast import eligible, fast_outputs
from windtunnel.oracle.windows.driver import Driver
from windtunnel.simulator.strategies import streams, window_specs

AGGREGATES: dict[str, tuple[tuple[Aggregation, ...], tuple[str, ...]]] = {
    "count": ((Aggregation("n", "count"),), ()),
    "count and bounds": ((Aggregation("n", "count"), Aggregation("ws", "window_start")), ()),
    "sum and collect": ((Aggregation("total", "sum", "value"), Aggregation("ts", "collect", "ts")), ()),
    "count by value": ((Aggregation("n", "count"),), ("value",)),
}

gapped = st.builds(
    lambda count, extra: CountWindows(count, every=count + extra, allow_gaps=True),
    st.integers(1, 4),
    st.integers(1, 3),
)
"""Count windows with gaps between them (``every > count``): shrinks towards count 1, every 2."""


def reference(query: Query, items: tuple[Item, ...], rules: Rules) -> list[Output]:
    """The reference operator, bypassing the fast path."""
    return list(Driver(query, lambda q, ctx: operator_for(q, ctx), rules).run(items))


@settings(max_examples=200, deadline=None)
@given(
    window=window_specs(kinds=("count",), max_count=6) | gapped,
    items=streams(max_events=30, keys=3, allow_null_times=True, with_batches=True, with_advances=True),
    aggregate=st.sampled_from(sorted(AGGREGATES)),
    grouped=st.booleans(),
    end=st.sampled_from(["flush", "discard"]),
)
def test_fast_path_equals_the_reference(
    window: CountWindows, items: tuple[Item, ...], aggregate: str, grouped: bool, end: str
) -> None:
    aggregations, by = AGGREGATES[aggregate]
    query = Query(window, group_by=("key",) if grouped else (), aggregate=aggregations, aggregate_by=by)
    rules = Rules(end_of_input=end)
    assert eligible(query, rules, "tenzir")
    assert run(query, items, rules=rules).outputs == tuple(reference(query, items, rules))


def without_arrivals(items: tuple[Item, ...], keep_every: int) -> tuple[Item, ...]:
    """The items with ``at_ms`` cleared, except on every ``keep_every``-th event (0: on none)."""

    def event(e: Event) -> Event:
        return e if keep_every and e.seq % keep_every == 0 else Event(e.seq, e.payload)

    return tuple(
        event(i) if isinstance(i, Event) else Batch(tuple(map(event, i.events))) if isinstance(i, Batch) else i
        for i in items
    )


@settings(max_examples=300, deadline=None)
@given(
    window=window_specs(kinds=("count",), max_count=6) | gapped,
    items=streams(max_events=60, keys=[1, True, "a", None], allow_null_times=True, with_batches=True, with_advances=True),
    arrivals=st.sampled_from([0, 1, 3]),
    grouped=st.booleans(),
    chunk_size=st.integers(1, 9),
    min_run=st.integers(1, 4),
    as_iterator=st.booleans(),
)
def test_the_columns_equal_the_reference_across_chunk_boundaries(
    window: CountWindows, items: tuple[Item, ...], arrivals: int, grouped: bool, chunk_size: int,
    min_run: int, as_iterator: bool,
) -> None:
    """Tiny chunks and runs put every chunk boundary, new key, batch and arrival time
    through the columnar path and its hand-overs to the per-event loop (keys 1 and True
    are one group: the first seen names it)."""
    query = Query(window, group_by=("key",) if grouped else (), aggregate=(Aggregation("n", "count"),))
    items = without_arrivals(items, arrivals)
    stream = iter(items) if as_iterator else items
    fast = fast_outputs(query, stream, Rules(), chunk_size=chunk_size, min_run=min_run)
    assert tuple(fast) == tuple(reference(query, items, Rules()))


@settings(max_examples=150, deadline=None)
@given(
    window=window_specs(kinds=("count",), max_count=6),
    items=streams(max_events=60, keys=[0, 1, True, 1.0, 2, 65_535, 65_536, -1]),
    numpy_ints=st.booleans(),
    chunk_size=st.integers(1, 9),
)
def test_numeric_keys_group_like_the_reference_in_the_columns(
    window: CountWindows, items: tuple[Item, ...], numpy_ints: bool, chunk_size: int
) -> None:
    """Small int keys are coded by a table lookup (columns.KeyTable.small_int_codes): keys
    that are equal as dict keys (1, True, 1.0, numpy's 2) stay one group named by the first
    seen, keys out of the table's range (65,536, -1) take the dict."""

    def key(value: Any) -> Any:
        return np.int64(value) if numpy_ints and type(value) is int and value == 2 else value

    items = tuple(
        Event(i.seq, {**i.payload, "key": key(i.payload.get("key"))}) if isinstance(i, Event) else i
        for i in without_arrivals(items, 0)
    )
    query = Query(window, group_by=("key",), aggregate=(Aggregation("n", "count"),))
    fast = fast_outputs(query, items, Rules(), chunk_size=chunk_size, min_run=1)
    assert tuple(fast) == tuple(reference(query, items, Rules()))


@pytest.mark.parametrize("every", [1, 2, 3])
def test_windows_of_keys_far_apart_in_one_chunk(every: int) -> None:
    """One key thousands of offsets ahead of the others: the chunk's window starts spread
    wider than its windows (count_fast looks them up by distinct start, not by a range)."""
    keys = ["a"] * 3000 + ["a", "b", "c", "b"] * 100
    items = tuple(Event(i, {"key": k}) for i, k in enumerate(keys))
    query = Query(CountWindows(3, every=every), group_by=("key",), aggregate=(Aggregation("n", "count"),))
    for chunk_size in (500, 4096):
        fast = fast_outputs(query, items, Rules(), chunk_size=chunk_size)
        assert tuple(fast) == tuple(reference(query, items, Rules()))


def test_a_chunk_past_65536_events_keeps_stream_order() -> None:
    """Positions past uint16 (count_fast sorts a chunk's completing events by position as
    uint16 only up to 65,536 events)."""
    items = tuple(Event(i, {"key": i % 7}) for i in range(66_000))
    query = Query(CountWindows(3, every=2), group_by=("key",), aggregate=(Aggregation("n", "count"),))
    fast = tuple(fast_outputs(query, items, Rules(), chunk_size=70_000))
    assert fast == tuple(reference(query, items, Rules()))
    assert [o.after_seq for o in fast if o.reason == "count"][-3:] == [65_997, 65_998, 65_999]


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 64])
def test_missing_and_unhashable_keys_in_a_chunk_take_the_loop(chunk_size: int) -> None:
    keys: list[Any] = ["a", "a", [1], "b", None, "a", [1], "b"] * 3
    items = tuple(Event(i, {"key": k} if k is not None else {}) for i, k in enumerate(keys))
    query = Query(CountWindows(2), group_by=("key",), aggregate=(Aggregation("n", "count"),))
    fast = fast_outputs(query, items, Rules(), chunk_size=chunk_size, min_run=1)
    assert tuple(fast) == tuple(reference(query, items, Rules()))


def test_the_timeline_above() -> None:
    query = Query(CountWindows(3, every=2), aggregate=(Aggregation("n", "count"),))
    result = run(query, numbered({"i": i} for i in range(7)))
    assert [(e.window.start_offset, e.window.end_offset, e.row["n"], e.reason, e.after_seq)
            for e in result.emissions] == [
        (0, 3, 3, "count", 2), (2, 5, 3, "count", 4), (4, 7, 3, "count", 6),
        (6, 9, 1, "end_of_input", 6)]  # a partial window reports its nominal range


@pytest.mark.parametrize("aggregate", sorted(AGGREGATES))
def test_a_flush_after_the_wall_clock_moved_carries_the_new_wall_time(aggregate: str) -> None:
    aggregations, by = AGGREGATES[aggregate]
    query = Query(CountWindows(3), aggregate=aggregations, aggregate_by=by)
    items = (*numbered([{"ts": 1, "value": 2}, {"ts": 2, "value": 3}], at_ms=[5, 7]), Advance(40))
    result = run(query, items)
    assert result.emissions and {e.wall_ms for e in result.emissions} == {40}
    assert result.outputs == tuple(reference(query, items, Rules()))


@pytest.mark.parametrize("group_by", [("key",), ("key", "value")])
def test_list_and_mapping_group_values_group_like_the_reference(group_by: tuple[str, ...]) -> None:
    keys: list[Any] = [[1, 2], "a", {"x": 1}, [1, 2], {"x": 1}, "a", [2, 1]]
    items = numbered({"key": k, "value": 1} for k in keys)
    query = Query(CountWindows(2), group_by=group_by, aggregate=(Aggregation("n", "count"),))
    result = run(query, items)
    assert [e.group for e in result.emissions][:3] == (
        [[1, 2], {"x": 1}, "a"] if group_by == ("key",) else [[[1, 2], 1], [{"x": 1}, 1], ["a", 1]]
    )
    assert result.outputs == tuple(reference(query, items, Rules()))


@pytest.mark.parametrize(
    ("query", "rules", "profile"),
    [
        (Query(CountWindows(3)), Rules(), "tenzir"),  # no aggregate: one emission per event
        (Query(CountWindows(3), aggregate=(Aggregation("n", "count"),)), Rules(), "ekuiper"),
        (Query(FixedWindows(3), aggregate=(Aggregation("n", "count"),)), Rules(), "tenzir"),
    ],
)
def test_other_runs_take_the_reference(query: Query, rules: Rules, profile: str) -> None:
    assert not eligible(query, rules, profile)


INVALID_STREAMS: dict[str, tuple[Any, ...]] = {
    "seq skips": (Event(0, {"key": "a"}), Event(2, {"key": "a"})),
    "arrival goes back in a batch": (Batch((Event(0, {}, 50), Event(1, {}, 40))),),
    "advance goes back": (Event(0, {}, 50), Advance(10)),
    "event after end": (Event(0, {}), End(), Event(1, {})),
    "seq goes back in a run": tuple(Event(s, {"key": "a"}) for s in (0, 1, 2, 1, 4)),
    "arrival goes back in a run": tuple(Event(s, {"key": "a"}, 10 - s) for s in range(5)),
    "arrival missing in a run": (Event(0, {}, 5), Event(1, {}), Event(2, {}, 1)),
}


@pytest.mark.parametrize("chunk_size", [1, 2, 64])
@pytest.mark.parametrize("items", INVALID_STREAMS.values(), ids=INVALID_STREAMS.keys())
def test_fast_path_rejects_invalid_streams_like_the_reference(items: tuple[Item, ...], chunk_size: int) -> None:
    query = Query(CountWindows(2), group_by=("key",), aggregate=(Aggregation("n", "count"),))
    with pytest.raises(InvalidStream) as fast:
        list(fast_outputs(query, items, Rules(), chunk_size=chunk_size, min_run=1))
    with pytest.raises(InvalidStream) as slow:
        reference(query, items, Rules())
    assert str(fast.value) == str(slow.value)


def test_flushed_windows_have_rows_of_their_own() -> None:
    """Two keys flushed with the same count hold equal rows, never one shared dict."""
    query = Query(CountWindows(5), group_by=("key",), aggregate=(Aggregation("n", "count"),))
    items = numbered([{"key": "a"}, {"key": "b"}, {"key": "a"}, {"key": "b"}])
    first, second = fast_outputs(query, items, Rules())
    assert isinstance(first, Emission) and isinstance(second, Emission)
    assert first.row == second.row == {"n": 2} and first.row is not second.row
    assert [first, second] == reference(query, items, Rules())
