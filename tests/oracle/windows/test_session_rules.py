"""One test per session-window rule of the default (Tenzir) profile, and each rule option.

The default (rule ``session_order: reorder``, Tenzir 6.20) puts a per-key reorder buffer
before one open session (docs/semantics.md S1); the merging model's rules (flink, spark,
timeplus) are tested under ``session_order: merge`` (:data:`MERGE`).

Timelines: event times on the axis, `(...)` sessions, `^` the clock, `x` late.
"""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.oracle import (
    Advance,
    Aggregation,
    Event,
    InvalidScenario,
    InvalidSpec,
    Query,
    Rules,
)
from windtunnel.oracle.model.results import Result
from windtunnel.oracle.model.spec import SessionWindows
from windtunnel.oracle.model.stream import Watermark, numbered
from windtunnel.oracle.scenario import parse_scenario

from ..implementations import RunQuery

COUNT = (Aggregation("n", "count"),)
MERGE = Rules(session_order="merge")


def merge(**rules: str) -> Rules:
    """The merging session model with further rule values."""
    return Rules(session_order="merge", **rules)


def sessions(result: Result) -> list[tuple[int | None, int | None, int]]:
    return [(e.window.start_ms, e.window.end_ms, e.row["n"]) for e in result.emissions]


def query(gap_ms: int, group_by: tuple[str, ...] = (), aggregate: Any = COUNT, **spec: Any) -> Query:
    return Query(SessionWindows(gap_ms, **spec), group_by=group_by, aggregate=aggregate)


def times(*ts: int, **fields: Any) -> tuple[Event, ...]:
    return numbered({"ts": t, **fields} for t in ts)


@pytest.mark.parametrize(("gap_rule", "expected"), [("inclusive", [(0, 5, 2)]), ("exclusive", [(0, 0, 1), (5, 5, 1)])])
def test_session_gap_equality(run_query: RunQuery, gap_rule: str, expected: list[tuple[int, int, int]]) -> None:
    # (0    5)   two events exactly gap=5 apart: one session (inclusive) or two (exclusive)
    assert sessions(run_query(query(5), times(0, 5), rules=Rules(session_gap=gap_rule))) == expected


def test_sessions_report_first_and_last_event_by_default_and_last_plus_gap_as_option(run_query: RunQuery) -> None:
    events = times(3, 7)
    assert sessions(run_query(query(5), events)) == [(3, 7, 2)]
    assert sessions(run_query(query(5), events, rules=Rules(session_ends="gap"))) == [(3, 12, 2)]


@pytest.mark.parametrize(("close_rule", "closed_after"), [("passes", 2), ("reaches", 1)])
def test_session_closes_when_the_watermark_is_strictly_past_last_plus_gap(run_query: RunQuery,
    close_rule: str, closed_after: int
) -> None:
    # gap 5, tolerance 3 (Tenzir 6.20, S1): the watermark is clock - 3.
    #   0 ........ 8  9      event 8: watermark 5 releases 0 into (0); 5 is not past 0 + 5
    #   (0)        ^5 ^6     event 9: watermark 6 > 5 closes (0) after seq 2
    # rule session_close_at: reaches closes at watermark 5 already (after seq 1)
    result = run_query(query(5, tolerance_ms=3), times(0, 8, 9), rules=Rules(session_close_at=close_rule))
    assert sessions(result) == [(0, 0, 1), (8, 9, 2)]
    assert result.emissions[0].after_seq == closed_after
    assert result.drops == []


def test_an_event_behind_the_watermark_is_late_even_when_its_session_would_be_open(run_query: RunQuery) -> None:
    # gap 5, tolerance 3: event 8 moves the watermark to 5 and releases 0; event 1 is
    # behind the watermark: late, though (0) is still open (S1: the buffer decides)
    result = run_query(query(5, tolerance_ms=3), times(0, 8, 1))
    assert sessions(result) == [(0, 0, 1), (8, 8, 1)]
    assert [(d.seq, d.reason) for d in result.drops] == [(2, "late")]


