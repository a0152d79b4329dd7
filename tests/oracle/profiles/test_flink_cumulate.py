"""Cumulating windows (``kind: cumulate``, profile flink): Flink SQL's ``CUMULATE`` TVF.

A cycle ``[c, c + size)`` holds the windows ``[c, c + step)``, ``[c, c + 2 step)``, ...,
``[c, c + size)``; an event is in every window of its cycle that ends after it. The
profile's other rules apply as to fixed windows: a window fires when the watermark
(max - tolerance - 1 ms) reaches its end - 1 ms, an event late for its first windows
still counts in the later ones, and it is dropped once its cycle's last window fired.
Every expectation was also run on Flink 2.3 (``windtunnel check --target flink``).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from windtunnel.oracle import Aggregation, CumulateWindows, Query, run
from windtunnel.oracle.engine import replay
from windtunnel.oracle.model.errors import InvalidScenario, InvalidSpec
from windtunnel.oracle.model.results import Result
from windtunnel.oracle.model.stream import numbered
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.scenario import parse_scenario

FLINK = profile_named("flink").rules
COUNT = (Aggregation("n", "count"),)


def cumulate(step: int, size: int, *ts: int, tolerance: int = 0) -> Result:
    query = Query(CumulateWindows(step, size, tolerance_ms=tolerance), aggregate=COUNT)
    return run(query, numbered({"ts": t} for t in ts), rules=FLINK, profile="flink")


def fired(result: Result) -> list[tuple[int | None, int | None, Any, str]]:
    return [(e.window.start_ms, e.window.end_ms, e.row["n"], e.reason) for e in result.emissions]


def test_the_documented_bid_example_gives_the_documented_rows() -> None:
    # Flink's window-tvf page: CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), 2 min, 10 min)
    scenario = parse_scenario({
        "profile": "flink", "time_unit": "min",
        "window": {"kind": "cumulate", "step": "2min", "size": "10min", "on": "bidtime"},
        "aggregate": {"price": "sum(price)"},
        "input": [{"bidtime": t, "price": p} for t, p in
                  ((5, 4.0), (7, 2.0), (9, 5.0), (11, 3.0), (13, 1.0), (17, 6.0))],
    })
    rows = {(e.window.start_ms // 60_000, e.window.end_ms // 60_000): e.row["price"]  # type: ignore[operator]
            for e in replay(scenario).emissions}
    assert rows == {(0, 6): 4.0, (0, 8): 6.0, (0, 10): 11.0, (10, 12): 3.0, (10, 14): 4.0,
                    (10, 16): 4.0, (10, 18): 10.0, (10, 20): 10.0}


@given(st.integers(1, 5), st.integers(1, 6), st.integers(-100, 100))
def test_an_event_is_in_every_window_of_its_cycle_that_ends_after_it(
    step: int, steps: int, t: int
) -> None:
    spec = CumulateWindows(step, step * steps)
    cycle = t - t % (step * steps)
    bounds = spec.bounds_containing(t)
    assert bounds == [(cycle, cycle + k * step) for k in range(1, steps + 1) if cycle + k * step > t]
    assert all(start <= t < end for start, end in bounds)


def test_a_window_fires_when_the_watermark_reaches_its_end_minus_1ms() -> None:
    #  step 2, size 6:  [0,2) [0,4) [0,6)     tolerance 0: after 3 the watermark is 2,
    #  a . b . . .      1 = end - 1 of [0,2) <= 2: it fires with a; [0,4) waits for 4
    assert fired(cumulate(2, 6, 1, 3)) == [
        (0, 2, 1, "close"), (0, 4, 2, "end_of_input"), (0, 6, 2, "end_of_input")
    ]
    assert fired(cumulate(2, 6, 1, 3, 4))[:2] == [(0, 2, 1, "close"), (0, 4, 2, "close")]


def test_a_window_without_new_events_in_its_last_step_still_fires() -> None:
    # 1 and 9: [0,4) and [0,6) hold only 1 and fire on their own timers (the page's
    # [08:10, 08:16) row); the cycle's empty first windows never fire
    assert fired(cumulate(2, 6, 3, 9)) == [
        (0, 4, 1, "close"), (0, 6, 1, "close"), (6, 10, 1, "end_of_input"),
        (6, 12, 1, "end_of_input"),
    ]


def test_an_event_late_for_its_first_windows_counts_in_the_later_ones() -> None:
    #  [0,2) [0,4) fired at watermark 3 (after 4); 0 is late for them, not for [0,6)
    result = cumulate(2, 6, 1, 4, 0)
    assert result.drops == []
    assert fired(result) == [(0, 2, 1, "close"), (0, 4, 1, "close"), (0, 6, 3, "end_of_input")]


def test_an_event_whose_cycle_fired_its_last_window_is_dropped_late() -> None:
    #  7 moves the watermark to 6: [0,6) fired; 2 is late for [0,4) and [0,6)
    result = cumulate(2, 6, 1, 7, 2)
    (drop,) = result.drops
    assert (drop.seq, drop.reason) == (2, "late")
    assert [(w.start_ms, w.end_ms) for w in drop.windows] == [(0, 4), (0, 6)]


def test_the_tolerance_is_the_out_of_orderness_bound() -> None:
    # tolerance 3: 8 gives the watermark 4, so [0,6) is open and 2 still counts there
    assert fired(cumulate(2, 6, 1, 8, 2, tolerance=3))[:2] == [
        (0, 2, 1, "close"), (0, 4, 1, "close")
    ]
    assert (0, 6, 2, "end_of_input") in fired(cumulate(2, 6, 1, 8, 2, tolerance=3))


def test_cycles_align_to_the_epoch_for_negative_times_too() -> None:
    assert [(s, e) for s, e, _, _ in fired(cumulate(2, 6, -1))] == [(-6, 0)]


@pytest.mark.parametrize("profile", ["tenzir", "spark", "kdb", "timeplus", "ekuiper"])
def test_other_profiles_refuse_the_kind_naming_flink(profile: str) -> None:
    scenario = parse_scenario({
        "profile": profile, "window": {"kind": "cumulate", "step": 2, "size": 6},
        "aggregate": {"n": "count()"}, "input": [{"ts": 1}],
    })
    with pytest.raises(InvalidSpec, match=f"not supported by profile {profile}.*profile flink"):
        replay(scenario)


@pytest.mark.parametrize(
    ("window", "error", "words"),
    [
        ({"size": 6}, InvalidScenario, "window.step.*required"),
        ({"step": 2}, InvalidScenario, "window.size.*required"),
        ({"step": 4, "size": 6}, InvalidSpec, "whole multiple of window.step"),
        ({"step": 0, "size": 6}, InvalidSpec, "window.step.*positive"),
        ({"step": 2, "size": 6, "every": 2}, InvalidScenario, "not an option of cumulate"),
        ({"step": 2, "size": 6, "allowed_lateness": 2}, InvalidScenario, "not an option"),
    ],
)
def test_a_bad_cumulate_block_is_one_clear_error(
    window: dict[str, Any], error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        parse_scenario({"profile": "flink", "window": {"kind": "cumulate", **window},
                        "aggregate": {"n": "count()"}, "input": []})
