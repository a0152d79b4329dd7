"""beam: windowing functions, session merging, the watermark and lateness (B1-B4 in
docs/semantics.md), each on its smallest stream. Times are ms; pane tuples read
(start, end, values, timing, index, nonspeculative index, last, timestamp, reason)."""

from __future__ import annotations

import pytest

from windtunnel.oracle import InvalidSpec
from windtunnel.oracle.engine import replay
from windtunnel.oracle.model.results import Drop
from windtunnel.oracle.profiles.beam.spec import WindowFn
from windtunnel.oracle.profiles.beam.windows import GLOBAL, assign, merges
from windtunnel.oracle.scenario import parse_scenario

from .helpers import beam, panes


def test_b1_fixed_and_sliding_windows_hold_a_time_at_their_offsets() -> None:
    assert assign(WindowFn("fixed", size_ms=10, offset_ms=3), 2) == [(-7, 3)]
    assert assign(WindowFn("fixed", size_ms=10, offset_ms=3), 3) == [(3, 13)]
    assert assign(WindowFn("sliding", size_ms=10, period_ms=4), 9) == [(8, 18), (4, 14), (0, 10)]
    assert assign(WindowFn("sliding", size_ms=4, period_ms=6), 5) == []  # between windows
    assert assign(WindowFn("global"), -5) == [GLOBAL]


def test_b1_an_element_between_sliding_windows_is_dropped_as_in_no_window() -> None:
    assert panes(beam("SlidingWindows(4ms, 6ms)", [{"ts": 5}, {"ts": 7}])) == [
        ("drop", 0, "no_window"), (6, 10, [7], "on_time", 0, 0, False, 9, "end_of_input")]


def test_b2_sessions_merge_on_strict_overlap_only() -> None:
    assert merges([(0, 5), (5, 10)]) == []  # exactly gap apart: two sessions
    assert merges([(0, 5), (4, 9), (20, 25)]) == [([(0, 5), (4, 9)], (0, 9))]
    out = beam("Sessions(5ms)", [{"ts": 0}, {"ts": 5}, {"ts": 4}],
               rules={"beam_watermark": "injected"})
    assert [p[:3] for p in panes(out)] == [(0, 10, [0, 5, 4])]


def test_b2_a_merged_session_counts_its_panes_afresh() -> None:
    # one bundle: [1,11) and [2,12) merge, fire early (pane 0); 3 makes [1,13), a new
    # window whose panes count from 0 again
    out = beam("Sessions(10ms)", [{"batch": [{"ts": 1}, {"ts": 2}]}, {"ts": 3}, {"ts": 4}],
               trigger="AfterWatermark(early=AfterCount(2))", accumulation="accumulating",
               rules={"beam_watermark": "injected"})
    assert [p[:5] for p in panes(out)][:2] == [
        (1, 12, [1, 2], "early", 0), (1, 14, [1, 2, 3, 4], "early", 0)]


def test_b2_a_finished_session_swallows_what_merges_into_it() -> None:
    out = beam("Sessions(5ms)", [{"ts": 0}, {"ts": 1}, {"ts": 3}],
               trigger="AfterCount(2)", accumulation="discarding")
    assert panes(out) == [(0, 6, [0, 1], "early", 0, -1, True, 5, "element"),
                          ("drop", 2, "finished")]


def test_b3_the_default_watermark_is_the_largest_event_time_minus_tolerance() -> None:
    # after 12 the watermark is 12: [0,10) fires on time; with tolerance 3 it is 9 and
    # [0,10) waits for 13 (watermark 10)
    items = [{"ts": 1}, {"ts": 12}, {"ts": 13}]
    assert panes(beam({"kind": "fixed", "size": 10}, items))[0][-1:] == ("watermark",)
    late = beam({"kind": "fixed", "size": 10, "tolerance": 3}, items)
    assert [(p[0], p[-1]) for p in panes(late)] == [(0, "watermark"), (10, "end_of_input")]
    assert late[0].after_seq == 2