def test_merged_session_is_final_only_when_clock_is_strictly_past_last_plus_gap_plus_tolerance(run_query: RunQuery) -> None:
    # merging model, gap 5, tolerance 3: (0) is final once the clock is past 8. Event 8 is a
    # new session (8 - 0 > 5) and moves the clock to 8 = 0 + 5 + 3, not past: (0) is still
    # open, so the out-of-order event 1 joins it.
    result = run_query(query(5, tolerance_ms=3), times(0, 8, 1), rules=MERGE)
    assert sessions(result) == [(0, 1, 2), (8, 8, 1)]
    assert result.drops == []


def test_session_close_at_reaches_option_closes_at_equality(run_query: RunQuery) -> None:
    # same stream, merging, rule session_close_at: reaches -> (0) closes at clock 8; event 1
    # would join an emitted session: late (rule closed_session: late)
    result = run_query(query(5, tolerance_ms=3), times(0, 8, 1), rules=merge(session_close_at="reaches"))
    assert sessions(result) == [(0, 0, 1), (8, 8, 1)]
    assert [(d.seq, d.reason) for d in result.drops] == [(2, "late")]
    assert result.emissions[0].after_seq == 1


def test_close_emission_comes_right_after_the_event_that_moves_the_clock_past(run_query: RunQuery) -> None:
    # (0 2)        9 -> clock 9 > 2 + 5: the first session is emitted after seq 2
    result = run_query(query(5), times(0, 2, 9))
    first = result.emissions[0]
    assert (first.window.start_ms, first.window.end_ms, first.reason, first.after_seq, first.partial) == (0, 2, "close", 2, False)


@pytest.mark.parametrize("rules", [Rules(), MERGE], ids=["reorder", "merge"])
def test_a_late_event_bridging_two_sessions_merges_them_and_they_are_emitted_once(run_query: RunQuery, rules: Rules) -> None:
    # (0)   (20)   then 10 arrives: 10 - 0 <= 10 and 20 - 10 <= 10 -> one session (0 .. 20)
    # (reorder: all three wait in the buffer, tolerance 30, and leave it in time order)
    result = run_query(query(10, tolerance_ms=30), times(0, 20, 10), rules=rules)
    assert sessions(result) == [(0, 20, 3)]
    assert len(result.emissions) == 1


@pytest.mark.parametrize(("rules", "order"), [(Rules(), ["a", "c", "b"]), (MERGE, ["a", "b", "c"])], ids=["reorder", "merge"])
def test_a_session_aggregates_events_in_release_order(run_query: RunQuery, rules: Rules, order: list[str]) -> None:
    # stream a@0, b@20, c@10: the reorder buffer releases in time order (a c b, Tenzir 6.20);
    # merged sessions aggregate in stream (seq) order (a b c)
    q = query(10, tolerance_ms=30, aggregate=(Aggregation("first", "first", "v"), Aggregation("all", "collect", "v")))
    result = run_query(q, numbered([{"ts": 0, "v": "a"}, {"ts": 20, "v": "b"}, {"ts": 10, "v": "c"}]), rules=rules)
    assert result.emissions[0].row == {"first": "a", "all": order}


@pytest.mark.parametrize(("late_rule", "delivered"), [("own", False), ("merged", True)])
def test_session_late_rule(run_query: RunQuery, late_rule: str, delivered: bool) -> None:
    # gap 5: (14 17 20) open, clock 20. Event 9: its own session (9) is final at clock 15
    # (late under "own"); merged with (14 .. 20) it would be (9 .. 20), final only past 25.
    #     9    14   17   20^
    #     x----(----------)
    result = run_query(query(5), times(14, 17, 20, 9), rules=merge(session_late=late_rule))
    if delivered:
        assert sessions(result) == [(9, 20, 4)]
        assert result.drops == []
    else:
        assert sessions(result) == [(14, 20, 3)]
        assert [(d.seq, d.reason) for d in result.drops] == [(3, "late")]


