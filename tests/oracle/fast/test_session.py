"""The session fast path (oracle/fast/session.py) against the reference operator.

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

from windtunnel.oracle.engine import reference_outputs
from windtunnel.oracle.fast import refusal, session
from windtunnel.oracle.model.errors import InvalidStream
from windtunnel.oracle.model.results import Emission, Output
from windtunnel.oracle.model.rules import RULE_VALUES, Rules
from windtunnel.oracle.model.spec import NOW, Aggregation, Query, SessionWindows
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item, Watermark, numbered
from windtunnel.simulator.strategies import streams

COUNT = (Aggregation("n", "count"),)
DEFAULT_RULES = Rules()
AGGREGATES: dict[str, tuple[Aggregation, ...]] = {
    "count": COUNT,
    "count and bounds": (
        Aggregation("n", "count"), Aggregation("ws", "window_start"), Aggregation("we", "window_end"),
    ),
}


def fast(query: Query, items: Any, rules: Rules = DEFAULT_RULES, time_unit_ms: int = 1, **tuning: int) -> tuple[Output, ...]:
    """The fast path's outputs; its columns take runs of any length unless ``tuning`` says."""
    return tuple(session.outputs(query, items, rules, time_unit_ms, **({"min_run": 1} | tuning)))


def slow(query: Query, items: Any, rules: Rules = DEFAULT_RULES, time_unit_ms: int = 1) -> tuple[Output, ...]:
    return tuple(reference_outputs(query, items, rules=rules, time_unit_ms=time_unit_ms))


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
        allow_null_times=True, with_batches=True, with_advances=True,
    ),
    marks=st.lists(st.tuples(st.integers(0, 60), st.integers(-1_000, 40_000)), max_size=2),
    arrivals=st.sampled_from([0, 0, 1, 5]),
    aggregate=st.sampled_from(sorted(AGGREGATES)),
    grouped=st.booleans(),
    end=st.sampled_from(["flush", "discard"]),
    session_gap=st.sampled_from(["inclusive", "exclusive"]),
    chunk_size=st.integers(1, 12),
    min_run=st.integers(1, 4),
    as_iterator=st.booleans(),
)
def test_the_fast_path_equals_the_reference_across_runs_and_chunks(
    gap: int, tolerance: int, items: tuple[Item, ...], marks: list[tuple[int, int]], arrivals: int,
    aggregate: str, grouped: bool, end: str, session_gap: str, chunk_size: int, min_run: int,
    as_iterator: bool,
) -> None:
    """Tiny chunks put sessions, buffers and open sessions across run boundaries, and
    watermarks, null times, short runs or the end hand the stream to the reference with
    every key's clock, buffer and open session (keys 1 and True are one group: the first
    seen names it)."""
    stream = without_arrivals(list(items), arrivals)
    for position, to_ms in sorted(marks, reverse=True):
        stream.insert(min(position, len(stream)), Watermark(to_ms))
    query = Query(
        SessionWindows(gap, tolerance_ms=tolerance), group_by=("key",) if grouped else (),
        aggregate=AGGREGATES[aggregate],
    )
    rules = Rules(end_of_input=end, session_gap=session_gap)
    assert refusal(query, rules, "tenzir") is None
    taken = iter(stream) if as_iterator else stream
    assert fast(query, taken, rules, chunk_size=chunk_size, min_run=min_run) == slow(query, stream, rules)


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
    assert fast(query, stream, rules, time_unit_ms, chunk_size=chunk_size) == slow(query, stream, rules, time_unit_ms)


@pytest.mark.parametrize(
    "times",
    [[0, 2**61, 5, 2**61 + 3], [2**70, 1, 2], [-(2**62), 0, 3], [1, 2, 2**63 - 2], [-(2**63), 0, 3]],
    ids=["a wide range", "beyond int64", "near the int64 floor", "near the int64 ceiling", "the int64 floor"],
)
@pytest.mark.parametrize("time_unit_ms", [1, 1000])
def test_extreme_times_read_like_the_reference(times: list[int], time_unit_ms: int) -> None:
    """Times the int64 columns cannot hold safely hand the stream to the reference."""
    stream = numbered({"ts": t, "key": "a"} for t in times * 3)
    query = Query(SessionWindows(10, tolerance_ms=5), group_by=("key",), aggregate=COUNT)
    assert fast(query, stream, Rules(), time_unit_ms, chunk_size=4) == slow(query, stream, Rules(), time_unit_ms)