def test_b3_injected_watermarks_only_move_forward_and_end_of_input_is_infinity() -> None:
    items = [{"ts": 1}, {"watermark": 10}, {"ts": 2}, {"watermark": 5}, {"ts": 15}]
    out = beam({"kind": "fixed", "size": 10}, items, rules={"beam_watermark": "injected"})
    assert [(p[0], p[2], p[3], p[-1]) for p in panes(out)] == [
        (0, [1], "on_time", "watermark"), (0, [2], "late", "element"),
        (10, [15], "on_time", "end_of_input")]
    discarded = beam({"kind": "fixed", "size": 10}, items,
                     rules={"beam_watermark": "injected", "end_of_input": "discard"})
    assert [p[0] for p in panes(discarded)] == [0, 0]


@pytest.mark.parametrize(("expiry", "kept"), [("passes", True), ("reaches", False)])
def test_b4_an_element_is_dropped_once_the_watermark_is_past_end_plus_lateness(
        expiry: str, kept: bool) -> None:
    # watermark 15 = end 10 + lateness 5: the engine keeps 3 (15 > 15 is false), the
    # guide's reading drops it
    out = beam("FixedWindows(10ms)", [{"ts": 15}, {"ts": 3}], allowed_lateness=5,
               rules={"beam_expiry": expiry})
    dropped = [o for o in out if isinstance(o, Drop)]
    assert (not dropped) is kept
    if not kept:
        assert dropped[0].reason == "late" and "allowed lateness 5" in dropped[0].message


def test_b4_lateness_is_per_window_a_sliding_element_joins_its_open_windows() -> None:
    out = beam("SlidingWindows(10ms, 5ms)", [{"ts": 12}, {"ts": 7}])
    assert {(p[0], tuple(p[2])) for p in panes(out) if p[0] != "drop"} >= {(5, (12, 7))}
    assert not any(isinstance(o, Drop) for o in out)


def test_b4_with_default_windowing_late_data_is_dropped() -> None:
    out = beam({"kind": "fixed", "size": 10}, [{"ts": 25}, {"ts": 3}])
    assert panes(out)[0] == ("drop", 1, "late")


def test_the_generic_kinds_run_as_beams_windowing_functions() -> None:
    sliding = beam({"kind": "fixed", "size": 10, "every": 5}, [{"ts": 7}])
    assert sorted((p[0], p[1]) for p in panes(sliding)) == [(0, 10), (5, 15)]
    sessions = beam({"kind": "session", "gap": 5, "allowed_lateness": 3}, [{"ts": 1}])
    assert panes(sessions)[0][:2] == (1, 6)


@pytest.mark.parametrize(
    ("window", "field"),
    [({"kind": "session", "gap": 5, "max_events": 3}, "window.max_events"),
     ({"kind": "fixed", "size": 10, "idle_timeout": 5}, "window.idle_timeout"),
     ({"kind": "beam", "window_fn": "FixedWindows(1)", "trigger": "AfterCount(2)"},
      "window.accumulation"),
     ({"kind": "beam", "window_fn": "FixedWindows(1)", "on": "now()"}, "window.on")],
)
def test_what_beam_cannot_express_is_an_input_error(window: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        replay(parse_scenario({"profile": "beam", "window": window, "input": [{"ts": 1}],
                               "aggregate": {"n": "count()"}}))
    assert error.value.field == field


@pytest.mark.parametrize(("rule", "value"), [("session_gap", "inclusive"), ("close_at", "passes")])
def test_a_shared_rule_the_beam_operator_does_not_read_cannot_be_changed(rule: str, value: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        beam("FixedWindows(1)", [{"ts": 1}], rules={rule: value})
    assert error.value.field == f"rules.{rule}"


def test_a_beam_rule_cannot_be_changed_under_another_profile() -> None:
    data = {"window": {"kind": "fixed", "size": 10}, "input": [{"ts": 1}],
            "rules": {"beam_expiry": "reaches"}}
    with pytest.raises(InvalidSpec) as error:
        replay(parse_scenario(data))
    assert error.value.field == "rules.beam_expiry" and "profile beam" in str(error.value)
