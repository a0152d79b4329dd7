"""One test per fixed-window rule of the default (Tenzir) profile.

Timelines: event times on the axis, `|` window bounds, `x` late, `^` the clock.
"""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.oracle import (
    Advance,
    Aggregation,
    Batch,
    Event,
    FixedWindows,
    InvalidSpec,
    Query,
    Rules,
)
from windtunnel.oracle.model.results import Drop, Emission, WindowRef
from windtunnel.oracle.model.stream import numbered

from ..implementations import RunQuery

COUNT = (Aggregation("n", "count"),)


def count_query(size_ms: int, every_ms: int | None = None, **window: Any) -> Query:
    group_by = window.pop("group_by", ())
    return Query(FixedWindows(size_ms, every_ms=every_ms, **window), group_by=group_by, aggregate=COUNT)


def windows_counts(result: Any) -> list[tuple[int | None, int | None, int]]:
    return [(e.window.start_ms, e.window.end_ms, e.row["n"]) for e in result.emissions]


def times(*ts: int | None, **fields: Any) -> tuple[Event, ...]:
    return numbered({"ts": t, **fields} for t in ts)


# --- windows: [start, end), aligned to the epoch, starting on multiples of every ------------


def test_tumbling_windows_are_half_open_and_epoch_aligned(run_query: RunQuery) -> None:
    #  0        10        20
    #  |a  b    |c        |
    #  an event at 10 belongs to [10, 20), not [0, 10)
    result = run_query(count_query(10), times(1, 9, 10))
    assert windows_counts(result) == [(0, 10, 2), (10, 20, 1)]


def test_negative_times_align_to_the_epoch(run_query: RunQuery) -> None:
    # -20      -10        0
    #  |    a    |     b  |
    result = run_query(count_query(10), times(-15, -1))
    assert windows_counts(result) == [(-20, -10, 1), (-10, 0, 1)]


@pytest.mark.parametrize(("size", "every", "t", "starts"), [(10, 5, 7, [0, 5]), (10, 2, 3, [-6, -4, -2, 0, 2]), (9, 3, 9, [3, 6, 9])])
def test_hopping_event_lands_in_every_window_containing_it(run_query: RunQuery, size: int, every: int, t: int, starts: list[int]) -> None:
    result = run_query(count_query(size, every), times(t))
    assert [e.window.start_ms for e in result.emissions] == starts
    assert all(e.window.end_ms == e.window.start_ms + size for e in result.emissions)  # type: ignore[operator]


def test_every_defaults_to_size() -> None:
    assert FixedWindows(10).hop_ms == 10


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"size_ms": 0}, "window.size"),
        ({"size_ms": -5}, "window.size"),
        ({"size_ms": 10, "every_ms": 0}, "window.every"),
        ({"size_ms": 10, "every_ms": 11}, "window.every"),
        ({"size_ms": 10, "tolerance_ms": -1}, "window.tolerance"),
        ({"size_ms": 10, "idle_timeout_ms": 0}, "window.idle_timeout"),
    ],
)
def test_invalid_fixed_specs_are_rejected_naming_the_field(kwargs: dict[str, int], field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        FixedWindows(**kwargs)
    assert error.value.field == field
    assert str(error.value).startswith(f"{field}=")


# --- the clock and closing ----------------------------------------------------------------


def test_window_closes_when_clock_reaches_end(run_query: RunQuery) -> None:
    #  0        10
    #  |a       |b      -> b at 10 moves the clock to 10 = end: [0,10) closes right after b
    result = run_query(count_query(10), times(1, 10))
    first = result.emissions[0]
    assert (first.window.start_ms, first.reason, first.after_seq) == (0, "close", 1)


def test_tolerance_delays_closing_and_admits_out_of_order_events(run_query: RunQuery) -> None:
    #  0        10   12
    #  |a   c   |b  d^   tolerance 2: [0,10) closes at clock 12; c (ts 5, after b) is on time
    result = run_query(count_query(10, tolerance_ms=2), times(1, 10, 5, 12))
    assert result.emissions[0].window.start_ms == 0
    assert result.emissions[0].row["n"] == 2
    assert result.emissions[0].after_seq == 3  # closed by the event at 12
    assert result.drops == []


def test_clock_never_moves_back(run_query: RunQuery) -> None:
    #  a(15) moves the clock to 15; b(3) does not move it back, so [10,20) stays open
    #  until c(20): with a clock that could move back, b would reopen nothing but
    #  [10,20) would wrongly wait for 23.
    result = run_query(count_query(10, tolerance_ms=3), times(15, 3, 23))
    assert [(e.window.start_ms, e.after_seq) for e in result.emissions if e.reason == "close"] == [(10, 2)]


@pytest.mark.parametrize(("close_at", "closes_at_seq"), [("reaches", 1), ("passes", 2)])
def test_close_at_rule_option(run_query: RunQuery, close_at: str, closes_at_seq: int) -> None:
    result = run_query(count_query(10), times(1, 10, 11), rules=Rules(close_at=close_at))
    assert result.emissions[0].after_seq == closes_at_seq


# --- late events ---------------------------------------------------------------------------


def test_late_event_is_dropped_with_reason_and_window(run_query: RunQuery) -> None:
    #  0        10        20
    #  |a      x|b        |   x = 5 arrives after b moved the clock to 10: [0,10) closed
    result = run_query(count_query(10), times(1, 10, 5))
    assert result.drops == [
        Drop(2, "late", (WindowRef(0, 10),), result.drops[0].message),
    ]
    assert "late" in result.drops[0].message and "10" in result.drops[0].message
    assert windows_counts(result) == [(0, 10, 1), (10, 20, 1)]


def test_hopping_late_event_goes_to_still_open_windows_and_is_not_dropped(run_query: RunQuery) -> None:
    #  size 10, every 5; clock at 11 after b: [0,10) closed, [5,15) open
    #  x = 7 targets [0,10) (closed) and [5,15) (open): delivered to [5,15) only
    result = run_query(count_query(10, 5), times(1, 11, 7))
    assert result.drops == []
    counts = {e.window.start_ms: e.row["n"] for e in result.emissions}
    assert counts == {-5: 1, 0: 1, 5: 2, 10: 1}


def test_hopping_event_is_dropped_only_when_all_targets_closed(run_query: RunQuery) -> None:
    result = run_query(count_query(10, 5), times(1, 20, 7))
    assert [(d.seq, [w.start_ms for w in d.windows]) for d in result.drops] == [(2, [0, 5])]


def test_no_empty_windows_between_sparse_events(run_query: RunQuery) -> None:
    result = run_query(count_query(10), times(1, 95))
    assert windows_counts(result) == [(0, 10, 1), (90, 100, 1)]


# --- unusable times ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "reason"),
    [(None, "null_time"), ("yesterday", "not_a_time"), (True, "not_a_time"), ("2026-01-01T00:00:00", "not_a_time"), ([1], "not_a_time")],
)
def test_unusable_time_is_dropped_and_does_not_move_the_clock(run_query: RunQuery, value: Any, reason: str) -> None:
    events = numbered([{"ts": 1}, {"ts": value}, {"ts": 5}])
    result = run_query(count_query(10), events)
    assert [(d.seq, d.reason) for d in result.drops] == [(1, reason)]
    assert windows_counts(result) == [(0, 10, 2)]


