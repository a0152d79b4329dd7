"""The session fast path (oracle/windows/session_fast.py) against the reference operator.

One key, gap 10, tolerance 5 (times in ms; the watermark is clock - 5):

    event at      0    8    3   30   12   50
    clock         0    8    8   30   30   50
    released      0    3, 8     12, 30 ... (each once the watermark reaches it)
    session      [0 ....... 12]  [30]                      [50] flushed at the end
    12 arrives after 30 pushed the watermark to 25: late (before the watermark)
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.oracle.engine import operator_for, run
from windtunnel.oracle.model.errors import InvalidStream
from windtunnel.oracle.model.results import Emission, Output
from windtunnel.oracle.model.rules import RULE_VALUES, Rules
from windtunnel.oracle.model.spec import NOW, Aggregation, CountWindows, Query, SessionWindows
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item, Watermark, numbered
from windtunnel.oracle.windows.driver import Driver
from windtunnel.oracle.windows.session_fast import eligible, fast_outputs
from windtunnel.simulator.strategies import streams

AGGREGATES: dict[str, tuple[tuple[Aggregation, ...], tuple[str, ...]]] = {
    "count": ((Aggregation("n", "count"),), ()),
    "count and bounds": (
        (Aggregation("n", "count"), Aggregation("ws", "window_start"), Aggregation("we", "window_end")),
        (),
    ),
    "sum and collect": ((Aggregation("total", "sum", "value"), Aggregation("ts", "collect", "ts")), ()),
    "count by value": ((Aggregation("n", "count"),), ("value",)),
}


COUNT = (Aggregation("n", "count"),)


def reference(
    query: Query, items: tuple[Item, ...], rules: Rules, time_unit_ms: int = 1
) -> list[Output]:
    """The reference operator, bypassing the fast path."""
    driver = Driver(query, lambda q, ctx: operator_for(q, ctx), rules, time_unit_ms=time_unit_ms)
    return list(driver.run(items))


@settings(max_examples=300, deadline=None)
@given(
    gap=st.integers(0, 5_000),
    tolerance=st.integers(0, 3_000),
    items=streams(
        max_events=30, keys=3, max_step_ms=3_000, max_disorder_ms=4_000,
        allow_null_times=True, with_batches=True, with_advances=True,
    ),
    aggregate=st.sampled_from(sorted(AGGREGATES)),
    grouped=st.booleans(),
    end=st.sampled_from(["flush", "discard"]),
    session_gap=st.sampled_from(["inclusive", "exclusive"]),
)
def test_fast_path_equals_the_reference(
    gap: int, tolerance: int, items: tuple[Item, ...], aggregate: str, grouped: bool, end: str,
    session_gap: str,
) -> None:
    aggregations, by = AGGREGATES[aggregate]
    query = Query(
        SessionWindows(max(gap, 1), tolerance_ms=tolerance),
        group_by=("key",) if grouped else (),
        aggregate=aggregations,
        aggregate_by=by,
    )
    rules = Rules(end_of_input=end, session_gap=session_gap)
    assert eligible(query, rules, "tenzir")
    assert run(query, items, rules=rules).outputs == tuple(reference(query, items, rules))


@settings(max_examples=150, deadline=None)
@given(
    gap=st.integers(1, 3_000),
    tolerance=st.integers(0, 2_000),
    items=streams(max_events=25, keys=3, max_step_ms=2_000, max_disorder_ms=3_000, with_batches=True),
    marks=st.lists(st.tuples(st.integers(0, 30), st.integers(-1_000, 40_000)), max_size=4),
)
def test_injected_watermarks_equal_the_reference(
    gap: int, tolerance: int, items: tuple[Item, ...], marks: list[tuple[int, int]]
) -> None:
    """``{watermark: T}`` items between the others (rule W1): clocks move, keys seen later
    start at the watermark's clock."""
    stream: list[Item] = list(items)
    for position, to_ms in sorted(marks, reverse=True):
        stream.insert(min(position, len(stream)), Watermark(to_ms))
    query = Query(SessionWindows(gap, tolerance_ms=tolerance), group_by=("key",), aggregate=COUNT)
    assert run(query, stream).outputs == tuple(reference(query, tuple(stream), Rules()))