@pytest.mark.parametrize(
    "odd",
    [{"key": "a"}, {"ts": 4}, {"ts": True, "key": "a"}, {"ts": 4.0, "key": "a"}, {"ts": 2**64, "key": "a"},
     {"ts": "2026-01-01T00:00:00Z", "key": "a"}, {"ts": 5, "key": ["x", 1]}],
    ids=["no time", "no key", "a bool time", "a float time", "a time beyond uint64", "a text time",
         "an unhashable key"],
)
@pytest.mark.parametrize("position", [0, 3, 7])
def test_a_run_with_an_odd_time_or_key_reads_like_the_reference(odd: dict[str, Any], position: int) -> None:
    """A time that is not a plain int, or a key the columns cannot code, in a run hands
    the stream to the reference there, which reads it as always."""
    payloads: list[dict[str, Any]] = [{"ts": t, "key": "ab"[t % 2]} for t in (0, 3, 1, 9, 30, 31, 29, 60)]
    payloads[position] = odd
    stream = numbered(payloads * 2)
    for group_by in [("key",), ()]:
        query = Query(SessionWindows(10, tolerance_ms=5), group_by=group_by, aggregate=COUNT)
        for chunk_size in (4, 8, 16):
            assert fast(query, stream, chunk_size=chunk_size) == slow(query, stream)


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
    outputs = fast(query, stream, rules, chunk_size=chunk_size)
    assert outputs == slow(query, stream, rules)
    assert [(o.window.start_ms, o.after_seq) for o in outputs if isinstance(o, Emission)] == [(0, 2), (5, 2)]


def test_the_timeline_above() -> None:
    query = Query(SessionWindows(10, tolerance_ms=5), aggregate=COUNT)
    outputs = fast(query, numbered({"ts": t} for t in (0, 8, 3, 30, 12, 50)))
    assert [(e.window.start_ms, e.window.end_ms, e.row["n"], e.reason)
            for e in outputs if isinstance(e, Emission)] == [
        (0, 8, 3, "close"), (30, 30, 1, "close"), (50, 50, 1, "end_of_input")]
    assert [(d.seq, d.reason) for d in outputs if not isinstance(d, Emission)] == [(4, "late")]


def test_emissions_carry_the_wall_clock_of_their_event() -> None:
    query = Query(SessionWindows(10), aggregate=COUNT)
    items = (*numbered([{"ts": 1}, {"ts": 2}, {"ts": 30}, {"ts": 31}], at_ms=[5, 7, 9, 9]), Advance(40))
    outputs = fast(query, items)
    assert [e.wall_ms for e in outputs if isinstance(e, Emission)] == [9, 40]
    assert outputs == slow(query, items)


@pytest.mark.parametrize(
    ("query", "rules", "profile", "reason"),
    [
        (Query(SessionWindows(3)), Rules(), "tenzir", "no aggregate"),
        (Query(SessionWindows(3), aggregate=COUNT), Rules(), "flink", "profile flink"),
        (Query(SessionWindows(3, on=NOW), aggregate=COUNT), Rules(), "tenzir", "now()"),
        (Query(SessionWindows(3, on="a.ts"), aggregate=COUNT), Rules(), "tenzir", "nested"),
        (Query(SessionWindows(3, max_events=2), aggregate=COUNT), Rules(), "tenzir", "max_events"),
        (Query(SessionWindows(3, max_duration_ms=5), aggregate=COUNT), Rules(), "tenzir", "max_duration"),
        (Query(SessionWindows(3, idle_timeout_ms=5), aggregate=COUNT), Rules(), "tenzir", "idle_timeout"),
        (Query(SessionWindows(3), aggregate=(Aggregation("t", "sum", "v"),)), Rules(), "tenzir", "count-only"),
        (Query(SessionWindows(3), ("a", "b"), COUNT), Rules(), "tenzir", "group field"),
        (Query(SessionWindows(3), aggregate=COUNT), Rules(session_order="merge"), "tenzir", "session_order"),
        (Query(SessionWindows(3), aggregate=COUNT), Rules(session_ends="gap"), "tenzir", "session_ends"),
    ],
)
def test_other_runs_take_the_reference(query: Query, rules: Rules, profile: str, reason: str) -> None:
    found = refusal(query, rules, profile)
    assert found is not None and reason in found


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
    assert refusal(query, dataclasses.replace(Rules(), **{name: value}), "tenzir") == (
        f"rule {name}: {value} (the fast path reads only end_of_input, session_gap)"
    )


INVALID_STREAMS: dict[str, tuple[Any, ...]] = {
    "seq skips": (Event(0, {"ts": 1}), Event(2, {"ts": 2})),
    "arrival goes back in a batch": (Batch((Event(0, {"ts": 1}, 50), Event(1, {"ts": 2}, 40))),),
    "advance goes back": (Event(0, {"ts": 1}, 50), Advance(10)),
    "event after end": (Event(0, {"ts": 1}), End(), Event(1, {"ts": 2})),
}


@pytest.mark.parametrize("items", INVALID_STREAMS.values(), ids=INVALID_STREAMS.keys())
def test_fast_path_rejects_invalid_streams_like_the_reference(items: tuple[Item, ...]) -> None:
    query = Query(SessionWindows(3), group_by=("key",), aggregate=COUNT)
    with pytest.raises(InvalidStream) as fast_error:
        fast(query, items)
    with pytest.raises(InvalidStream) as slow_error:
        slow(query, items)
    assert str(fast_error.value) == str(slow_error.value)
