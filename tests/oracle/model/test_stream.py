"""The stream checker's array form (StreamChecker.run) against its item-by-item form, and
the fast paths' one-pass check of plain events (fast/columns.plain_columns) against both."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.oracle.fast.columns import plain_columns
from windtunnel.oracle.model.errors import InvalidStream
from windtunnel.oracle.model.stream import Event, StreamChecker

STEPS = st.lists(
    st.tuples(st.sampled_from([1, 1, 1, 0, 2]), st.none() | st.integers(-3, 6)), min_size=1, max_size=8
)
"""Per event: how its seq follows the previous one (1: in order) and how far its arrival
time moves the wall clock (None: no arrival time)."""


def stream(next_seq: int, wall_ms: int, steps: list[tuple[int, int | None]]) -> list[Event]:
    events, seq, wall = [], next_seq - 1, wall_ms
    for seq_step, at_step in steps:
        seq += seq_step
        at = None if at_step is None else wall + at_step
        wall = wall if at is None else max(wall, at)
        events.append(Event(max(seq, 0), {}, at))
    return events


def one_by_one(next_seq: int, wall_ms: int, events: list[Event]) -> list[int] | None:
    """The wall clock after each event, or None when the checker rejects one."""
    checker = StreamChecker(wall_ms, next_seq)
    walls = []
    try:
        for event in events:
            checker.event(0, event)
            walls.append(checker.wall_ms)
    except InvalidStream:
        return None
    return walls


@settings(max_examples=400, deadline=None)
@given(next_seq=st.integers(0, 3), wall_ms=st.integers(0, 5), steps=STEPS)
def test_the_array_form_takes_only_what_the_item_form_takes(next_seq: int, wall_ms: int, steps: list[tuple[int, int | None]]) -> None:
    events = stream(next_seq, wall_ms, steps)
    expected = one_by_one(next_seq, wall_ms, events)
    checker = StreamChecker(wall_ms, next_seq)
    valid, walls = checker.run(events)
    if valid:
        assert expected is not None
        assert (walls or [wall_ms] * len(events)) == expected
        assert (checker.next_seq, checker.wall_ms) == (next_seq + len(events), expected[-1])
    else:
        assert (checker.next_seq, checker.wall_ms) == (next_seq, wall_ms)  # unchanged
        mixed = {e.at_ms is None for e in events} == {True, False}
        assert expected is None or mixed  # only a mix of arrival times is left to the item form


@settings(max_examples=200, deadline=None)
@given(next_seq=st.integers(0, 3), steps=STEPS)
def test_plain_columns_accept_only_valid_events_without_arrival_times(next_seq: int, steps: list[tuple[int, int | None]]) -> None:
    events = stream(next_seq, 0, steps)
    if plain_columns(lambda: iter(events), next_seq, ()) is not None:
        assert one_by_one(next_seq, 0, events) == [0] * len(events)
    elif all(e.at_ms is None for e in events):
        assert one_by_one(next_seq, 0, events) is None