def without_arrivals(items: list[Item], keep_every: int) -> list[Item]:
    """The items with ``at_ms`` cleared, except on every ``keep_every``-th event (0: on none)."""

    def event(e: Event) -> Event:
        return e if keep_every and e.seq % keep_every == 0 else Event(e.seq, e.payload)

    return [
        event(i) if isinstance(i, Event) else Batch(tuple(map(event, i.events))) if isinstance(i, Batch) else i
        for i in items
    ]


@settings(max_examples=400, deadline=None)
@given(
    gap=st.integers(1, 3_000),
    tolerance=st.integers(0, 2_000),
    items=streams(max_events=60, keys=[1, True, "a", "b"], max_step_ms=2_000, max_disorder_ms=4_000)
    | streams(
        max_events=60, keys=[1, True, "a", "b"], max_step_ms=2_000, max_disorder_ms=4_000,
        allow_null_times=True, with_batches=True,
    ),
    marks=st.lists(st.tuples(st.integers(0, 60), st.integers(-1_000, 40_000)), max_size=1),
    arrivals=st.sampled_from([0, 0, 0, 5]),
    aggregate=st.sampled_from(["count", "count and bounds"]),
    grouped=st.booleans(),
    session_gap=st.sampled_from(["inclusive", "exclusive"]),
    chunk_size=st.integers(1, 12),
    as_iterator=st.booleans(),
)
def test_the_columns_equal_the_reference_across_chunk_boundaries(
    gap: int, tolerance: int, items: tuple[Item, ...], marks: list[tuple[int, int]], arrivals: int,
    aggregate: str, grouped: bool, session_gap: str, chunk_size: int, as_iterator: bool,
) -> None:
    """Tiny chunks put sessions, buffers and open sessions across chunk boundaries, and
    hand chunks with null times, watermarks, batches or arrival times to the per-event
    loop in between (keys 1 and True are one group: the first seen names it)."""
    stream = without_arrivals(list(items), arrivals)
    for position, to_ms in sorted(marks, reverse=True):
        stream.insert(min(position, len(stream)), Watermark(to_ms))
    aggregations, by = AGGREGATES[aggregate]
    query = Query(
        SessionWindows(gap, tolerance_ms=tolerance), group_by=("key",) if grouped else (),
        aggregate=aggregations, aggregate_by=by,
    )
    rules = Rules(session_gap=session_gap)
    fast = fast_outputs(query, iter(stream) if as_iterator else stream, rules, chunk_size=chunk_size, min_run=1)
    assert tuple(fast) == tuple(reference(query, tuple(stream), rules))


@settings(max_examples=400, deadline=None)
@given(
    events=st.lists(st.tuples(st.integers(0, 40), st.sampled_from(["a", "b"])), min_size=1, max_size=40),
    gap=st.integers(1, 10),
    tolerance=st.integers(0, 10),
    session_gap=st.sampled_from(["inclusive", "exclusive"]),
    chunk_size=st.integers(1, 8),
    mark=st.none() | st.tuples(st.integers(0, 40), st.integers(0, 40)),
    time_unit_ms=st.sampled_from([1, 1, 7]),
)
def test_the_columns_equal_the_reference_on_dense_times(
    events: list[tuple[int, str]], gap: int, tolerance: int, session_gap: str, chunk_size: int,
    mark: tuple[int, int] | None, time_unit_ms: int,
) -> None:
    """Times close together hit every boundary case: an event at exactly the watermark, a
    cutoff exactly at a close point, a gap of exactly ``gap``, ties across chunks."""
    stream: list[Item] = list(numbered({"ts": t, "key": k} for t, k in events))
    if mark is not None:
        stream.insert(min(mark[0], len(stream)), Watermark(mark[1]))
    query = Query(SessionWindows(gap, tolerance_ms=tolerance), group_by=("key",), aggregate=COUNT)
    rules = Rules(session_gap=session_gap)
    fast = fast_outputs(query, stream, rules, time_unit_ms, chunk_size=chunk_size, min_run=1)
    assert tuple(fast) == tuple(reference(query, tuple(stream), rules, time_unit_ms))


