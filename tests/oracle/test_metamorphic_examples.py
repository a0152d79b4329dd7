"""Behaviour the run-against-run properties cannot see (test_metamorphic.py).

A wrong reading applied consistently (every run late per event, say) survives batch
splits, relabelling and shifts; mutation testing (benchmarks/mutation.py) found these
holes, and each example below pins the default profile's reading on a small timeline.
"""

from __future__ import annotations

from windtunnel.oracle import Advance, Aggregation, Event, FixedWindows, Query, SessionWindows
from windtunnel.oracle.model.results import Drop, Emission
from windtunnel.oracle.profiles import profile_named

from .implementations import RunQuery

IDS = (Aggregation("ids", "collect", "id"),)


def events(*specs: tuple[int | None, str] | tuple[int | None, str, int]) -> list[Event]:
    """Events (ts, key[, at]) numbered 0, 1, ...; each payload's id is its seq."""
    return [Event(i, {"ts": s[0], "k": s[1], "id": i}, s[2] if len(s) > 2 else None)  # type: ignore[misc]
            for i, s in enumerate(specs)]


def emitted(run_query: RunQuery, query: Query, items: list) -> dict[tuple[int | None, object], list[int]]:
    """(window start, group) -> the ids it held: pass-through rows or collected ids."""
    out: dict[tuple[int | None, object], list[int]] = {}
    for o in run_query(query, items):
        if isinstance(o, Emission):
            ids = o.row["ids"] if "ids" in o.row else [o.row["id"]]
            out.setdefault((o.window.start_ms, o.group), []).extend(ids)
    return out


def test_tolerance_keeps_a_window_open_past_its_end(run_query: RunQuery) -> None:
    # size 10, tolerance 5: [0, 10) closes when the clock reaches 15
    #   t:  1    12   4    15   6
    #       [0,10)---------------|close at 15
    #   4 (clock 12) is in time; 6 (clock 15) is late
    for aggregate in (IDS, None):
        query = Query(FixedWindows(10, tolerance_ms=5), aggregate=aggregate)
        result = run_query(query, events((1, "a"), (12, "a"), (4, "a"), (15, "a"), (6, "a")))
        assert emitted(run_query, query, events((1, "a"), (12, "a"), (4, "a"), (15, "a"), (6, "a")))[(0, None)] == [0, 2]
        assert [(d.seq, d.reason) for d in result.drops] == [(4, "late")]


def test_an_out_of_order_event_joins_its_still_open_window(run_query: RunQuery) -> None:
    # size 10: the clock is 18 when 11 arrives, but [10, 20) is still open
    #   t:  10   18   11
    #       [10,20)------- 11 joins it; lateness is judged per window, not per event
    query = Query(FixedWindows(10))
    assert emitted(run_query, query, events((10, "a"), (18, "a"), (11, "a"))) == {(10, None): [0, 1, 2]}


def test_an_overlapping_late_event_goes_to_its_open_windows(run_query: RunQuery) -> None:
    # size 10, every 5: the event at 8 belongs to [0, 10) and [5, 15)
    #   t:  0    12                 8
    #       [0,10)--|closed at 10   [5,15) still open (12 is in it): 8 joins it, no drop
    query = Query(FixedWindows(10, every_ms=5))
    result = run_query(query, events((0, "a"), (12, "a"), (8, "a")))
    assert emitted(run_query, query, events((0, "a"), (12, "a"), (8, "a")))[(5, None)] == [1, 2]
    assert result.drops == []


def test_the_idle_timer_restarts_with_each_delivery(run_query: RunQuery) -> None:
    # idle_timeout 100 (wall clock); deliveries at wall 0, 80, 160 keep [0, 1000) open
    #   wall: 0     80    160   250        300
    #         e0    e1    e2    (150 idle) advance: 260 idle -> closed at 260 or later
    query = Query(FixedWindows(1000, idle_timeout_ms=100), aggregate=IDS)
    items = [*events((1, "a", 0), (2, "a", 80), (3, "a", 160)), Advance(250), Advance(300)]
    out = [o for o in run_query(query, items) if isinstance(o, Emission)]
    assert [(o.reason, o.wall_ms, o.row["ids"]) for o in out] == [("idle_timeout", 300, [0, 1, 2])]


def test_each_key_has_its_own_clock(run_query: RunQuery) -> None:
    # size 10, group_by k: key b's clock at 30 does not close key a's [0, 10)
    #   a:  5                    7 (a's clock is 5: in time)
    #   b:        30
    query = Query(FixedWindows(10), group_by=("k",))
    result = run_query(query, events((5, "a"), (30, "b"), (7, "a")))
    assert emitted(run_query, query, events((5, "a"), (30, "b"), (7, "a")))[(0, "a")] == [0, 2]
    assert result.drops == []