def test_missing_on_field_is_null_time(run_query: RunQuery) -> None:
    result = run_query(count_query(10), numbered([{"other": 1}]))
    assert [(d.seq, d.reason) for d in result.drops] == [(0, "null_time")]


def test_iso_timestamps_with_zone_are_event_times(run_query: RunQuery) -> None:
    events = numbered([{"ts": "1970-01-01T00:00:00.005Z"}, {"ts": "1970-01-01T01:00:00.007+01:00"}])
    result = run_query(count_query(10), events)
    assert windows_counts(result) == [(0, 10, 2)]


def test_on_now_uses_the_arrival_wall_clock(run_query: RunQuery) -> None:
    #  wall: a arrives at 3, b at 12: windows by arrival, the payload's ts is ignored
    events = numbered([{"ts": 999}, {"ts": 0}], at_ms=[3, 12])
    result = run_query(count_query(10, on="now()"), events)
    assert windows_counts(result) == [(0, 10, 1), (10, 20, 1)]


# --- idle_timeout ---------------------------------------------------------------------------


def idle_query(**window: Any) -> Query:
    return count_query(10, idle_timeout_ms=5, **window)


def test_idle_timeout_closes_a_window_when_the_wall_clock_moves_on(run_query: RunQuery) -> None:
    #  wall:  0 a(ts 1)      4        5
    #                        ^ not yet ^ advance to 5 = last event + idle_timeout: closed
    items = [Event(0, {"ts": 1}, 0), Advance(4), Advance(5)]
    result = run_query(idle_query(), items)
    (emission,) = result.emissions
    assert (emission.reason, emission.wall_ms, emission.partial, emission.after_seq) == ("idle_timeout", 5, True, 0)


def test_idle_timer_counts_from_the_last_event_the_window_received(run_query: RunQuery) -> None:
    items = [Event(0, {"ts": 1}, 0), Event(1, {"ts": 2}, 4), Advance(8), Advance(9)]
    result = run_query(idle_query(), items)
    assert [(e.reason, e.wall_ms) for e in result.emissions] == [("idle_timeout", 9)]


def test_idle_timeout_is_checked_when_an_event_of_another_key_arrives(run_query: RunQuery) -> None:
    items = [Event(0, {"ts": 1, "k": "a"}, 0), Event(1, {"ts": 1, "k": "b"}, 7)]
    result = run_query(idle_query(group_by=("k",)), items)
    assert [(e.group, e.reason, e.after_seq) for e in result.emissions] == [
        ("a", "idle_timeout", 0),
        ("b", "end_of_input", 1),
    ]