@pytest.mark.parametrize(
    "times",
    [[0, 2**61, 5, 2**61 + 3], [2**70, 1, 2], [-(2**62), 0, 3], [1, 2, 2**63 - 2], [-(2**63), 0, 3]],
    ids=["a wide range", "beyond int64", "near the int64 floor", "near the int64 ceiling", "the int64 floor"],
)
@pytest.mark.parametrize("time_unit_ms", [1, 1000])
def test_extreme_times_read_like_the_reference(times: list[int], time_unit_ms: int) -> None:
    """Times the int64 columns cannot hold safely go through the per-event loop."""
    stream = numbered({"ts": t, "key": "a"} for t in times * 3)
    query = Query(SessionWindows(10, tolerance_ms=5), group_by=("key",), aggregate=COUNT)
    fast = fast_outputs(query, stream, Rules(), time_unit_ms, chunk_size=4, min_run=1)
    assert tuple(fast) == tuple(reference(query, stream, Rules(), time_unit_ms))


@pytest.mark.parametrize(
    "odd",
    [{"key": "a"}, {"ts": 4}, {"ts": True, "key": "a"}, {"ts": 4.0, "key": "a"}, {"ts": 2**64, "key": "a"}],
    ids=["no time", "no key", "a bool time", "a float time", "a time beyond uint64"],
)
@pytest.mark.parametrize("position", [0, 3, 7])
def test_a_chunk_with_an_odd_time_or_key_reads_like_the_reference(odd: dict[str, Any], position: int) -> None:
    """The columns read times and keys by map: a missing field or a time that is not a
    plain int in a chunk sends it to the per-event loop, as the reference reads it."""
    payloads: list[dict[str, Any]] = [{"ts": t, "key": "ab"[t % 2]} for t in (0, 3, 1, 9, 30, 31, 29, 60)]
    payloads[position] = odd
    stream = numbered(payloads * 2)
    query = Query(SessionWindows(10, tolerance_ms=5), group_by=("key",), aggregate=COUNT)
    for chunk_size in (4, 8, 16):
        fast = fast_outputs(query, stream, Rules(), 1, chunk_size=chunk_size, min_run=1)
        assert tuple(fast) == tuple(reference(query, stream, Rules(), 1))


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 8])
def test_a_session_closes_when_the_next_first_time_arrives_not_when_the_cutoff_reaches_it(
    chunk_size: int,
) -> None:
    """Gap 5 (exclusive), tolerance 2: 7 moves the cutoff to 5 and releases 0; 5 arrives at
    exactly the cutoff (not late), is released at once and closes [0, 0] then (seq 2),
    not at seq 1 when the cutoff first reached it."""
    stream = numbered({"ts": t, "key": "a"} for t in (0, 7, 5))
    query = Query(SessionWindows(5, tolerance_ms=2), group_by=("key",), aggregate=COUNT)
    rules = Rules(session_gap="exclusive")
    fast = tuple(fast_outputs(query, stream, rules, chunk_size=chunk_size, min_run=1))
    assert fast == tuple(reference(query, stream, rules))
    assert [(o.window.start_ms, o.after_seq) for o in fast if isinstance(o, Emission)] == [(0, 2), (5, 2)]


@settings(max_examples=100, deadline=None)
@given(
    times=st.lists(st.integers(0, 40), min_size=1, max_size=25),
    gap=st.integers(1, 10),
    tolerance=st.integers(0, 10),
)
def test_ties_and_dense_times_equal_the_reference(times: list[int], gap: int, tolerance: int) -> None:
    """Many equal times on one key: ties leave the reorder buffer in stream order."""
    items = numbered({"ts": t, "value": i} for i, t in enumerate(times))
    query = Query(
        SessionWindows(gap, tolerance_ms=tolerance),
        aggregate=(Aggregation("order", "collect", "value"),),
    )
    assert run(query, items).outputs == tuple(reference(query, items, Rules()))


def test_the_timeline_above() -> None:
    query = Query(SessionWindows(10, tolerance_ms=5), aggregate=(Aggregation("n", "count"),))
    result = run(query, numbered({"ts": t} for t in (0, 8, 3, 30, 12, 50)))
    assert [(e.window.start_ms, e.window.end_ms, e.row["n"], e.reason) for e in result.emissions] == [
        (0, 8, 3, "close"), (30, 30, 1, "close"), (50, 50, 1, "end_of_input")]
    assert [(d.seq, d.reason) for d in result.drops] == [(4, "late")]


