"""How a fast path reads its stream (oracle/fast/stream.py): runs of events checked whole,
advances taken, and the stream from the first item not taken left for the reference."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.oracle.fast.stream import Cursor, Run, group_values
from windtunnel.oracle.model.results import Output
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item, Watermark


def read(items: list[Item], *, decline: int | None = None, **options: Any) -> tuple[list[tuple[Any, ...]], Cursor]:
    """The runs a cursor gives (first seq, size, columns, walls, wall) and the cursor after;
    ``decline``: the first seq of a run the fast path declines."""
    runs: list[tuple[Any, ...]] = []

    def take(run: Run) -> list[Output] | None:
        if run.first_seq == decline:
            return None
        runs.append((run.first_seq, run.size, run.columns, run.walls, run.wall_ms))
        return []

    cursor = Cursor(items, 100, **options)
    for outputs in cursor.parts(take):
        assert list(outputs) == []
    return runs, cursor


def events(*seqs: int, at: list[int | None] | None = None) -> list[Event]:
    return [Event(s, {"k": s % 2}, None if at is None else at[i]) for i, s in enumerate(seqs)]


def test_a_plain_chunk_is_one_run_and_the_stream_is_all_taken() -> None:
    runs, cursor = read(list(events(0, 1, 2)), fields=("k",))
    assert runs == [(0, 3, [[0, 1, 0]], None, 100)]
    assert (cursor.index, cursor.next_seq, cursor.wall_ms, list(cursor.rest())) == (3, 3, 100, [])


def test_advances_move_the_wall_and_arrival_times_come_as_walls() -> None:
    """Events and batches of events between other items make one run."""
    items: list[Item] = [*events(0, 1), Advance(150), *events(2, 3, at=[160, 170]), Batch(tuple(events(4, at=[170])))]
    runs, cursor = read(items)
    assert runs == [(0, 2, [], None, 100), (2, 3, [], [160, 170, 170], 150)]
    assert (cursor.index, cursor.next_seq, cursor.wall_ms) == (6, 5, 170)  # 6 items, 5 events


@pytest.mark.parametrize(
    ("items", "taken", "stop"),
    [
        ([*events(0, 1), Watermark(5), *events(2)], 2, 2),  # a watermark
        ([*events(0, 1), End()], 2, 2),  # end of input
        ([*events(0, 1), Advance(50), *events(2)], 2, 2),  # an advance back in time
        ([*events(0, 2)], 0, 0),  # a seq skipped: the run is not taken at all
        ([*events(0, 1, at=[200, 150])], 0, 0),  # arrival times back in a run
        ([*events(0), Batch(()), Watermark(1)], 1, 2),  # an empty batch joins the run
        ([Batch(()), Watermark(1)], 0, 0),  # a run of no events
        ([*events(0), "not an item"], 1, 1),
    ],
)
def test_the_rest_starts_at_the_first_item_not_taken(items: list[Any], taken: int, stop: int) -> None:
    _, cursor = read(items)
    assert cursor.index == stop and cursor.next_seq == taken
    assert list(cursor.rest()) == items[stop:]


def test_a_short_run_or_a_declined_run_is_left_for_the_reference() -> None:
    items: list[Item] = [*events(0, 1, 2), Advance(120), *events(3)]
    runs, cursor = read(items, min_run=2)
    assert [r[:2] for r in runs] == [(0, 3)] and list(cursor.rest()) == items[4:]
    runs, cursor = read(items, decline=0)
    assert runs == [] and list(cursor.rest()) == items


@pytest.mark.parametrize("chunk_size", [1, 2, 3])
def test_the_rest_spans_later_chunks_of_an_iterator(chunk_size: int) -> None:
    items: list[Item] = [*events(0, 1, 2), Watermark(1), *events(3, 4), End()]
    _, cursor = read(iter(items), chunk_size=chunk_size)  # type: ignore[arg-type]
    assert list(cursor.rest()) == items[3:]


@pytest.mark.parametrize(("value", "fields", "values"), [(None, 0, ()), ("a", 1, ("a",)), ([1, [2]], 2, (1, [2]))])
def test_group_values_undo_the_drivers_group_value(value: Any, fields: int, values: tuple[Any, ...]) -> None:
    assert group_values(value, fields) == values


@pytest.mark.parametrize(
    ("items", "only_end"),
    [
        ([*events(0)], True),
        ([*events(0), End()], True),
        ([*events(0), End(), *events(1)], False),
        ([*events(0), Watermark(1)], False),
        ([*events(0), End(), End()], False),
    ],
)
def test_only_end_left_says_whether_the_rest_is_the_end_of_input(items: list[Item], only_end: bool) -> None:
    _, cursor = read(iter(items))  # type: ignore[arg-type]
    left = list(items[1:])
    assert cursor.only_end_left() is only_end
    if not only_end:
        assert list(cursor.rest()) == left  # kept for the reference
