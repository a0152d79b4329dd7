"""Trailing windows of the default profile: one window per triggering event over [t - size, t].

Timelines: event times on the axis, `[...]` the trigger's window.
"""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.oracle import Aggregation, InvalidScenario, InvalidSpec, Query, Rules
from windtunnel.oracle.model.results import Result
from windtunnel.oracle.model.spec import TrailingWindows
from windtunnel.oracle.model.stream import numbered
from windtunnel.oracle.scenario import parse_scenario

from ..implementations import RunQuery

COUNT = (Aggregation("n", "count"), Aggregation("seqs", "collect", "i"))


def windows(result: Result) -> list[tuple[int | None, int | None, list[int]]]:
    return [(e.window.start_ms, e.window.end_ms, e.row["seqs"]) for e in result.emissions]


def times(*ts: int, **fields: Any) -> Any:
    return numbered({"ts": t, "i": i, **fields} for i, t in enumerate(ts))


def test_every_event_triggers_its_window_including_both_ends(run_query: RunQuery) -> None:
    #  [-5 ... 0]  [0 ... 5]  [5 ... 10]
    result = run_query(Query(TrailingWindows(5), aggregate=COUNT), times(0, 5, 10))
    assert windows(result) == [(-5, 0, [0]), (0, 5, [0, 1]), (5, 10, [1, 2])]
    assert [(e.reason, e.after_seq, e.partial) for e in result.emissions] == [("close", 0, False), ("close", 1, False), ("close", 2, False)]


def test_left_open_rule_excludes_the_start(run_query: RunQuery) -> None:
    result = run_query(Query(TrailingWindows(5), aggregate=COUNT), times(0, 5), rules=Rules(trailing_ends="left_open"))
    assert windows(result) == [(-5, 0, [0]), (0, 5, [1])]


def test_duplicate_timestamps_include_only_events_up_to_the_trigger_in_stream_order(run_query: RunQuery) -> None:
    result = run_query(Query(TrailingWindows(5), aggregate=COUNT), times(5, 5, 5))
    assert windows(result) == [(0, 5, [0]), (0, 5, [0, 1]), (0, 5, [0, 1, 2])]


def test_an_event_behind_its_keys_clock_is_late(run_query: RunQuery) -> None:
    # Tenzir 6.20 (rule trailing_late: clock, T3): 4, 10, then 6 is behind the clock 10:
    #   [-1 .. 4]  [5 .. 10]   6 x late
    result = run_query(Query(TrailingWindows(5), aggregate=COUNT), times(4, 10, 6))
    assert windows(result) == [(-1, 4, [0]), (5, 10, [1])]
    assert [(d.seq, d.reason) for d in result.drops] == [(2, "late")]


def test_out_of_order_events_see_earlier_events_in_range_but_not_later_ones(run_query: RunQuery) -> None:
    # trailing_late: none: 4 then 10 then 6: the window of 6 is [1, 6] and holds 4 and 6
    # (10 is outside)
    result = run_query(Query(TrailingWindows(5), aggregate=COUNT), times(4, 10, 6), rules=Rules(trailing_late="none"))
    assert windows(result)[2] == (1, 6, [0, 2])


@pytest.mark.parametrize("late", ["clock", "none"])
@pytest.mark.parametrize(
    ("cadence", "expected", "dropped"),
    [
        # from_first (Tenzir 6.20, T3): 0 starts the cadence without firing; 1, 3 wait;
        # 6 >= 0 + 5 fires [4, 6], which misses 0, 1, 3; 7 waits for a trigger that never comes
        ("from_first", [(4, 6, [3])], [0, 1, 2, 4]),
        # since_last: 0 fires; 6 fires [4, 6], which misses 1 and 3; 7 waits
        ("since_last", [(-2, 0, [0]), (4, 6, [3])], [1, 2, 4]),
    ],
)
def test_every_cadence_triggers_only_events_every_apart_and_drops_events_no_window_covers(run_query: RunQuery,
    late: str, cadence: str, expected: list[Any], dropped: list[int]
) -> None:
    # size 2, every 5, events 0 1 3 6 7 (in order: both trailing_late values agree)
    rules = Rules(trailing_cadence=cadence, trailing_late=late)
    result = run_query(Query(TrailingWindows(2, every_ms=5), aggregate=COUNT), times(0, 1, 3, 6, 7), rules=rules)
    assert windows(result) == expected
    assert [(d.seq, d.reason) for d in result.drops] == [(s, "no_window") for s in dropped]