def test_a_null_time_is_dropped_and_moves_no_clock(run_query: RunQuery) -> None:
    # pass-through, size 10, wall clock at 50 when the null arrives: it must not count as
    # time 50 and close [0, 10)
    #   t:   3      null (wall 50)    4 -> still in [0, 10)
    query = Query(FixedWindows(10))
    items = events((3, "a", 0), (None, "a", 50), (4, "a", 50))
    result = run_query(query, items)
    assert emitted(run_query, query, items) == {(0, None): [0, 2]}
    assert result.drops == [Drop(1, "null_time", (), "ts is null or missing")]


def test_a_window_excludes_its_end(run_query: RunQuery) -> None:
    # size 10: an event at exactly 10 is in [10, 20), not in [0, 10)
    query = Query(FixedWindows(10))
    assert emitted(run_query, query, events((0, "a"), (10, "a"))) == {(0, None): [0], (10, None): [1]}


def test_an_event_bridging_two_open_sessions_merges_them(run_query: RunQuery) -> None:
    # flink profile (merging sessions), gap 5, tolerance 20 keeps both sessions open:
    #   t:  1          10         5
    #       [1]        [10]       5 is within 5 of both: one session [1, 10] of 3 events
    query = Query(SessionWindows(5, tolerance_ms=20), group_by=("k",), aggregate=IDS)
    out = run_query(query, events((1, "a"), (10, "a"), (5, "a")), profile="flink",
              rules=profile_named("flink").rules)
    assert [(o.window.start_ms, o.row["ids"]) for o in out if isinstance(o, Emission)] == [
        (1, [0, 1, 2])
    ]


def test_merging_sessions_keep_a_clock_per_key(run_query: RunQuery) -> None:
    # tenzir with session_order: merge (sessions on watermark clocks), gap 5, group_by k:
    #   a:  1                 3   (a's clock is 1: 3 joins a's session [1, 3])
    #   b:        100             (b's clock only)
    rules = profile_named("tenzir").rules.with_overrides({"session_order": "merge"})
    query = Query(SessionWindows(5), group_by=("k",), aggregate=IDS)
    out = run_query(query, events((1, "a"), (100, "b"), (3, "a")), rules=rules)
    assert [(o.group, o.row["ids"]) for o in out if isinstance(o, Emission)] == [
        ("a", [0, 2]), ("b", [1])
    ]
    assert [o for o in out if isinstance(o, Drop)] == []


MERGE = profile_named("tenzir").rules.with_overrides({"session_order": "merge"})
"""Tenzir's rules with merging sessions on watermark clocks (oracle/windows/session.py)."""


def test_an_event_whose_own_session_is_final_exactly_now_is_late(run_query: RunQuery) -> None:
    # gap 5, tolerance 0, merging sessions: a session [t, t] is final once the clock
    # passes t + 5, i.e. at t + 6
    #   t:  1     20 (clock 20)     14 -> its own session is final at 20: late
    query = Query(SessionWindows(5), aggregate=IDS)
    out = run_query(query, events((1, "a"), (20, "a"), (14, "a")), rules=MERGE)
    assert [(d.seq, d.reason) for d in out if isinstance(d, Drop)] == [(2, "late")]


def test_the_clock_never_moves_back(run_query: RunQuery) -> None:
    # gap 5, merging sessions: after 20 the clock stays at 20 through the late 10, so 13
    # (final at 19) is late too
    #   t:  1     20     10 (late)     13 (late: the clock is still 20)
    query = Query(SessionWindows(5), aggregate=IDS)
    out = run_query(query, events((1, "a"), (20, "a"), (10, "a"), (13, "a")), rules=MERGE)
    assert [(d.seq, d.reason) for d in out if isinstance(d, Drop)] == [(2, "late"), (3, "late")]


def test_a_sessions_idle_timer_restarts_with_each_event(run_query: RunQuery) -> None:
    # idle_timeout 100 (wall clock), merging sessions: events at wall 0, 80, 160 keep the
    # session open until wall 260
    #   wall: 0     80    160   250         300
    #         e0    e1    e2    (still open) closed by idle_timeout with all three
    query = Query(SessionWindows(1000, idle_timeout_ms=100), aggregate=IDS)
    items = [*events((1, "a", 0), (2, "a", 80), (3, "a", 160)), Advance(250), Advance(300)]
    out = [o for o in run_query(query, items, rules=MERGE) if isinstance(o, Emission)]
    assert [(o.reason, o.wall_ms, o.row["ids"]) for o in out] == [("idle_timeout", 300, [0, 1, 2])]
