"""The ``flink`` profile: Flink's DataStream event-time windows, held to the real engine.

Every expectation here was also run on Flink 2.3 (``windtunnel check --target flink``).
The watermark is ``forBoundedOutOfOrderness(tolerance)``: max event time - tolerance - 1 ms,
per stream, after every event; a window fires when it reaches ``end - 1 ms``; lateness is
decided after session merging; ``allowed_lateness`` keeps a fired window for late firings.
"""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.oracle import Aggregation, FixedWindows, Query, run
from windtunnel.oracle.engine import replay
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.results import Result
from windtunnel.oracle.model.spec import SessionWindows
from windtunnel.oracle.model.stream import Watermark, numbered
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.scenario import parse_scenario

FLINK = profile_named("flink").rules
COUNT = (Aggregation("n", "count"),)


def flink(query: Query, events: Any) -> Result:
    return run(query, events, rules=FLINK, profile="flink")


def times(*ts: int, **fields: Any) -> Any:
    return numbered({"ts": t, **fields} for t in ts)


def fired(result: Result) -> list[tuple[int, int | None, int, str]]:
    return [(e.window.start_ms, e.window.end_ms, e.row["n"], e.reason) for e in result.emissions]


def test_the_watermark_is_max_minus_tolerance_minus_1ms() -> None:
    #  0        9 10      tolerance 0: the watermark after 9 is 8, after 10 it is 9 =
    #  |a       b |c      maxTimestamp of [0, 10): c fires it
    assert fired(flink(Query(FixedWindows(10), aggregate=COUNT), times(1, 9)))[0][3] == "end_of_input"
    assert fired(flink(Query(FixedWindows(10), aggregate=COUNT), times(1, 10)))[0] == (0, 10, 1, "close")


def test_the_tolerance_is_the_out_of_orderness_bound() -> None:
    # tolerance 2: 12 gives the watermark 9 = maxTimestamp of [0, 10): it fires; 9 is late
    result = flink(Query(FixedWindows(10, tolerance_ms=2), aggregate=COUNT), times(1, 11, 12, 9))
    assert fired(result)[0] == (0, 10, 1, "close")
    assert [(d.seq, d.reason) for d in result.drops] == [(3, "late")]


def test_an_injected_watermark_is_the_watermark_itself() -> None:
    # {watermark: 9} fires [0, 10) (no tolerance is subtracted from a watermark item)
    items = [*times(1), Watermark(9)]
    assert fired(flink(Query(FixedWindows(10, tolerance_ms=5), aggregate=COUNT), items))[0][3] == "close"


def test_the_watermark_is_shared_by_all_keys() -> None:
    events = numbered([{"ts": 100, "k": "a"}, {"ts": 5, "k": "b"}])
    result = flink(Query(FixedWindows(10), group_by=("k",), aggregate=COUNT), events)
    assert [(d.seq, d.reason) for d in result.drops] == [(1, "late")]


def test_late_sliding_elements_go_to_their_still_open_windows() -> None:
    # size 10 every 5; 12 gives the watermark 11: [0,10) fired, [5,15) open
    result = flink(Query(FixedWindows(10, every_ms=5), aggregate=COUNT), times(12, 8))
    assert result.drops == []
    assert {e.window.start_ms: e.row["n"] for e in result.emissions} == {5: 2, 10: 1}


def test_an_event_between_gapped_windows_moves_the_watermark() -> None:
    #  [0,5)    gap   [10,15)     every 10 > size 5: 17 is in no window, but its time
    #  a              b   |  c    moves the watermark to 16 and fires [10, 15)
    scenario = parse_scenario({
        "profile": "flink", "window": {"kind": "fixed", "size": 5, "every": 10},
        "aggregate": {"n": "count()"}, "input": [{"ts": 1}, {"ts": 12}, {"ts": 17}],
    })
    result = replay(scenario)
    assert fired(result) == [(0, 5, 1, "close"), (10, 15, 1, "close")]
    (drop,) = result.drops
    assert drop.reason == "no_window"
    assert "between the windows [10, 15) and [20, 25)" in drop.message
    assert "epoch_from_zero" not in drop.message


