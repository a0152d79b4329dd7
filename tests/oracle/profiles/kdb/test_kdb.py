"""kdb profile rules (K1-K14 in docs/semantics.md) beyond the page's examples in examples/kdb-*.yaml.

Timelines: times on the axis, `|` window bounds, `^` the batch's largest timestamp.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from windtunnel.oracle import (
    Advance,
    Aggregation,
    Batch,
    FixedWindows,
    InvalidSpec,
    Query,
    parse_scenario,
    profile_named,
    replay,
    run,
)
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.profiles.kdb.spec import (
    KdbCountWindows,
    KdbGlobalWindows,
    KdbTimerWindows,
    KdbTimeWindows,
)
from windtunnel.oracle.scenario import load_yaml

from .kdb_helpers import KDB, VALS, batches, kdb_run, scenario, times, windows

EXAMPLES = Path(__file__).resolve().parents[4] / "examples"


def test_period_longer_than_duration_is_rejected() -> None:
    with pytest.raises(InvalidSpec, match="hopping windows are currently not supported"):
        KdbTimeWindows(period_ms=10, duration_ms=5)
    with pytest.raises(InvalidSpec, match=r"window\.every"):
        run(Query(FixedWindows(5, every_ms=10, on="t"), aggregate=VALS), times(1), profile="kdb",
            rules=KDB)


def test_sliding_windows_overlap_and_each_holds_its_records() -> None:
    # period 5, duration 10: the first window is the earliest holding 1: [-5, 5)
    #   [-5,5) [0,10) [5,15) [10,20);  1 6 12 ^ 25 triggers all four
    result = kdb_run(KdbTimeWindows(5, 10, on="t"), [Batch(times(1, 6, 12, 25))])
    assert windows(result)[:4] == [
        (-5, 5, [1], "close"), (0, 10, [1, 6], "close"), (5, 15, [6, 12], "close"), (10, 20, [12], "close"),
    ]


def test_empty_windows_are_emitted_unless_skipped() -> None:
    #  0    10    20    30
    #  |1   |     |     |35 triggers [0,10) [10,20) [20,30)
    items = batches([1], [35])
    emitted = windows(kdb_run(KdbTimeWindows(10, on="t"), items))
    assert emitted[:3] == [(0, 10, [1], "close"), (10, 20, [], "close"), (20, 30, [], "close")]
    skipped = windows(kdb_run(KdbTimeWindows(10, on="t", skip_empty_windows=True), items))
    assert skipped == [(0, 10, [1], "close"), (30, 40, [35], "end_of_input")]


@pytest.mark.parametrize(
    ("reading", "spans", "dropped"),
    [
        ("all", [(0, 10, [7, 3]), (5, 15, [7])], []),
        ("from_first_hop", [(5, 15, [7])], [1]),
    ],
)
def test_where_the_first_sliding_window_starts_is_an_option(
    reading: str, spans: list[Any], dropped: list[int]
) -> None:
    # sliding, period 5, duration 10; batches [7] [3] [30]
    #   0    5    10   15
    #   |  3 | 7  |    |      all (K2's reading): [0,10) holds 7, so 3 joins it
    #        | 7  |    |      from_first_hop: the first window starts at 7's period, 5; 3 in none
    result = kdb_run(KdbTimeWindows(5, 10, on="t"), batches([7], [3], [30]),
                     rules=KDB.with_overrides({"hopping_first_windows": reading}))
    assert [w[:3] for w in windows(result)][: len(spans)] == spans
    assert [d.seq for d in result.drops] == dropped
    assert all(d.reason == "no_window" for d in result.drops)


@pytest.mark.parametrize(
    ("elapsed", "timer_walls"),
    [("reaches", [5_000, 10_000, 15_000, 25_000]), ("passes", [10_000, 25_000])],
)
def test_the_idle_timers_exceeds_can_be_read_strictly(elapsed: str, timer_walls: list[int]) -> None:
    # examples/kdb-idle-timer.yaml: ticks every 5 s; "exceeds the period" as >= emits at ticks
    # 5, 10, 15 and 25 (20 is 4 s after the close at 16); as > a tick exactly one period after
    # the last emission waits: 5 (5 s after the start), 15 (5 s after 10) emit nothing
    data = load_yaml((EXAMPLES / "kdb-idle-timer.yaml").read_text())
    data["rules"] = {"idle_timer_elapsed": elapsed}
    result = replay(parse_scenario(data))
    assert [e.wall_ms for e in result.emissions if e.reason == "timer"] == timer_walls


def test_close_at_passes_is_the_alternative_reading_of_exceeds() -> None:
    # "exceeds the sum of the start time, the window duration, and the lateness": 12 does not
    # exceed 0 + 10 + 2, so [0, 10) stays open and the 9 is kept
    items = times(0, 4, 12, 9, 25)
    result = kdb_run(KdbTimeWindows(10, on="t", lateness_ms=2),
                     items, rules=KDB.with_overrides({"close_at": "passes"}))
    assert windows(result)[0] == (0, 10, [0, 4, 9], "close")
    assert result.drops == []


def test_clock_moves_event_triggers_inside_a_batch() -> None:
    # one batch, evaluated record by record: 12 closes [0, 10) before the 9 arrives
    items = [Batch(times(0, 4, 12, 9))]
    result = kdb_run(KdbTimeWindows(10, on="t", lateness_ms=2), items,
                     rules=KDB.with_overrides({"clock_moves": "event"}))
    assert [d.seq for d in result.drops] == [3]
    assert [d.seq for d in kdb_run(KdbTimeWindows(10, on="t", lateness_ms=2), items).drops] == []


def test_one_clock_per_stream_triggers_every_key() -> None:
    # key a at 1, key b at 12: b's timestamp triggers a's window [0, 10)
    items = [Event(0, {"t": 1, "k": "a"}), Event(1, {"t": 12, "k": "b"})]
    result = kdb_run(KdbTimeWindows(10, on="t", skip_empty_windows=True), items, group_by=("k",))
    assert (result.emissions[0].group, result.emissions[0].reason) == ("a", "close")
    per_key = kdb_run(KdbTimeWindows(10, on="t"), items, group_by=("k",),
                      rules=KDB.with_overrides({"clock_scope": "key"}))
    assert [(e.group, e.reason) for e in per_key.emissions] == [
        ("a", "end_of_input"), ("b", "end_of_input"),
    ]


def test_count_trigger_counts_records_per_key() -> None:
    # countTrigger 2: key a reaches it, key b does not
    items = [Batch((Event(0, {"t": 1, "k": "a"}), Event(1, {"t": 2, "k": "a"}),
                    Event(2, {"t": 3, "k": "b"})))]
    result = kdb_run(KdbTimeWindows(10, on="t", count_trigger=2), items, group_by=("k",))
    assert [(e.group, e.reason, e.partial) for e in result.emissions] == [
        ("a", "count", True), ("b", "end_of_input", True),
    ]


def test_fixed_kind_runs_as_sliding_with_tolerance_as_lateness() -> None:
    items = times(0, 4, 12, 9, 25)
    fixed = kdb_run(FixedWindows(10, on="t", tolerance_ms=2), items)
    native = kdb_run(KdbTimeWindows(10, 10, on="t", lateness_ms=2), items)
    assert fixed.outputs == native.outputs
    with pytest.raises(InvalidSpec, match="idle_timeout"):
        kdb_run(FixedWindows(10, on="t", idle_timeout_ms=5), items)


def test_pass_through_emits_one_row_per_record_and_marks_empty_windows() -> None:
    result = kdb_run(KdbTimeWindows(10, on="t"), batches([1, 2], [25]), aggregate=None)
    assert [(e.window.start_ms, dict(e.row)) for e in result.emissions][:3] == [
        (0, {"t": 1}), (0, {"t": 2}), (10, {"_empty": True}),
    ]


# --- count windows ---------------------------------------------------------------------------


def test_count_windows_with_frequency_overlap_and_flush_partials_on_teardown() -> None:
    # size 4, frequency 2: offsets [0,4) [2,6) [4,8) ... ; 7 records -> two complete windows,
    # then teardown: [4,7) and [6,7)
    items = [Batch(times(*range(7)))]
    result = kdb_run(KdbCountWindows(4, 2), items)
    assert [(e.window.start_offset, e.window.end_offset, e.row["vals"], e.reason, e.partial)
            for e in result.emissions] == [
        (0, 4, [0, 1, 2, 3], "count", False),
        (2, 6, [2, 3, 4, 5], "count", False),
        (4, 7, [4, 5, 6], "end_of_input", True),
        (6, 7, [6], "end_of_input", True),
    ]


def test_count_windows_wait_for_the_batch() -> None:
    # one batch of 3 with size 2: one window at the batch's end, 1 record left over
    result = kdb_run(KdbCountWindows(2), [Batch(times(1, 2, 3))],
                     rules=KDB.with_overrides({"end_of_input": "discard"}))
    assert [(e.row["vals"], e.after_seq) for e in result.emissions] == [([1, 2], 2)]


# --- global windows ---------------------------------------------------------------------------


def test_global_trigger_gets_buffer_offset_data_and_state() -> None:
    calls: list[tuple[int, int, int, Any]] = []

    def every_third(buffer: Sequence[Any], offset: int, data: Sequence[Any],
                    state: Any) -> tuple[list[int], Any]:
        calls.append((len(buffer), offset, len(data), state))
        seen = state + len(data)
        return ([len(buffer)] if seen >= 3 else []), (0 if seen >= 3 else seen)

    items = batches([1, 2], [3, 4])
    result = kdb_run(KdbGlobalWindows(every_third, state=0), items)
    assert calls == [(2, 0, 2, 0), (4, 2, 2, 2)]
    assert [(e.window.start_offset, e.window.end_offset, e.row["vals"]) for e in
            result.emissions] == [(0, 4, [1, 2, 3, 4])]


def test_global_trigger_index_outside_the_buffer_is_an_input_error() -> None:
    def bad(buffer: Sequence[Any], offset: int, data: Sequence[Any], state: Any) -> tuple[
            list[int], Any]:
        return [len(buffer) + 1], state

    with pytest.raises(InvalidInput, match="outside the buffer"):
        kdb_run(KdbGlobalWindows(bad), times(1))


# --- timer windows ----------------------------------------------------------------------------


def test_timer_emits_nothing_before_the_first_record_and_schema_rows_when_empty() -> None:
    #  wall: 0    5    10   15
    #        tick tick tick     record at 6; ticks at 5 (nothing yet), 10 (record), 15 (empty)
    items = [Advance(5), Event(0, {"a": 1, "b": 2}, at_ms=6), Advance(15)]
    result = kdb_run(KdbTimerWindows(5), items, aggregate=None)
    assert [(e.window.start_ms, e.window.end_ms, dict(e.row), e.reason) for e in
            result.emissions] == [
        (5, 10, {"a": 1, "b": 2}, "timer"),
        (10, 15, {"a": None, "b": None, "_empty": True}, "timer"),
    ]
    skipping = kdb_run(KdbTimerWindows(5, skip_empty_windows=True), items, aggregate=None)
    assert len(skipping.emissions) == 1


# --- scenario files ---------------------------------------------------------------------------




@pytest.mark.parametrize(
    ("window", "field"),
    [
        ({"kind": "kdb_global", "trigger": {"split_after": "x"}}, "window.trigger"),
        ({"kind": "kdb_global", "trigger": {"high_water_mark": "v"}, "state": "a"}, "window.state"),
        ({"kind": "kdb_global", "trigger": {"high_water_mark": {"field": "v", "new_high": "x"}}},
         "window.trigger.high_water_mark.new_high"),
        ({"kind": "kdb_tumbling", "period": "10s", "sort": "yes"}, "window.sort"),
        ({"kind": "kdb_sliding", "period": "10s"}, "window.duration"),
        ({"kind": "kdb_count"}, "window.size"),
        ({"kind": "kdb_count", "size": 0}, "window.size"),
        ({"kind": "kdb_timer", "period": "5s", "count_trigger": 1.5}, "window.count_trigger"),
        ({"kind": "kdb_global", "trigger": {"high_water_mark": "v"}, "accept_dictionaries": 0},
         "window.accept_dictionaries"),
        ({"kind": "kdb_count", "size": 2, "accept_dictionaries": "no"},
         "window.accept_dictionaries"),
    ],
)
def test_bad_kdb_windows_name_the_field(window: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        parse_scenario(scenario(window))
    assert info.value.field == field


def test_kdb_kinds_need_the_kdb_profile() -> None:
    data = scenario({"kind": "kdb_count", "size": 2})
    data["profile"] = "tenzir"
    with pytest.raises(InvalidSpec, match="not supported by profile tenzir"):
        replay(parse_scenario(data))


@pytest.mark.parametrize(
    ("rule", "value"),
    [("close_at", "max_timestamp"), ("late_test", "record"), ("clock_moves", "batch"),
     ("clock_floor", "epoch"), ("alignment", "epoch_from_zero"), ("close_order", "opened"),
     ("every_greater_than_size", "accept")],
)
def test_rule_values_the_kdb_operator_does_not_implement_are_input_errors(
    rule: str, value: str
) -> None:
    with pytest.raises(InvalidSpec) as info:
        kdb_run(KdbTimeWindows(10), times(1), rules=KDB.with_overrides({rule: value}))
    assert info.value.field == f"rules.{rule}"
    assert "not implemented for kdb" in str(info.value)


def test_timer_honours_the_empty_windows_rule() -> None:
    # wall 0    5    10: one record at 1, the tick at 10 finds the buffer empty
    items = [Event(0, {"t": 0}, at_ms=1), Advance(10)]
    spec = KdbTimerWindows(5)
    emit = kdb_run(spec, items, aggregate=(Aggregation("n", "count"),))
    skip = kdb_run(spec, items, aggregate=(Aggregation("n", "count"),),
                   rules=KDB.with_overrides({"empty_windows": "skip"}))
    assert [e.row["n"] for e in emit.emissions] == [1, 0]
    assert [e.row["n"] for e in skip.emissions] == [1]


@pytest.mark.parametrize(
    ("close", "expected", "kept_in_window"),
    [
        # "With passthrough enabled, windows are emitted as soon as they end": 11 triggers
        # [0, 10) although lateness is 5; the 3 is then late, held and passed through first
        ("end", [(0, 10, [1], "close"), (0, 10, [3], "late_passthrough"),
                 (10, 20, [11], "close")], False),
        # rule passthrough_close: lateness: still at end + lateness (11 < 15), so the 3 is on time
        ("lateness", [(0, 10, [1, 3], "close"), (10, 20, [11], "close")], True),
    ],
)
def test_passthrough_triggers_at_the_window_end_unless_the_rule_keeps_lateness(
    close: str, expected: list[Any], kept_in_window: bool
) -> None:
    #   0    10    20    30
    #   |1 3 |11   |   25|      lateness 5; one record per batch
    result = kdb_run(KdbTimeWindows(10, on="t", lateness_ms=5, passthrough=True),
                     times(1, 11, 3, 25),
                     rules=KDB.with_overrides({"passthrough_close": close}))
    assert windows(result)[: len(expected)] == expected
    assert result.drops == []


def test_count_trigger_cleans_up_late_data_with_passthrough() -> None:
    # "A window will automatically be triggered when the number of buffered records exceeds a
    # given threshold. This also triggers a cleanup of any late data."  countTrigger 3:
    #   batch 1: 20 21 (window [20, 30))   batch 2: 1 2 3, late: held (2 + 3 >= 3)
    # the held records go out at once as the late batch; the window keeps its 2 (< 3) records
    result = kdb_run(KdbTimeWindows(10, on="t", passthrough=True, count_trigger=3),
                     batches([20, 21], [1, 2, 3]))
    assert windows(result) == [
        (0, 10, [1, 2, 3], "late_passthrough"), (20, 30, [20, 21], "end_of_input"),
    ]
    assert result.emissions[0].after_seq == 4


def test_sliding_page_example_history_then_recent_data() -> None:
    # .qsp.window.sliding[00:00:05; 00:00:10; `time], now N = 7200 s, wall clock from 0:
    #   wall 0: "Five minutes of historical data from an hour ago": N - 3600 + 0..299 s
    #   wall 1: "Data from one minute ago": 10 records at N - 60
    # The first batch triggers, by its largest time N - 3301, every window ending at or before
    # it: starts N - 3605 .. N - 3315 (59 windows; the first holds records 0..4). The page
    # counts "60 windows" (300 s / 5 s); its timer is not needed here because the batch itself
    # holds timestamps past those windows' ends.
    s = 1000
    n = 7200 * s
    history = [Event(i, {"time": n - 3600 * s + i * s}, at_ms=0) for i in range(300)]
    recent = [Event(300 + i, {"time": n - 60 * s}, at_ms=1 * s) for i in range(10)]
    items = [Batch(tuple(history)), Batch(tuple(recent)), Advance(10 * s)]
    result = kdb_run(KdbTimeWindows(5 * s, 10 * s, on="time"), items,
                     aggregate=(Aggregation("n", "count"),))
    first = [e for e in result.emissions if e.after_seq == 299]
    assert [e.window.start_ms for e in first] == list(range(n - 3605 * s, n - 3310 * s, 5 * s))
    assert [e.row["n"] for e in first] == [5] + [10] * 58
    # the recent batch triggers the two windows still holding history, then the empty ones
    second = [e for e in result.emissions if e.after_seq == 309 and e.reason == "close"]
    assert [(e.window.start_ms, e.row["n"]) for e in second[:2]] == [
        (n - 3310 * s, 10), (n - 3305 * s, 5)]
    assert {e.row["n"] for e in second[2:]} == {0}
    assert second[-1].window.start_ms == n - 70 * s
    # "This will be emitted as a single window when the timer fires": the tick at wall 10 s
    # (more than a period after the last emission at wall 1 s) emits the current window, partial
    timer = [e for e in result.emissions if e.reason == "timer"]
    assert [(e.window.start_ms, e.row["n"], e.wall_ms, e.partial) for e in timer] == [
        (n - 65 * s, 10, 10 * s, True)]


def test_window_start_times_are_the_windows_metadata() -> None:
    # "Window start times are included in the metadata for windowed batches as window":
    # sliding[00:00:02; 00:00:05] over 200 records 0.1 s apart from 0: each window reports its
    # start, a multiple of the 2 s period, and holds the 50 records of its 5 s
    items = [Batch(tuple(Event(i, {"t": i * 100, "val": i}) for i in range(200)))]
    result = kdb_run(KdbTimeWindows(2_000, 5_000, on="t"), items,
                     aggregate=(Aggregation("n", "count"), Aggregation("start", "window_start")))
    closed = [e for e in result.emissions if e.reason == "close"]
    assert [e.window.start_ms for e in closed] == list(range(-4_000, 14_001, 2_000))
    assert [e.row["start"] for e in closed] == [e.window.start_ms for e in closed]
    assert [e.row["n"] for e in closed if e.window.start_ms >= 0] == [50] * 8


def test_every_rule_of_the_kdb_profile_cites_a_source() -> None:
    from windtunnel.oracle.model.rules import RULE_VALUES

    profile = profile_named("kdb")
    assert set(profile.sources) == set(RULE_VALUES)
    assert all(profile.source(rule).strip() for rule in RULE_VALUES)


@pytest.mark.parametrize(
    ("new_high", "windows_"),
    [
        # the page's q code (offset + 1 + ...): a new high is the last record of its window
        ("ends", [[0, 1, 5, 14, 15, 16], [17], [18], [16, 17, 16]]),
        # its comment, "causing everything before it to be emitted": a new high starts one
        ("starts", [[0, 1, 5, 14, 15], [16], [17], [18, 16, 17, 16]]),
    ],
)
def test_high_water_mark_new_high_ends_or_starts_a_window(
    new_high: str, windows_: list[list[int]]
) -> None:
    scenario = parse_scenario({
        "profile": "kdb",
        "window": {"kind": "kdb_global", "state": 15,
                   "trigger": {"high_water_mark": {"field": "val", "new_high": new_high}}},
        "aggregate": {"vals": "collect(val)"},
        "input": [{"batch": [{"val": v} for v in batch]}
                  for batch in ([0, 1, 5], [14, 15, 16], [17, 18], [16, 17, 16])],
    })
    assert [e.row["vals"] for e in replay(scenario).emissions] == windows_


def test_teardown_can_discard_instead_of_emitting_partial_windows() -> None:
    items = batches([1], [12])
    flushed = kdb_run(KdbTimeWindows(10, on="t"), items)
    assert windows(flushed) == [(0, 10, [1], "close"), (10, 20, [12], "end_of_input")]
    discarded = kdb_run(KdbTimeWindows(10, on="t"), items,
                        rules=KDB.with_overrides({"end_of_input": "discard"}))
    assert windows(discarded) == [(0, 10, [1], "close")]


def test_count_kind_runs_as_kdb_count_and_gap_records_are_reported() -> None:
    from windtunnel.oracle import CountWindows

    items = batches([1, 2, 3, 4, 5])
    counts = (Aggregation("n", "count"),)
    generic = kdb_run(CountWindows(2, every=2), items, aggregate=counts)
    native = kdb_run(KdbCountWindows(2, 2), items, aggregate=counts)
    assert generic.outputs == native.outputs
    # frequency 3 > size 2: offsets 0 1 | 2 | 3 4 -- the record at offset 2 is in no window
    gapped = kdb_run(KdbCountWindows(2, 3), items, aggregate=counts)
    assert [(e.window.start_offset, e.window.end_offset) for e in gapped.emissions] == [
        (0, 2), (3, 5)]
    assert [(d.seq, d.reason) for d in gapped.drops] == [(2, "no_window")]


def test_explain_finds_the_windows_a_buffered_kdb_window_emitted_an_event_in() -> None:
    from pathlib import Path

    from windtunnel.oracle import load_scenario
    from windtunnel.oracle.explain import explain

    examples = Path(__file__).resolve().parents[4] / "examples"
    # kdb-passthrough.yaml: seq 1 (68 s) is in [60, 70); seq 4 (15 s) is late, in the held batch
    scenario = load_scenario(examples / "kdb-passthrough.yaml")
    on_time, late = explain(scenario, 1), explain(scenario, 4)
    assert [(w.start_ms, w.end_ms) for w in on_time.delivered_to] == [(60_000, 70_000)]
    assert [e.reason for e in on_time.emissions] == ["close"]
    assert [e.reason for e in late.emissions] == ["late_passthrough"]
    assert on_time.drop is None and late.drop is None