@pytest.mark.parametrize(("closed_rule", "expected"), [("late", [(0, 0, 1), (17, 17, 1)]), ("new_session", [(0, 0, 1), (4, 4, 1), (17, 17, 1)])])
def test_closed_session_rule(run_query: RunQuery, closed_rule: str, expected: list[tuple[int, int, int]]) -> None:
    # gap 5, tolerance 10: (0) is emitted at clock 17 (past 15). Event 4 is not late on its
    # own (4 + 15 >= 17) but would join the emitted (0): late, or a new session.
    result = run_query(query(5, tolerance_ms=10), times(0, 17, 4), rules=merge(closed_session=closed_rule))
    assert sorted(sessions(result)) == expected
    assert len(result.drops) == (1 if closed_rule == "late" else 0)


def test_max_events_the_event_reaching_the_cap_joins_and_closes_the_session(run_query: RunQuery) -> None:
    result = run_query(query(10, max_events=3), times(0, 1, 2, 3))
    assert sessions(result) == [(0, 2, 3), (3, 3, 1)]
    assert (result.emissions[0].reason, result.emissions[0].after_seq) == ("close", 2)


@pytest.mark.parametrize(
    ("cap_rule", "expected", "late"),
    [
        # reaches: 5 would make the span 5, not < 5: it starts (5); (0) is final when the clock
        # reaches 0 + 5; 6 touches the emitted (0) and is late (S5)
        ("reaches", [(0, 0, 1), (5, 5, 1)], [2]),
        # passes: 5 joins (span 5 <= 5); 6 would make it 6 and starts (6); (0 5) is final once
        # the clock passes 5
        ("passes", [(0, 5, 2), (6, 6, 1)], []),
    ],
)
def test_the_duration_caps_comparison_is_an_option(run_query: RunQuery,
    cap_rule: str, expected: list[Any], late: list[int]
) -> None:
    # merging model, gap 10, max_duration 5, events 0 5 6
    result = run_query(query(10, max_duration_ms=5), times(0, 5, 6), rules=merge(session_cap=cap_rule))
    assert sessions(result) == expected
    assert [d.seq for d in result.drops] == late


def test_max_duration_caps_a_session_measured_from_its_first_event(run_query: RunQuery) -> None:
    # gap 10, max_duration 5: 6 - 0 >= 5 -> new session; (0 3) closes when the clock reaches 5
    result = run_query(query(10, max_duration_ms=5), times(0, 3, 6))
    assert sessions(result) == [(0, 3, 2), (6, 6, 1)]
    assert result.emissions[0].after_seq == 2


def test_each_key_has_its_own_clock(run_query: RunQuery) -> None:
    # key a races ahead to 100; key b's session (0) stays open and takes 3
    result = run_query(query(5, group_by=("k",)), numbered([{"ts": 0, "k": "b"}, {"ts": 100, "k": "a"}, {"ts": 3, "k": "b"}]))
    assert sorted((e.group, e.window.start_ms, e.row["n"]) for e in result.emissions) == [("a", 100, 1), ("b", 0, 2)]


def test_idle_timeout_force_closes_a_session_after_wall_time_without_events(run_query: RunQuery) -> None:
    items = (Event(0, {"ts": 0}, 0), Advance(6_000), Event(1, {"ts": 1}, 6_000))
    # wall 0: 0 -> (0); wall 6000 >= 0 + 5000: (0) force-closed; event 1 starts a new session
    # (Tenzir 6.20, measured: `delay` paces a@0 and b@1 apart, idle_timeout gives n=1 twice)
    result = run_query(query(10, idle_timeout_ms=5_000), items)
    first = result.emissions[0]
    assert (first.window.start_ms, first.reason, first.partial, first.wall_ms) == (0, "idle_timeout", True, 6_000)
    assert sessions(result) == [(0, 0, 1), (1, 1, 1)]
    assert result.drops == []
    # merging model, rule idle_closed_window: late -> event 1 would join the force-closed session
    merged = run_query(query(10, idle_timeout_ms=5_000), items, rules=MERGE)
    assert [(d.seq, d.reason) for d in merged.drops] == [(1, "late")]
    reopened = run_query(query(10, idle_timeout_ms=5_000), items, rules=merge(idle_closed_window="reopen"))
    assert sessions(reopened) == [(0, 0, 1), (1, 1, 1)]


