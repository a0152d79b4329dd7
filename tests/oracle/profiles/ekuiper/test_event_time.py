"""eKuiper event time (E10, E12-E16 in docs/semantics.md): the watermark stage and the engine's
documented differences as rule options, each on both readings.

Timelines: event times on the axis (ms), `|` window bounds; watermark = largest time - lateness.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from windtunnel.oracle import Aggregation, Query, run
from windtunnel.oracle.model.conditions import parse_condition
from windtunnel.oracle.model.errors import InvalidStream
from windtunnel.oracle.model.results import Result
from windtunnel.oracle.model.stream import Event, Watermark
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.profiles.ekuiper.spec import EkuiperWindows
from windtunnel.oracle.profiles.ekuiper.watermark import WatermarkStage

EKUIPER = profile_named("ekuiper").rules
XS = (Aggregation("xs", "collect", "x"),)


def ek(window: EkuiperWindows, events: Sequence[Event], rules: Any = EKUIPER,
       **query: Any) -> Result:
    return run(Query(window, aggregate=query.pop("aggregate", XS), **query), events,
               profile="ekuiper", rules=rules)


def stamped(*ts: int, **fields: Any) -> list[Event]:
    return [Event(i, {"ts": t, "x": t, **fields}) for i, t in enumerate(ts)]


def windows(result: Result) -> list[tuple[Any, ...]]:
    return [(e.window.start_ms, e.window.end_ms, e.row["xs"]) for e in result.emissions]


def drops(result: Result) -> list[tuple[int, str]]:
    return [(d.seq, d.reason) for d in result.drops]


def test_the_stage_holds_records_until_the_watermark_reaches_them_and_releases_in_order() -> None:
    stage = WatermarkStage(lateness_ms=10)
    for seq, t in enumerate((30, 25, 21)):
        assert not stage.late(t)
        stage.hold((t, None, {}, seq))  # type: ignore[arg-type]
    assert stage.move(stage.target_ms()) == []  # watermark 20: nothing reached
    assert stage.late(19) and not stage.late(20)  # t == watermark is kept
    assert [r[0] for r in stage.move(26) or []] == [21, 25]
    assert stage.move(26) is None and stage.move(3) is None  # never back, never twice
    assert [r[0] for r in stage.held] == [30]


def test_a_late_record_is_dropped_as_late_before_filter_sees_it() -> None:
    # lateness 0: after 20 the watermark is 20; 5 fails FILTER and is late: reported late
    window = EkuiperWindows("tumbling", unit="ms", size_ms=10, on="ts",
                            filter=parse_condition("x > 100", "filter"))
    result = ek(window, stamped(20, 5))
    assert ("late" in dict(drops(result)).get(1, "")) and not result.emissions


def test_a_filtered_record_still_moves_the_watermark() -> None:
    #  0    10    20    30     FILTER x < 10: only 1 passes; 25 moves the watermark to 25
    #  |1   |     |  25 |      [0, 10) and the empty [10, 20) fire although FILTER drops 25
    window = EkuiperWindows("tumbling", unit="ms", size_ms=10, on="ts",
                            filter=parse_condition("x < 10", "filter"))
    result = ek(window, stamped(1, 25))
    assert windows(result) == [(0, 10, [1]), (10, 20, [])]
    assert drops(result) == [(1, "filtered")]


@pytest.mark.parametrize("kind, spec", [
    ("tumbling", {"size_ms": 10}),
    ("hopping", {"size_ms": 10, "hop_ms": 5}),
    ("session", {"timeout_ms": 3, "max_duration_ms": 1000}),
    ("sliding", {"size_ms": 10}),
    ("sliding", {"size_ms": 10, "delay_ms": 2}),
])
def test_every_kind_fires_only_when_the_watermark_reaches_the_window_end(
        kind: str, spec: dict[str, int]) -> None:
    # lateness 5; 8 then 3 (on time); the last record moves the watermark far enough
    window = EkuiperWindows(kind, unit="ms", on="ts", lateness_ms=5, **spec)  # type: ignore[arg-type]
    result = ek(window, stamped(8, 3, 200))
    assert result.emissions
    watermarks = {0: 3, 1: 3, 2: 195}  # after each record
    for emission in result.emissions:
        assert emission.after_seq is not None
        assert emission.window.end_ms <= watermarks[emission.after_seq]
        assert emission.row["xs"] == sorted(emission.row["xs"])  # time order
    assert (2, "end_of_input") in drops(result)  # 200 is never reached


def test_count_windows_in_event_time_count_records_in_time_order() -> None:
    window = EkuiperWindows("count", count=2, on="ts", lateness_ms=5)
    result = run(Query(window, aggregate=XS), stamped(4, 2, 3, 1, 20), profile="ekuiper",
                 rules=EKUIPER)
    # watermark 15 after 20 releases 1 2 3 4 (2 is late? no: 2 >= -1 when it came)
    assert [e.row["xs"] for e in result.emissions] == [[1, 2], [3, 4]]
    assert drops(result) == [(4, "end_of_input")]


def test_end_of_input_flush_releases_what_the_stage_holds() -> None:
    window = EkuiperWindows("tumbling", unit="ms", size_ms=10, on="ts", lateness_ms=10)
    flushed = ek(window, stamped(12, 3), rules=EKUIPER.with_overrides({"end_of_input": "flush"}))
    assert [(s, e, xs, p) for (s, e, xs), p in zip(
        windows(flushed), [x.partial for x in flushed.emissions], strict=True)] == [
        (0, 10, [3], True), (10, 20, [12], True)]
    lost = ek(window, stamped(12, 3))
    assert not lost.emissions and drops(lost) == [(1, "end_of_input"), (0, "end_of_input")]


# --- hopping_layout (E13)
@pytest.mark.parametrize("layout, expected", [
    # HOPPINGWINDOW(ms, 10, 4): starts on the grid 0, 4, 8 ... or ends on it 4, 8, 12 ...
    ("starts", [(-8, 2, [1]), (-4, 6, [1, 5]), (0, 10, [1, 5]), (4, 14, [5])]),
    ("ends", [(-6, 4, [1]), (-2, 8, [1, 5]), (2, 12, [5]), (6, 16, [])]),
])
def test_hopping_windows_are_laid_out_by_their_starts_or_their_ends(
        layout: str, expected: list[tuple[Any, ...]]) -> None:
    window = EkuiperWindows("hopping", unit="ms", size_ms=10, hop_ms=4, on="ts")
    result = ek(window, stamped(1, 5, 16), EKUIPER.with_overrides({"hopping_layout": layout}))
    assert windows(result) == expected


def test_hopping_layouts_agree_when_the_hop_divides_the_size() -> None:
    window = EkuiperWindows("hopping", unit="ms", size_ms=10, hop_ms=5, on="ts")
    results = [windows(ek(window, stamped(1, 7, 13, 30),
                          EKUIPER.with_overrides({"hopping_layout": layout})))
               for layout in ("starts", "ends")]
    assert results[0] == results[1]


# --- session_tick_cut (E14)
@pytest.mark.parametrize("cut, expected", [
    # SESSIONWINDOW(ms, 10, 4): ticks every 10 ms (0, 10, 20, ...), timeout 4
    #  0  3  6  9 |12 15 18 |21 24          40
    # lasted: at 10 the session has lasted 10 (>= max): cut [0,10), then [10,20), then [20,28)
    ("lasted", [(0, 10, [0, 3, 6, 9]), (10, 20, [12, 15, 18]), (20, 28, [21, 24])]),
    # after_first_record: 10 - 10 is not strictly after 0; 20 - 10 is: cut at 20, once 21 comes
    ("after_first_record", [(0, 20, [0, 3, 6, 9, 12, 15, 18]), (20, 28, [21, 24])]),
])
def test_session_tick_cut_is_measured_from_the_start_or_strictly_from_the_first_record(
        cut: str, expected: list[tuple[Any, ...]]) -> None:
    window = EkuiperWindows("session", unit="ms", timeout_ms=4, max_duration_ms=10, on="ts")
    result = ek(window, stamped(0, 3, 6, 9, 12, 15, 18, 21, 24, 40),
                EKUIPER.with_overrides({"session_tick_cut": cut}))
    assert windows(result) == expected
    assert drops(result) == [(9, "end_of_input")]


def test_after_first_record_cuts_only_when_a_record_after_the_tick_arrives() -> None:
    #  5   13  19 |20 (tick: 20 - 10 > 5)   27 (timeout)    40 (lateness 12: watermark 28)
    # 40 is not released when the watermark passes 27: no record after the tick reached the
    # session, which closes at its timeout; `lasted` cuts at 20 once the watermark reaches it
    window = EkuiperWindows("session", unit="ms", timeout_ms=8, max_duration_ms=10, on="ts",
                            lateness_ms=12)
    result = ek(window, stamped(5, 13, 19, 40))
    assert windows(result) == [(5, 27, [5, 13, 19])]
    lasted = ek(window, stamped(5, 13, 19, 40),
                EKUIPER.with_overrides({"session_tick_cut": "lasted"}))
    assert windows(lasted) == [(5, 20, [5, 13, 19])]
    assert drops(result) == drops(lasted) == [(3, "end_of_input")]


# --- sliding_delay_end (E15)
@pytest.mark.parametrize("end, first", [("closed", [10, 12]), ("open", [10])])
def test_a_delayed_sliding_window_includes_its_delayed_end_or_not(
        end: str, first: list[int]) -> None:
    # SLIDINGWINDOW(ms, 5, 2): the window of 10 is [5, 12] (closed) or [5, 12) (open)
    window = EkuiperWindows("sliding", unit="ms", size_ms=5, delay_ms=2, on="ts")
    result = ek(window, stamped(10, 12, 20), EKUIPER.with_overrides({"sliding_delay_end": end}))
    assert windows(result)[0] == (5, 12, first)
    assert drops(result) == [(2, "end_of_input")]  # 20's window waits for watermark 22


def test_sliding_delay_end_does_not_change_undelayed_windows() -> None:
    window = EkuiperWindows("sliding", unit="ms", size_ms=5, on="ts")
    results = [windows(ek(window, stamped(10, 12, 15, 30),
                          EKUIPER.with_overrides({"sliding_delay_end": end})))
               for end in ("closed", "open")]
    assert results[0] == results[1] == [(5, 10, [10]), (7, 12, [10, 12]), (10, 15, [10, 12, 15]),
                                        (25, 30, [30])]


# --- where_emptied (E16)
@pytest.mark.parametrize("emptied, expected", [
    ("emit", [(0, 10, []), (10, 20, []), (20, 30, [25])]),
    ("nothing", [(20, 30, [25])]),
])
def test_a_window_a_post_window_where_empties_is_emitted_empty_or_not_at_all(
        emptied: str, expected: list[tuple[Any, ...]]) -> None:
    #  0 1 | 10 (nothing) | 20 25 | 35: [0, 10) loses 1 to WHERE, [10, 20) is truly empty
    window = EkuiperWindows("tumbling", unit="ms", size_ms=10, on="ts",
                            where=parse_condition("x > 20", "where"))
    result = ek(window, stamped(1, 25, 35), EKUIPER.with_overrides({"where_emptied": emptied}))
    assert windows(result) == expected


def test_without_where_empty_windows_are_still_emitted() -> None:
    window = EkuiperWindows("tumbling", unit="ms", size_ms=10, on="ts")
    assert windows(ek(window, stamped(1, 25))) == [(0, 10, [1]), (10, 20, [])]


# --- {watermark: T} (W1): the stage moves to T
def test_an_injected_watermark_releases_held_records_and_fires_what_it_reaches() -> None:
    window = EkuiperWindows("tumbling", unit="ms", size_ms=10, on="ts", lateness_ms=100)
    items: list[Any] = [*stamped(3, 12, 1), Watermark(15), Event(3, {"ts": 14, "x": 14}),
                        Event(4, {"ts": 16, "x": 16}), Watermark(2)]
    result = ek(window, items)
    # T = 15 releases 1 3 12 and fires [0, 10); 14 is late against 15; T = 2 is ignored
    assert windows(result) == [(0, 10, [1, 3])]
    assert result.emissions[0].after_seq == 2
    # 16 is still held; 12 sits in the open [10, 20): both lost at the end
    assert drops(result) == [(3, "late"), (4, "end_of_input"), (1, "end_of_input")]


def test_an_injected_watermark_is_rejected_in_processing_time() -> None:
    window = EkuiperWindows("tumbling", unit="ms", size_ms=10)
    with pytest.raises(InvalidStream, match="cannot take an injected watermark"):
        ek(window, [Event(0, {"x": 1}), Watermark(15)])