def test_an_event_in_no_window_behind_the_watermark_is_late() -> None:
    # Flink sends an element no window took to the late side output when it is also late
    scenario = parse_scenario({
        "profile": "flink", "window": {"kind": "fixed", "size": 5, "every": 10},
        "aggregate": {"n": "count()"}, "input": [{"ts": 30}, {"ts": 7}],
    })
    assert [(d.seq, d.reason) for d in replay(scenario).drops] == [(1, "late")]


def test_allowed_lateness_gives_accumulating_late_firings_then_drops() -> None:
    #  [0,10) fires at 10; 5 comes within lateness 3: the window fires again with all its
    #  events; after 13 (watermark 12 >= 9 + 3) it is cleaned up and 6 is late
    query = Query(FixedWindows(10, allowed_lateness_ms=3), aggregate=COUNT)
    result = flink(query, times(1, 10, 5, 13, 6))
    assert fired(result) == [(0, 10, 1, "close"), (0, 10, 2, "late_firing"), (10, 20, 2, "end_of_input")]
    assert [(d.seq, d.reason) for d in result.drops] == [(4, "late")]


def test_a_window_first_reached_after_its_end_within_lateness_fires_at_once() -> None:
    # lateness 6: 15 gives the watermark 14 (cleanup of [0,10) at 9 + 6 = 15); [0,10) gets
    # its first event 3 then, and fires at once
    query = Query(FixedWindows(10, allowed_lateness_ms=6), aggregate=COUNT)
    assert fired(flink(query, times(15, 3)))[0] == (0, 10, 1, "late_firing")


def test_lateness_is_decided_after_session_merging() -> None:
    # gap 5: (14 17 20), watermark 19. 9 alone would be [9, 14), max ts 13 <= 19: late;
    # merged it is [9, 25), max ts 24 > 19: kept (the default profile drops it)
    query = Query(SessionWindows(5), aggregate=COUNT)
    result = flink(query, times(14, 17, 20, 9))
    assert fired(result) == [(9, 25, 4, "end_of_input")]
    assert result.drops == []
    assert len(run(query, times(14, 17, 20, 9)).drops) == 1


def test_a_late_session_event_within_lateness_refires_the_merged_session() -> None:
    # gap 5, lateness 20: 20 (watermark 19) fires [0, 5), kept until 4 + 20; 2 merges into
    # it, [0, 7) (max ts 6 <= 19), which fires at once with both events
    query = Query(SessionWindows(5, allowed_lateness_ms=20), aggregate=COUNT)
    assert fired(flink(query, times(0, 20, 2)))[:2] == [(0, 5, 1, "close"), (0, 7, 2, "late_firing")]


def test_a_cleaned_session_is_not_revived() -> None:
    # tolerance 10: 17 gives the watermark 6, which fires [0, 5) (max ts 4). 4 alone is
    # [4, 9), max ts 8 > 6: on time, and a new session (the default profile drops it)
    query = Query(SessionWindows(5, tolerance_ms=10), aggregate=COUNT)
    result = flink(query, times(0, 17, 4))
    assert sorted(fired(result)) == [(0, 5, 1, "close"), (4, 9, 1, "end_of_input"), (17, 22, 1, "end_of_input")]


def test_session_gap_is_inclusive_like_time_window_intersects() -> None:
    result = flink(Query(SessionWindows(5), aggregate=COUNT), times(0, 5))
    assert [(e.window.start_ms, e.window.end_ms) for e in result.emissions] == [(0, 10)]


def test_end_of_input_fires_every_window() -> None:
    result = flink(Query(FixedWindows(10), aggregate=COUNT), times(1, 15))
    assert [(e.window.start_ms, e.reason) for e in result.emissions] == [(0, "close"), (10, "end_of_input")]


@pytest.mark.parametrize("profile", ["tenzir", "spark"])
def test_allowed_lateness_is_a_flink_option(profile: str) -> None:
    with pytest.raises(InvalidSpec, match=r"window.allowed_lateness.*use profile flink"):
        replay(parse_scenario({
            "profile": profile, "window": {"kind": "fixed", "size": 10, "allowed_lateness": 5},
            "aggregate": {"n": "count()"}, "input": [{"ts": 1}],
        }))