@pytest.mark.parametrize("time_unit_ms", [1, 1000])
def test_text_times_and_units_read_like_the_reference(time_unit_ms: int) -> None:
    payloads: list[dict[str, Any]] = [
        {"ts": 1, "key": "a"},
        {"ts": "2026-01-01T00:00:00Z", "key": "a"},
        {"ts": "not-a-time", "key": "b"},
        {"key": "b"},
        {"ts": 1.5, "key": "a"},
        {"ts": 4, "key": ["x", 1]},
        {"ts": 5, "key": {"m": 1}},
        {"ts": 9, "key": ["x", 1]},
    ]
    items = numbered(payloads)
    for group_by in [("key",), ("key", "ts")]:
        query = Query(SessionWindows(3), group_by=group_by, aggregate=(Aggregation("n", "count"),))
        fast = run(query, items, time_unit_ms=time_unit_ms).outputs
        assert fast == tuple(reference(query, items, Rules(), time_unit_ms))


def test_a_flush_after_the_wall_clock_moved_carries_the_new_wall_time() -> None:
    query = Query(SessionWindows(10), aggregate=(Aggregation("n", "count"),))
    items = (*numbered([{"ts": 1}, {"ts": 2}], at_ms=[5, 7]), Advance(40))
    result = run(query, items)
    assert [e.wall_ms for e in result.emissions] == [40]
    assert result.outputs == tuple(reference(query, items, Rules()))


@pytest.mark.parametrize(
    ("query", "rules", "profile"),
    [
        (Query(SessionWindows(3)), Rules(), "tenzir"),  # no aggregate
        (Query(SessionWindows(3), aggregate=COUNT), Rules(), "flink"),
        (Query(SessionWindows(3, on=NOW), aggregate=COUNT), Rules(), "tenzir"),
        (Query(SessionWindows(3, max_events=2), aggregate=COUNT), Rules(), "tenzir"),
        (Query(SessionWindows(3, max_duration_ms=5), aggregate=COUNT), Rules(), "tenzir"),
        (Query(SessionWindows(3, idle_timeout_ms=5), aggregate=COUNT), Rules(), "tenzir"),
        (Query(SessionWindows(3), aggregate=COUNT), Rules(session_order="merge"), "tenzir"),
        (Query(SessionWindows(3), aggregate=COUNT), Rules(session_ends="gap"), "tenzir"),
        (Query(CountWindows(3), aggregate=COUNT), Rules(), "tenzir"),
    ],
)
def test_other_runs_take_the_reference(query: Query, rules: Rules, profile: str) -> None:
    assert not eligible(query, rules, profile)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        (name, value)
        for name, values in RULE_VALUES.items()
        if name not in ("end_of_input", "session_gap")
        for value in values
        if value != getattr(Rules(), name)
    ],
)
def test_any_other_rule_off_its_default_takes_the_reference(name: str, value: Any) -> None:
    """A rule the fast path does not read, set to another value, falls back (nothing assumed)."""
    query = Query(SessionWindows(3), aggregate=COUNT)
    assert not eligible(query, dataclasses.replace(Rules(), **{name: value}), "tenzir")


INVALID_STREAMS: dict[str, tuple[Any, ...]] = {
    "seq skips": (Event(0, {"ts": 1}), Event(2, {"ts": 2})),
    "arrival goes back in a batch": (Batch((Event(0, {"ts": 1}, 50), Event(1, {"ts": 2}, 40))),),
    "advance goes back": (Event(0, {"ts": 1}, 50), Advance(10)),
    "event after end": (Event(0, {"ts": 1}), End(), Event(1, {"ts": 2})),
}


@pytest.mark.parametrize("items", INVALID_STREAMS.values(), ids=INVALID_STREAMS.keys())
def test_fast_path_rejects_invalid_streams_like_the_reference(items: tuple[Item, ...]) -> None:
    query = Query(SessionWindows(3), group_by=("key",), aggregate=COUNT)
    with pytest.raises(InvalidStream) as fast:
        run(query, items)
    with pytest.raises(InvalidStream) as slow:
        reference(query, items, Rules())
    assert str(fast.value) == str(slow.value)
