"""The count-window fast path (oracle/fast/count.py) against the reference operator.

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

from windtunnel.oracle.engine import reference_outputs
from windtunnel.oracle.fast import count, refusal
from windtunnel.oracle.model.errors import InvalidStream
from windtunnel.oracle.model.results import Emission
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Aggregation, CountWindows, FixedWindows, Query
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item, Watermark, numbered
from windtunnel.simulator.strategies import streams, window_specs

COUNT = (Aggregation("n", "count"),)
AGGREGATES: dict[str, tuple[Aggregation, ...]] = {
    "count": COUNT,
    "count and bounds": (Aggregation("n", "count"), Aggregation("ws", "window_start")),
}


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
    window=window_specs(kinds=("count",), max_count=6),
    items=streams(max_events=60, keys=[1, True, "a", None], allow_null_times=True, with_batches=True, with_advances=True),
    arrivals=st.sampled_from([0, 1, 3]),
    aggregate=st.sampled_from(sorted(AGGREGATES)),
    grouped=st.booleans(),
    end=st.sampled_from(["flush", "discard"]),
    chunk_size=st.integers(1, 9),
    min_run=st.integers(1, 4),
    as_iterator=st.booleans(),
)
def test_the_fast_path_equals_the_reference_across_runs_and_chunks(
    window: CountWindows, items: tuple[Item, ...], arrivals: int, aggregate: str, grouped: bool,
    end: str, chunk_size: int, min_run: int, as_iterator: bool,
) -> None:
    """Tiny chunks and runs put every chunk boundary, new key, batch and arrival time
    through the columns, and hand the stream to the reference at a short run or the end
    (keys 1 and True are one group: the first seen names it)."""
    query = Query(window, group_by=("key",) if grouped else (), aggregate=AGGREGATES[aggregate])
    rules = Rules(end_of_input=end)
    assert refusal(query, rules, "tenzir") is None
    items = without_arrivals(items, arrivals)
    stream = iter(items) if as_iterator else items
    fast = count.outputs(query, stream, rules, chunk_size=chunk_size, min_run=min_run)
    assert tuple(fast) == tuple(reference_outputs(query, items, rules=rules))


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
    query = Query(window, group_by=("key",), aggregate=COUNT)
    fast = count.outputs(query, items, Rules(), chunk_size=chunk_size, min_run=1)
    assert tuple(fast) == tuple(reference_outputs(query, items))


@settings(max_examples=100, deadline=None)
@given(
    window=window_specs(kinds=("count",), max_count=5),
    items=streams(max_events=30, keys=3),
    marks=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 99)), max_size=2),
)
def test_a_watermark_item_is_rejected_after_the_outputs_before_it(
    window: CountWindows, items: tuple[Item, ...], marks: list[tuple[int, int]]
) -> None:
    """Count windows take no watermark: the reference raises at it, after the outputs
    the fast path gave before it."""
    stream: list[Item] = list(items)
    for position, to_ms in sorted(marks, reverse=True):
        stream.insert(min(position, len(stream)), Watermark(to_ms))
    query = Query(window, group_by=("key",), aggregate=COUNT)
    fast: list[Any] = []
    slow: list[Any] = []
    for outputs, collected in ((count.outputs(query, stream, Rules(), min_run=1), fast),
                               (reference_outputs(query, stream), slow)):
        try:
            collected.extend(outputs)
        except InvalidStream as error:
            collected.append(str(error))
    assert fast == slow


@pytest.mark.parametrize("every", [1, 2, 3])
def test_windows_of_keys_far_apart_in_one_chunk(every: int) -> None:
    """One key thousands of offsets ahead of the others: the chunk's window starts spread
    wider than its windows (looked up by distinct start, not by a range)."""
    keys = ["a"] * 3000 + ["a", "b", "c", "b"] * 100
    items = tuple(Event(i, {"key": k}) for i, k in enumerate(keys))
    query = Query(CountWindows(3, every=every), group_by=("key",), aggregate=COUNT)
    for chunk_size in (500, 4096):
        fast = count.outputs(query, items, Rules(), chunk_size=chunk_size)
        assert tuple(fast) == tuple(reference_outputs(query, items))


def test_a_chunk_past_65536_events_keeps_stream_order() -> None:
    """Positions past uint16 (a chunk's completing events are sorted by position as
    uint16 only up to 65,536 events)."""
    items = tuple(Event(i, {"key": i % 7}) for i in range(66_000))
    query = Query(CountWindows(3, every=2), group_by=("key",), aggregate=COUNT)
    fast = tuple(count.outputs(query, items, Rules(), chunk_size=70_000))
    assert fast == tuple(reference_outputs(query, items))
    assert [o.after_seq for o in fast if o.reason == "count"][-3:] == [65_997, 65_998, 65_999]


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 64])
@pytest.mark.parametrize(
    "keys", [["a", "a", "c", "b", None, "a", None, "b"] * 3, ["a", "a", [1], "b", None, "a", [1], "b"] * 3],
    ids=["missing", "missing and unhashable"],
)
def test_missing_and_unhashable_keys_read_like_the_reference(chunk_size: int, keys: list[Any]) -> None:
    items = tuple(Event(i, {"key": k} if k is not None else {}) for i, k in enumerate(keys))
    query = Query(CountWindows(2), group_by=("key",), aggregate=COUNT)
    fast = count.outputs(query, items, Rules(), chunk_size=chunk_size, min_run=1)
    assert tuple(fast) == tuple(reference_outputs(query, items))


def test_the_timeline_above() -> None:
    query = Query(CountWindows(3, every=2), aggregate=COUNT)
    result = tuple(count.outputs(query, numbered({"i": i} for i in range(7)), Rules(), min_run=1))
    assert [(e.window.start_offset, e.window.end_offset, e.row["n"], e.reason, e.after_seq)
            for e in result if isinstance(e, Emission)] == [
        (0, 3, 3, "count", 2), (2, 5, 3, "count", 4), (4, 7, 3, "count", 6),
        (6, 9, 1, "end_of_input", 6)]  # a partial window reports its nominal range


def test_a_flush_after_the_wall_clock_moved_carries_the_new_wall_time() -> None:
    query = Query(CountWindows(3), aggregate=COUNT)
    items = (*numbered([{"ts": 1}, {"ts": 2}], at_ms=[5, 7]), Advance(40))
    fast = tuple(count.outputs(query, items, Rules(), min_run=1))
    assert fast and {e.wall_ms for e in fast if isinstance(e, Emission)} == {40}
    assert fast == tuple(reference_outputs(query, items))


@pytest.mark.parametrize(
    ("query", "rules", "profile", "reason"),
    [
        (Query(CountWindows(3)), Rules(), "tenzir", "no aggregate"),
        (Query(CountWindows(3), aggregate=COUNT), Rules(), "ekuiper", "profile ekuiper"),
        (Query(CountWindows(3), aggregate=(Aggregation("t", "sum", "v"),)), Rules(), "tenzir", "count-only"),
        (Query(CountWindows(3), aggregate=COUNT, aggregate_by=("v",)), Rules(), "tenzir", "count-only"),
        (Query(CountWindows(2, every=3, allow_gaps=True), aggregate=COUNT), Rules(), "tenzir", "gapped"),
        (Query(CountWindows(3), ("a", "b"), COUNT), Rules(), "tenzir", "group field"),
        (Query(CountWindows(3), ("a.b",), COUNT), Rules(), "tenzir", "nested"),
        (Query(CountWindows(3), aggregate=COUNT), Rules(close_order="opened"), "tenzir", "close_order"),
        (Query(FixedWindows(3), aggregate=COUNT, output_mode="update"), Rules(), "tenzir", "output_mode"),
    ],
)
def test_other_runs_take_the_reference(query: Query, rules: Rules, profile: str, reason: str) -> None:
    found = refusal(query, rules, profile)
    assert found is not None and reason in found


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
    query = Query(CountWindows(2), group_by=("key",), aggregate=COUNT)
    with pytest.raises(InvalidStream) as fast:
        list(count.outputs(query, items, Rules(), chunk_size=chunk_size, min_run=1))
    with pytest.raises(InvalidStream) as slow:
        list(reference_outputs(query, items))
    assert str(fast.value) == str(slow.value)


def test_completed_windows_have_rows_of_their_own() -> None:
    """Two keys' windows completed with the same count hold equal rows, never one shared dict."""
    query = Query(CountWindows(2), group_by=("key",), aggregate=COUNT)
    items = numbered([{"key": "a"}, {"key": "b"}, {"key": "a"}, {"key": "b"}])
    first, second = count.outputs(query, items, Rules(), min_run=1)
    assert isinstance(first, Emission) and isinstance(second, Emission)
    assert first.row == second.row == {"n": 2} and first.row is not second.row
    assert [first, second] == list(reference_outputs(query, items))