@pytest.mark.parametrize(
    "rules",
    [Rules(session_late="merged"), Rules(closed_session="new_session"), Rules(session_cap="passes"),
     Rules(idle_closed_window="reopen")],
)
def test_merging_rules_under_the_reorder_buffer_are_input_errors_naming_the_fix(run_query: RunQuery, rules: Rules) -> None:
    with pytest.raises(InvalidSpec, match="session_order: merge"):
        run_query(query(5), times(0), rules=rules)


def test_the_reorder_buffer_takes_an_injected_watermark(run_query: RunQuery) -> None:
    # gap 5, tolerance 2: 1 waits in the buffer (watermark -1); {watermark: 3} releases it,
    # {watermark: 7} is past 1 + 5 and closes (1); event 4 is behind the watermark: late
    items = (Event(0, {"ts": 1}, 0), Watermark(3), Watermark(7), Event(1, {"ts": 4}, 0))
    result = run_query(query(5, tolerance_ms=2), items)
    assert sessions(result) == [(1, 1, 1)]
    assert (result.emissions[0].reason, result.emissions[0].after_seq) == ("close", 0)
    assert [(d.seq, d.reason) for d in result.drops] == [(1, "late")]


@pytest.mark.parametrize(("end_rule", "expected"), [("flush", [(0, 1, 2)]), ("discard", [])])
def test_end_of_input(run_query: RunQuery, end_rule: str, expected: list[tuple[int, int, int]]) -> None:
    result = run_query(query(5), times(0, 1), rules=Rules(end_of_input=end_rule))
    assert sessions(result) == expected
    assert all(e.reason == "end_of_input" and e.partial for e in result.emissions)


def test_pass_through_sessions_emit_their_events_when_the_session_is_emitted(run_query: RunQuery) -> None:
    result = run_query(query(5, aggregate=None), times(0, 2, 20))
    assert [(e.window.start_ms, e.window.end_ms, e.row["ts"], e.reason) for e in result.emissions] == [
        (0, 2, 0, "close"),
        (0, 2, 2, "close"),
        (20, 20, 20, "end_of_input"),
    ]


def test_null_times_are_dropped_and_do_not_move_the_clock(run_query: RunQuery) -> None:
    result = run_query(query(5), numbered([{"ts": 0}, {"ts": None}, {"ts": 3}]))
    assert sessions(result) == [(0, 3, 2)]
    assert [(d.seq, d.reason) for d in result.drops] == [(1, "null_time")]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"gap_ms": 0}, "window.gap"), ({"gap_ms": 5, "max_events": 0}, "window.max_events"), ({"gap_ms": 5, "max_duration_ms": -1}, "window.max_duration"), ({"gap_ms": 5, "tolerance_ms": -1}, "window.tolerance")],
)
def test_invalid_session_specs_name_the_field(kwargs: dict[str, int], field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        SessionWindows(**kwargs)
    assert error.value.field == field


def test_session_scenarios_parse_every_option() -> None:
    scenario = parse_scenario(
        {"window": {"kind": "session", "gap": "30s", "max_duration": "5min", "max_events": 100, "tolerance": "1s", "idle_timeout": "10s", "on": "ts"}, "input": []}
    )
    assert scenario.query.window == SessionWindows(30_000, "ts", 300_000, 100, 1_000, 10_000)
    with pytest.raises(InvalidScenario) as error:
        parse_scenario({"window": {"kind": "session"}, "input": []})
    assert error.value.field == "window.gap"
