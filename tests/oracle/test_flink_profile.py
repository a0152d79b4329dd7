"""The ``flink`` profile: Flink's event-time windows as engines.md and the article describe them.

The watermark is max event time - tolerance, per stream, moving per event; a window
fires when it reaches end - 1 ms; lateness is decided after session merging; a fired
and cleaned session is not revived.
"""

from __future__ import annotations

from typing import Any

from windtunnel.oracle import Aggregation, FixedWindows, Query, run
from windtunnel.oracle.model.results import Result
from windtunnel.oracle.model.spec import SessionWindows
from windtunnel.oracle.model.stream import numbered
from windtunnel.oracle.profiles import profile_named

FLINK = profile_named("flink").rules
COUNT = (Aggregation("n", "count"),)


def flink(query: Query, events: Any) -> Result:
    return run(query, events, rules=FLINK, profile="flink")


def times(*ts: int, **fields: Any) -> Any:
    return numbered({"ts": t, **fields} for t in ts)


def test_a_window_fires_when_the_watermark_reaches_end_minus_1ms() -> None:
    #  0        9 10
    #  |a       b^|    the watermark at 9 = maxTimestamp of [0,10): fires after b
    result = flink(Query(FixedWindows(10), aggregate=COUNT), times(1, 9))
    assert (result.emissions[0].reason, result.emissions[0].after_seq) == ("close", 1)
    tenzir = run(Query(FixedWindows(10), aggregate=COUNT), times(1, 9))
    assert tenzir.emissions[0].reason == "end_of_input"


def test_an_event_at_the_window_max_timestamp_after_firing_is_late() -> None:
    result = flink(Query(FixedWindows(10), aggregate=COUNT), times(9, 5))
    assert [(d.seq, d.reason) for d in result.drops] == [(1, "late")]


def test_the_watermark_is_shared_by_all_keys() -> None:
    events = numbered([{"ts": 100, "k": "a"}, {"ts": 5, "k": "b"}])
    result = flink(Query(FixedWindows(10), group_by=("k",), aggregate=COUNT), events)
    assert [(d.seq, d.reason) for d in result.drops] == [(1, "late")]


def test_late_sliding_elements_go_to_their_still_open_windows() -> None:
    # size 10 every 5; watermark 12: [0,10) fired (max ts 9), [5,15) open (max ts 14)
    result = flink(Query(FixedWindows(10, every_ms=5), aggregate=COUNT), times(12, 8))
    assert result.drops == []
    counts = {e.window.start_ms: e.row["n"] for e in result.emissions}
    assert counts == {5: 2, 10: 1}


def test_lateness_is_decided_after_session_merging() -> None:
    # gap 5: (14 17 20), watermark 20. 9 alone would be [9, 14), max ts 13 <= 20: late;
    # merged it is [9, 25), max ts 24 > 20: kept (the default profile drops it)
    query = Query(SessionWindows(5), aggregate=COUNT)
    result = flink(query, times(14, 17, 20, 9))
    assert [(e.window.start_ms, e.window.end_ms, e.row["n"]) for e in result.emissions] == [(9, 25, 4)]
    assert result.drops == []
    assert len(run(query, times(14, 17, 20, 9)).drops) == 1


def test_a_cleaned_session_is_not_revived() -> None:
    # tolerance 10: watermark 17 - 10 = 7 fires [0, 5) (max ts 4). 4 alone is [4, 9),
    # max ts 8 > 7: on time, and a new session (the default profile drops it as late)
    query = Query(SessionWindows(5, tolerance_ms=10), aggregate=COUNT)
    result = flink(query, times(0, 17, 4))
    assert sorted((e.window.start_ms, e.window.end_ms, e.row["n"]) for e in result.emissions) == [(0, 5, 1), (4, 9, 1), (17, 22, 1)]
    assert run(query, times(0, 17, 4)).drops[0].reason == "late"


def test_session_gap_is_inclusive_like_time_window_intersects() -> None:
    result = flink(Query(SessionWindows(5), aggregate=COUNT), times(0, 5))
    assert [(e.window.start_ms, e.window.end_ms) for e in result.emissions] == [(0, 10)]


def test_end_of_input_fires_every_window() -> None:
    result = flink(Query(FixedWindows(10), aggregate=COUNT), times(1, 15))
    assert [(e.window.start_ms, e.reason) for e in result.emissions] == [(0, "close"), (10, "end_of_input")]


def test_a_hop_larger_than_the_size_gives_gapped_windows_and_events_between_are_reported() -> None:
    from windtunnel.oracle.engine import replay
    from windtunnel.oracle.scenario import parse_scenario

    scenario = parse_scenario(
        {"profile": "flink", "window": {"kind": "fixed", "size": 5, "every": 10}, "aggregate": {"n": "count()"}, "input": [{"ts": 1}, {"ts": 7}, {"ts": 12}]}
    )
    result = replay(scenario)
    assert [(e.window.start_ms, e.row["n"]) for e in result.emissions] == [(0, 1), (10, 1)]
    assert [(d.seq, d.reason) for d in result.drops] == [(1, "no_window")]