@pytest.mark.parametrize(
    ("cadence", "expected"),
    [("from_first", [(-4, 6, [0, 1, 2, 3])]), ("since_last", [(-10, 0, [0]), (-4, 6, [0, 1, 2, 3])])],
)
def test_every_cadence_delivers_waiting_events_the_next_window_covers(run_query: RunQuery, cadence: str, expected: list[Any]) -> None:
    # size 10, every 5, events 0 1 2 6: the window of 6, [-4, 6], holds every waiting event
    result = run_query(Query(TrailingWindows(10, every_ms=5), aggregate=COUNT), times(0, 1, 2, 6), rules=Rules(trailing_cadence=cadence))
    assert windows(result) == expected
    assert result.drops == []


@pytest.mark.parametrize(
    ("cadence", "expected", "dropped"),
    [
        ("since_last", [(1, 3, [0]), (6, 8, [2])], [1, 3]),
        ("grid", [(1, 3, [0]), (3, 5, [0, 1]), (8, 10, [2, 3])], []),
    ],
)
def test_the_grid_cadence_is_the_alternative_reading_of_every(run_query: RunQuery,
    cadence: str, expected: list[Any], dropped: list[int]
) -> None:
    # size 2, every 5; events 3, 5, 8, 10; buckets of 5: |0 ... 5|5 ... 10|10 ...
    #   since_last: 3 triggers, 5 waits (< 3 + 5), 8 triggers, 10 waits (< 13): 5 and 10 in no window
    #   grid:       3 triggers (bucket 0), 5 (bucket 1), 8 waits (bucket 1), 10 (bucket 2)
    result = run_query(
        Query(TrailingWindows(2, every_ms=5), aggregate=COUNT),
        times(3, 5, 8, 10),
        rules=Rules(trailing_cadence=cadence),
    )
    assert windows(result) == expected
    assert [d.seq for d in result.drops] == dropped


def test_trailing_windows_are_per_group(run_query: RunQuery) -> None:
    events = numbered([{"ts": 0, "k": "a", "i": 0}, {"ts": 1, "k": "b", "i": 1}, {"ts": 2, "k": "a", "i": 2}])
    result = run_query(Query(TrailingWindows(5), group_by=("k",), aggregate=COUNT), events)
    assert [(e.group, e.row["seqs"]) for e in result.emissions] == [("a", [0]), ("b", [1]), ("a", [0, 2])]


def test_pass_through_trailing_windows_emit_their_events_per_trigger(run_query: RunQuery) -> None:
    result = run_query(Query(TrailingWindows(5)), times(0, 1))
    assert [(e.window.end_ms, e.row["i"]) for e in result.emissions] == [(0, 0), (1, 0), (1, 1)]


def test_trailing_scenarios_parse_and_reject_bad_values() -> None:
    scenario = parse_scenario({"window": {"kind": "trailing", "size": "5min", "every": "1min", "on": "t"}, "input": []})
    assert scenario.query.window == TrailingWindows(300_000, "t", 60_000)
    with pytest.raises(InvalidScenario):
        parse_scenario({"window": {"kind": "trailing"}, "input": []})
    with pytest.raises(InvalidSpec):
        TrailingWindows(5, every_ms=0)


# --- Tenzir 6.20: tolerance, trigger and trailing count windows (T4, T5) -----------------------