@pytest.mark.parametrize(("option", "expected"), [("late", ["late"]), ("reopen", [])])
def test_event_for_an_idle_closed_window(run_query: RunQuery, option: str, expected: list[str]) -> None:
    items = [Event(0, {"ts": 1}, 0), Event(1, {"ts": 2}, 10)]
    result = run_query(idle_query(), items, rules=Rules(idle_closed_window=option))
    assert [d.reason for d in result.drops] == expected
    if option == "reopen":
        assert [(e.window.start_ms, e.reason) for e in result.emissions] == [(0, "idle_timeout"), (0, "end_of_input")]


@pytest.mark.parametrize(("option", "reasons"), [("delivered", ["idle_timeout"]), ("any_event", ["end_of_input"])])
def test_dropped_events_reset_the_idle_timer_only_with_any_event(run_query: RunQuery, option: str, reasons: list[str]) -> None:
    # a(ts 1) at wall 0; a null-time event at wall 4; wall moves to 6
    items = [Event(0, {"ts": 1}, 0), Event(1, {"ts": None}, 4), Advance(6)]
    result = run_query(idle_query(), items, rules=Rules(idle_timer_reset=option))
    assert [e.reason for e in result.emissions] == reasons


# --- end of input, groups, pass-through, batches ----------------------------------------------


def test_end_of_input_closes_every_open_window(run_query: RunQuery) -> None:
    result = run_query(count_query(10, 5), times(1, 3))
    assert [(e.window.start_ms, e.reason, e.partial) for e in result.emissions] == [
        (-5, "end_of_input", True),
        (0, "end_of_input", True),
    ]


def test_end_of_input_discard_option(run_query: RunQuery) -> None:
    result = run_query(count_query(10), times(1), rules=Rules(end_of_input="discard"))
    assert result.emissions == []


def test_each_key_has_its_own_clock(run_query: RunQuery) -> None:
    #  key a: 1 ........ 30        key b: 2 ... 5
    #  a's clock at 30 does not close b's [0,10): b's 5 (after a's 30) is on time
    events = numbered([{"ts": 1, "k": "a"}, {"ts": 2, "k": "b"}, {"ts": 30, "k": "a"}, {"ts": 5, "k": "b"}])
    result = run_query(count_query(10, group_by=("k",)), events)
    assert result.drops == []
    assert [(e.group, e.window.start_ms, e.row["n"], e.reason) for e in result.emissions] == [
        ("a", 0, 1, "close"),
        ("b", 0, 2, "end_of_input"),
        ("a", 30, 1, "end_of_input"),
    ]


def test_stream_clock_scope_option_shares_one_clock(run_query: RunQuery) -> None:
    events = numbered([{"ts": 1, "k": "a"}, {"ts": 2, "k": "b"}, {"ts": 30, "k": "a"}, {"ts": 5, "k": "b"}])
    result = run_query(count_query(10, group_by=("k",)), events, rules=Rules(clock_scope="stream"))
    assert [(d.seq, d.reason) for d in result.drops] == [(3, "late")]


def test_several_group_fields_give_a_list_group(run_query: RunQuery) -> None:
    events = numbered([{"ts": 1, "user": "ann", "ip": "10.0.0.1"}])
    result = run_query(count_query(10, group_by=("user", "ip")), events)
    assert result.emissions[0].group == ["ann", "10.0.0.1"]


def test_pass_through_emits_each_delivered_event_at_once_per_window(run_query: RunQuery) -> None:
    query = Query(FixedWindows(10, every_ms=5))
    result = run_query(query, numbered([{"ts": 7, "x": 1}]))
    assert [(e.window.start_ms, e.row, e.reason, e.after_seq) for e in result.emissions] == [
        (0, {"ts": 7, "x": 1}, "event", 0),
        (5, {"ts": 7, "x": 1}, "event", 0),
    ]


def test_batching_does_not_change_the_result(run_query: RunQuery) -> None:
    events = times(1, 12, 5, 3, 25, 11)
    one_by_one = run_query(count_query(10, tolerance_ms=2), events)
    batched = run_query(count_query(10, tolerance_ms=2), [Batch(events[:3]), Batch(events[3:])])
    assert one_by_one == batched


@pytest.mark.parametrize(("order", "starts"), [("window_time", [-5, 0, 5, 10]), ("opened", [5, 10, -5, 0])])
def test_order_of_windows_closed_by_one_event(run_query: RunQuery, order: str, starts: list[int]) -> None:
    # size 10, every 5, tolerance 20:
    #   12 opens [5,15) and [10,20); then 3 opens [-5,5) and [0,10);
    #   40 moves the clock past all four close points at once.
    result = run_query(count_query(10, 5, tolerance_ms=20), times(12, 3, 40), rules=Rules(close_order=order))
    closed = [e.window.start_ms for e in result.emissions if e.reason == "close"]
    assert closed == starts


def test_emission_carries_after_seq_and_wall_clock(run_query: RunQuery) -> None:
    items = [Event(0, {"ts": 1}, 100), Event(1, {"ts": 10}, 250)]
    result = run_query(count_query(10), items)
    assert isinstance(result.outputs[0], Emission)
    assert (result.outputs[0].after_seq, result.outputs[0].wall_ms) == (1, 250)
