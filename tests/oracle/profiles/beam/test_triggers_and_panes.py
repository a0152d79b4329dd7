"""beam: triggers, bundles and timers, output times, accumulation and panes (B5-B14 in
docs/semantics.md), each on its smallest stream. Times are ms; pane tuples read
(start, end, values, timing, index, nonspeculative index, last, timestamp, reason)."""

from __future__ import annotations

import json

import pytest

from windtunnel.oracle.engine import replay
from windtunnel.oracle.explain import explain
from windtunnel.oracle.model.results import Drop, Emission, outputs_from_json, pane_of
from windtunnel.oracle.scenario import parse_scenario

from .helpers import beam, panes

INJECTED = {"beam_watermark": "injected"}
EARLY_LATE = "AfterWatermark(early=AfterCount(2), late=AfterCount(1))"


def test_b5_early_on_time_and_late_panes_with_their_indexes() -> None:
    out = beam("FixedWindows(10ms)", [{"ts": 1}, {"ts": 2}, {"ts": 3}, {"watermark": 10},
                                      {"ts": 4}], trigger=EARLY_LATE, accumulation="accumulating",
               allowed_lateness=5, rules=INJECTED)
    assert panes(out) == [
        (0, 10, [1, 2], "early", 0, -1, False, 9, "element"),
        (0, 10, [1, 2, 3], "on_time", 1, 0, False, 9, "watermark"),
        (0, 10, [1, 2, 3, 4], "late", 2, 1, False, 9, "element"),
    ]
    assert [o.partial for o in out] == [True, False, False]


def test_b5_after_watermark_alone_finishes_on_time_so_late_data_is_dropped() -> None:
    out = beam("FixedWindows(10ms)", [{"ts": 1}, {"watermark": 10}, {"ts": 4}],
               trigger="AfterWatermark()", accumulation="accumulating", allowed_lateness=5,
               rules=INJECTED)
    assert panes(out) == [(0, 10, [1], "on_time", 0, 0, True, 9, "watermark"),
                          ("drop", 1, "finished")]


def test_b5_the_default_trigger_fires_again_for_each_late_bundle() -> None:
    out = beam("FixedWindows(10ms)", [{"ts": 1}, {"watermark": 12}, {"batch": [{"ts": 4},
               {"ts": 5}]}, {"ts": 6}], allowed_lateness=5, rules=INJECTED)
    assert [(p[2], p[3], p[5]) for p in panes(out)] == [
        ([1], "on_time", 0), ([4, 5], "late", 1), ([6], "late", 2)]


def test_b6_after_count_fires_once_per_bundle_and_its_leftovers_sit_forever() -> None:
    out = beam("GlobalWindows()", [{"batch": [{"ts": 1}, {"ts": 2}, {"ts": 3}]}, {"ts": 4},
                                   {"ts": 5}], trigger="Repeatedly(AfterCount(2))",
               accumulation="discarding")
    assert [p[2] for p in panes(out)] == [[1, 2, 3], [4, 5]]
    leftover = beam("FixedWindows(10ms)", [{"ts": 1}], trigger="AfterCount(2)",
                    accumulation="discarding")
    assert leftover == []
    assert "sit around forever" in explain(parse_scenario({
        "profile": "beam", "input": [{"ts": 1}], "aggregate": {"n": "count()"},
        "window": {"kind": "beam", "window_fn": "FixedWindows(10ms)",
                   "trigger": "AfterCount(2)", "accumulation": "discarding"}})).lines()[-1]


def test_b6_after_processing_time_counts_from_the_panes_first_element_on_the_wall_clock() -> None:
    # the timer is set at 0 + 5 by the first element; 3 starts a new pane's timer at 8 + 5
    items = [{"event": {"ts": 1}, "at": 0}, {"event": {"ts": 2}, "at": 3}, {"advance": 3},
             {"event": {"ts": 3}, "at": 8}, {"advance": 20}]
    out = beam("FixedWindows(100ms)", items, trigger="Repeatedly(AfterProcessingTime(5ms))",
               accumulation="discarding", rules=INJECTED)
    assert [(p[2], p[-1]) for p in panes(out)] == [([1, 2], "processing_time"),
                                                     ([3], "processing_time")]
    assert [o.wall_ms for o in out] == [6, 28]


def test_b7_composites_any_all_each_and_or_finally() -> None:
    items = [{"ts": t} for t in (1, 2, 3, 4, 5)]
    fired = {
        trigger: [p[2] for p in panes(beam("GlobalWindows()", items, trigger=trigger,
                                           accumulation="discarding")) if p[0] != "drop"]
        for trigger in ("Repeatedly(AfterAny(AfterCount(2), AfterCount(3)))",
                        "Repeatedly(AfterAll(AfterCount(2), AfterCount(3)))",
                        "AfterEach(AfterCount(1), AfterCount(3))",
                        "OrFinally(Repeatedly(AfterCount(1)), AfterCount(3))",
                        "Never", "Always")
    }
    assert list(fired.values()) == [
        [[1, 2], [3, 4]], [[1, 2, 3]], [[1], [2, 3, 4]], [[1], [2], [3]], [],
        [[1], [2], [3], [4], [5]]]


def test_b8_a_finished_trigger_marks_its_last_pane_and_takes_nothing_more() -> None:
    out = beam("FixedWindows(10ms)", [{"ts": 1}, {"ts": 2}, {"ts": 3}],
               trigger="AfterCount(2)", accumulation="accumulating")
    assert panes(out) == [(0, 10, [1, 2], "early", 0, -1, True, 9, "element"),
                          ("drop", 2, "finished")]