def _scenario_outputs(run_query: RunQuery, window: dict[str, Any], inputs: list[dict[str, Any]]) -> Result:
    scenario = parse_scenario({"name": "t", "window": window, "input": inputs,
                               "aggregate": {"n": "count()", "seqs": "collect(i)"}})
    return run_query(scenario.query, scenario.items, rules=scenario.rules)


def test_tolerance_puts_a_reorder_buffer_before_the_windows(run_query: RunQuery) -> None:
    # size 3, tolerance 5 (T4): 10 waits (watermark 5); 5 and 5 are not behind it and wait;
    # 4 is behind the watermark 5: late; 16 moves the watermark to 11 and releases 5 5 10,
    # which fire in time order; 16 fires at end of input
    #   [2 .. 5] [2 .. 5] [7 .. 10] [13 .. 16]      4 x
    result = _scenario_outputs(run_query, {"kind": "trailing", "size": 3, "tolerance": 5},
                               [{"ts": t, "i": i} for i, t in enumerate([10, 5, 5, 4, 16])])
    assert windows(result) == [(2, 5, [1]), (2, 5, [1, 2]), (7, 10, [0]), (13, 16, [4])]
    assert [(d.seq, d.reason) for d in result.drops] == [(3, "late")]


def test_a_trigger_fires_only_where_it_holds_and_the_cadence_waits_for_it(run_query: RunQuery) -> None:
    # size 5, every 4, trigger i != 3 (T4): 0 starts the cadence; 6 (i=3) meets it but the
    # trigger refuses and the cadence keeps running; 8 fires [3, 8]; 12 >= 8 + 4 fires
    result = _scenario_outputs(run_query, {"kind": "trailing", "size": 5, "every": 4, "trigger": "i != 3"},
                               [{"ts": t, "i": i} for i, t in enumerate([0, 1, 3, 6, 8, 12])])
    assert windows(result) == [(3, 8, [2, 3, 4]), (7, 12, [4, 5])]
    assert [(d.seq, d.reason) for d in result.drops] == [(0, "no_window"), (1, "no_window")]


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        # every event fires the last 3 events: [0, 1) [0, 2) [0, 3) [1, 4) [2, 5)
        ({"count": 3}, [(0, 1), (0, 2), (0, 3), (1, 4), (2, 5)]),
        # every 2nd event since the previous trigger; i = 3 refuses, so 4 fires, then 6
        ({"count": 3, "every": 2, "trigger": "i != 3"}, [(0, 2), (2, 5)]),
    ],
)
def test_trailing_count_windows_hold_the_last_count_events(run_query: RunQuery, window: dict[str, Any], expected: list[Any]) -> None:
    # T5 (Tenzir 6.20: $window.begin/finish): offsets 0 1 2 3 4, no event time read
    result = _scenario_outputs(run_query, {"kind": "trailing", **window}, [{"i": i} for i in range(5)])
    got = [(e.window.start_offset, e.window.end_offset) for e in result.emissions]
    assert got == expected
    assert all(e.row["n"] == end - start for e, (start, end) in zip(result.emissions, got, strict=True))
    fired = {s for e in result.emissions for s in e.row["seqs"]}
    assert sorted(d.seq for d in result.drops) == sorted(set(range(5)) - fired)


@pytest.mark.parametrize(
    ("window", "field"),
    [({"count": 3, "size": 5}, "window.size"), ({"count": 3, "tolerance": 5}, "window.tolerance"),
     ({"count": 0}, "window.count"), ({"size": 5, "trigger": "i >"}, "window.trigger")],
)
def test_invalid_trailing_options_name_the_field(window: dict[str, Any], field: str) -> None:
    with pytest.raises((InvalidScenario, InvalidSpec), match=field):
        parse_scenario({"name": "t", "window": {"kind": "trailing", **window}, "input": []})


def test_a_tolerance_without_a_clock_is_an_input_error(run_query: RunQuery) -> None:
    with pytest.raises(InvalidSpec, match="trailing_late: clock"):
        run_query(Query(TrailingWindows(5, tolerance_ms=2), aggregate=COUNT), times(0), rules=Rules(trailing_late="none"))