@pytest.mark.parametrize(("reading", "expected"), [
    # engine: processing time 12 is "past" the window's end 10: the on-time branch fires,
    # the pane is late, and AfterWatermark (no late firings) has finished
    ("engine", [("late", 0, "processing_time")]),
    # guide: processing time only satisfies AfterProcessingTime: an early pane, then on time
    ("guide", [("early", -1, "processing_time"), ("on_time", 0, "end_of_input")]),
])
def test_b9_how_a_processing_time_firing_is_read(reading: str, expected: list[object]) -> None:
    items = [{"event": {"ts": 1}, "at": 10}, {"advance": 12}]
    out = beam("FixedWindows(10ms)", items, accumulation="accumulating",
               trigger="AfterWatermark(early=AfterProcessingTime(2ms))",
               rules={**INJECTED, "beam_processing_time": reading})
    assert [(p[3], p[5], p[-1]) for p in panes(out)] == expected


def test_b10_a_batch_is_one_bundle_evaluated_once() -> None:
    one = beam("GlobalWindows()", [{"batch": [{"ts": 1}, {"ts": 2}, {"ts": 3}]}],
               trigger="AfterCount(2)", accumulation="discarding")
    apart = beam("GlobalWindows()", [{"ts": 1}, {"ts": 2}, {"ts": 3}],
                 trigger="AfterCount(2)", accumulation="discarding")
    assert [p[2] for p in panes(one)] == [[1, 2, 3]]
    assert [p[2] for p in panes(apart) if p[0] != "drop"] == [[1, 2]]


@pytest.mark.parametrize(("combiner", "timestamps"), [
    ("end_of_window", [9, 9]), ("earliest", [3, 2]), ("latest", [5, 2])])
def test_b11_output_times_follow_the_timestamp_combiner(combiner: str, timestamps: list[int]) -> None:
    # a trigger without an on-time pane releases the hold with each pane: the second
    # pane's time is its own element's
    out = beam("FixedWindows(10ms)", [{"batch": [{"ts": 5}, {"ts": 3}]}, {"ts": 2}],
               trigger="Repeatedly(AfterCount(1))", accumulation="accumulating",
               timestamp_combiner=combiner, rules=INJECTED)
    assert [p[7] for p in panes(out)] == timestamps


def test_b11_an_element_behind_the_watermark_holds_no_output_time() -> None:
    out = beam("FixedWindows(10ms)", [{"watermark": 8}, {"batch": [{"ts": 2}, {"ts": 3},
               {"ts": 7}]}, {"watermark": 11}], timestamp_combiner="earliest", rules=INJECTED)
    assert panes(out)[0][7] == 9  # every time is behind 8: the window's end


def test_b12_discarding_fires_an_empty_on_time_pane() -> None:
    out = beam("FixedWindows(10ms)", [{"batch": [{"ts": 1}, {"ts": 2}]}, {"watermark": 10}],
               trigger="AfterWatermark(early=AfterCount(2))", accumulation="discarding",
               rules=INJECTED)
    assert [(p[2], p[3]) for p in panes(out)] == [([1, 2], "early"), ([], "on_time")]


def test_b13_panes_go_into_json_lines_for_beam_only() -> None:
    out = beam("FixedWindows(10ms)", [{"ts": 1}])
    line = out[0].to_json()
    assert line["pane"] == {"timing": "on_time", "index": 0, "nonspeculative_index": 0,
                            "first": True, "last": False, "timestamp_ms": 9}
    assert list(line)[-1] == "pane"
    assert outputs_from_json([json.loads(json.dumps(line))]) == out
    tenzir = replay(parse_scenario({"window": {"kind": "fixed", "size": 10},
                                    "input": [{"ts": 1}], "aggregate": {"n": "count()"}}))
    assert "pane" not in tenzir.outputs[0].to_json()


def test_b13_a_pane_says_which_part_of_the_trigger_fired() -> None:
    out = beam("FixedWindows(10ms)", [{"ts": 1}, {"ts": 2}, {"watermark": 10}],
               trigger=EARLY_LATE, accumulation="accumulating", rules=INJECTED)
    reasons = [pane_of(o).fired_by for o in out if isinstance(o, Emission)]  # type: ignore[union-attr]
    assert reasons == ["AfterWatermark early: AfterCount(2): 2 elements in the pane",
                       "AfterWatermark: the watermark passed the window's end 10"]


def test_b13_expect_blocks_check_panes() -> None:
    data = {"profile": "beam", "window": {"kind": "fixed", "size": 10},
            "aggregate": {"n": "count()"}, "input": [{"ts": 1}],
            "expect": {"emissions": [{"window": [0, 10], "pane": {"timing": "late"}}]}}
    from windtunnel.oracle.expect import check

    scenario = parse_scenario(data)
    assert scenario.expect is not None
    assert check(scenario.expect, replay(scenario).outputs) == [
        'missing emission: {"window": {"start_ms": 0, "end_ms": 10}, "row": {}, '
        '"pane": {"timing": "late"}}',
        "unexpected emission: " + json.dumps(replay(scenario).outputs[0].to_json(),
                                             separators=(", ", ": ")),
    ]


def test_b14_a_pass_through_pane_is_one_emission_per_element() -> None:
    data = {"profile": "beam", "window": {"kind": "fixed", "size": 10},
            "input": [{"ts": 1, "x": "a"}, {"ts": 2, "x": "b"}]}
    out = replay(parse_scenario(data)).outputs
    assert [dict(o.row) for o in out if not isinstance(o, Drop)] == [
        {"ts": 1, "x": "a"}, {"ts": 2, "x": "b"}]
    assert len({pane_of(o) for o in out}) == 1
