"""ekuiper profile rules (E1-E12 in docs/semantics.md) beyond examples/ekuiper-*.yaml.

Timelines: times on the axis (processing time: arrival wall clock), `|` window bounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from windtunnel.oracle import Advance, Aggregation, FixedWindows, InvalidSpec, Query, run
from windtunnel.oracle.model.conditions import parse_condition
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.results import Result
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.profiles.ekuiper.spec import EkuiperWindows, natural_origin_ms
from windtunnel.oracle.scenario import parse_scenario

EKUIPER = profile_named("ekuiper").rules
COUNT = (Aggregation("n", "count"),)
XS = (Aggregation("xs", "collect", "x"),)


def ek_run(window: EkuiperWindows | FixedWindows, items: Sequence[Any], *, rules: Any = EKUIPER,
           **query: Any) -> Result:
    return run(Query(window, aggregate=query.pop("aggregate", COUNT), **query), items,
               profile="ekuiper", rules=rules)


def arrivals(*pairs: tuple[int, dict[str, Any]]) -> list[Event]:
    """Events arriving at wall times (ms) with payloads."""
    return [Event(i, payload, at_ms=at) for i, (at, payload) in enumerate(pairs)]


def stamped(*ts: int, **fields: Any) -> list[Event]:
    return [Event(i, {"ts": t, "x": t, **fields}) for i, t in enumerate(ts)]


def spans(result: Result) -> list[tuple[Any, ...]]:
    return [(e.window.start_ms, e.window.end_ms, e.group, e.row.get("n", e.row.get("xs")))
            for e in result.emissions]


def test_hopping_window_rows_are_split_by_group_by() -> None:
    # HOPPINGWINDOW(ss, 10, 5) GROUP BY ID, processing time; ms on the axis
    #  0     5000   10000  15000
    #  |a  b |  a   |      |      [0,10000): a 2, b 1; [5000,15000): a 1
    items = arrivals((1000, {"ID": "a"}), (2000, {"ID": "b"}), (7000, {"ID": "a"}))
    items.append(Advance(15000))  # type: ignore[arg-type]
    spec = EkuiperWindows("hopping", unit="ms", size_ms=10_000, hop_ms=5000)
    result = ek_run(spec, items, group_by=("ID",))
    assert spans(result) == [
        (-5000, 5000, "a", 1), (-5000, 5000, "b", 1),
        (0, 10000, "a", 2), (0, 10000, "b", 1),
        (5000, 15000, "a", 1),
    ]


def test_event_time_late_test_is_per_record_against_the_watermark() -> None:
    # lateness 2: watermark = max - 2. After 9 the watermark is 7: 6 is late although [0, 10) is
    # still open; 7 (== watermark) is kept.
    spec = EkuiperWindows("tumbling", unit="ms", size_ms=10, on="ts", lateness_ms=2)
    result = ek_run(spec, stamped(1, 9, 6, 7, 12), aggregate=XS)
    # 12 is never reached by the watermark (10): lost at end of input, and reported
    assert [(d.seq, d.reason) for d in result.drops] == [(2, "late"), (4, "end_of_input")]
    assert spans(result) == [(0, 10, None, [1, 7, 9])]  # rows reach the window in time order


def test_where_placement_per_kind_filters_processing_time_windows_first() -> None:
    # a failing row is dropped as `filtered` before windowing (engine), or kept out of the rows
    # only (page): the counts agree, but only the engine's reading reports a drop
    spec = EkuiperWindows("tumbling", unit="ms", size_ms=10,
                          where=parse_condition("x > 1", "where"))
    items = [*arrivals((1, {"x": 1}), (2, {"x": 5})), Advance(10)]
    after = ek_run(spec, items)
    before = ek_run(spec, items, rules=EKUIPER.with_overrides({"where_placement": "per_kind"}))
    assert spans(after) == spans(before) == [(0, 10, None, 1)]
    assert (after.drops, [d.reason for d in before.drops]) == ([], ["filtered"])


def test_empty_windows_are_emitted_unless_skipped() -> None:
    spec = EkuiperWindows("tumbling", unit="ms", size_ms=10)
    items = [*arrivals((1, {})), Advance(30)]
    assert [e.row["n"] for e in ek_run(spec, items).emissions] == [1, 0, 0]
    skipped = ek_run(spec, items, rules=EKUIPER.with_overrides({"empty_windows": "skip"}))
    assert [e.row["n"] for e in skipped.emissions] == [1]


def test_first_window_quirk_of_the_engine_is_an_option() -> None:
    # event time, TUMBLINGWINDOW of 10: the page aligns [0, 10); the engine reports start = 3
    spec = EkuiperWindows("tumbling", unit="ms", size_ms=10, on="ts")
    aligned = ek_run(spec, stamped(3, 12))
    quirk = ek_run(spec, stamped(3, 12), rules=EKUIPER.with_overrides({"first_window":
                                                                       "first_event"}))
    assert spans(aligned) == [(0, 10, None, 1)]
    assert spans(quirk) == [(3, 10, None, 1)]


def test_hopping_windows_before_the_first_events_hop_are_an_engine_option() -> None:
    # event time, HOPPINGWINDOW size 10 hop 5, lateness 10; events 7, 3, 30 (watermark 20)
    #   -5    0    5    10   15   20
    #   |  3  |    |7   |    |    |      all (the page): [-5,5) [0,10) [5,15) [10,20)
    #         |3   |7   |    |    |      from_first_hop: windows start at the hop of 3, 0
    # the watermark stage releases 3 before 7, so 3 is the first event the windows see
    spec = EkuiperWindows("hopping", unit="ms", size_ms=10, hop_ms=5, on="ts", lateness_ms=10)
    items = stamped(7, 3, 30)
    page = ek_run(spec, items)
    engine = ek_run(spec, items, rules=EKUIPER.with_overrides(
        {"hopping_first_windows": "from_first_hop"}))
    assert spans(page) == [(-5, 5, None, 1), (0, 10, None, 2), (5, 15, None, 1), (10, 20, None, 0)]
    assert [(d.seq, d.reason) for d in page.drops] == [(2, "end_of_input")]  # 30 > watermark
    assert spans(engine) == [(0, 10, None, 2), (5, 15, None, 1), (10, 20, None, 0)]
    assert [(d.seq, d.reason) for d in engine.drops] == [(2, "end_of_input")]


def test_count_window_end_as_the_trigger_wall_time_is_an_engine_option() -> None:
    # COUNTWINDOW(2), arrivals at wall 100, 250, 300, 420: triggers at 250 and 420
    spec = EkuiperWindows("count", count=2)
    items = arrivals((100, {}), (250, {}), (300, {}), (420, {}))
    bounds = (*COUNT, Aggregation("we", "window_end"))
    page = ek_run(spec, items, aggregate=bounds)
    engine = ek_run(spec, items, aggregate=bounds,
                    rules=EKUIPER.with_overrides({"count_window_end": "trigger_wall"}))
    assert [e.row["we"] for e in page.emissions] == [None, None]
    assert [(e.window.start_offset, e.window.end_offset, e.row["we"])
            for e in engine.emissions] == [(0, 2, 250), (2, 4, 420)]


def test_nothing_is_flushed_at_end_of_input_unless_asked() -> None:
    spec = EkuiperWindows("tumbling", unit="ms", size_ms=10, on="ts")
    assert ek_run(spec, stamped(3)).emissions == []
    flushed = ek_run(spec, stamped(3), rules=EKUIPER.with_overrides({"end_of_input": "flush"}))
    assert [(e.reason, e.partial) for e in flushed.emissions] == [("end_of_input", True)]


def test_error_events_are_forwarded_and_ignored_by_the_window() -> None:
    spec = EkuiperWindows("count", count=2)
    items = [Event(0, {"x": 1}), Event(1, {"_error": "type mismatch"}), Event(2, {"x": 2})]
    result = ek_run(spec, items, aggregate=XS)
    assert [(d.seq, d.reason) for d in result.drops] == [(1, "error")]
    assert [e.row["xs"] for e in result.emissions] == [[1, 2]]


def test_natural_alignment_uses_the_next_larger_unit_in_the_time_zone() -> None:
    # 2026-01-01T10:07:30+08:00: minute windows align to the local hour, day windows to local
    # midnight (16:00 UTC the day before)
    t = 1767233250000
    assert natural_origin_ms(t, "mi", "Asia/Shanghai") == 1767232800000  # 10:00+08:00
    assert natural_origin_ms(t, "dd", "Asia/Shanghai") == 1767196800000  # 00:00+08:00


# --- sliding ----------------------------------------------------------------------------------


def test_sliding_window_per_event_covers_t_minus_size_to_t_inclusive() -> None:
    #  SLIDINGWINDOW(ms, 10): windows [t-10, t] at each event; 0 is in the window of 10
    spec = EkuiperWindows("sliding", unit="ms", size_ms=10, on="ts")
    result = ek_run(spec, stamped(0, 5, 10, 21), aggregate=XS)
    assert spans(result) == [
        (-10, 0, None, [0]), (-5, 5, None, [0, 5]), (0, 10, None, [0, 5, 10]),
        (11, 21, None, [21]),
    ]


def test_sliding_window_with_delay_and_over_when() -> None:
    # OVER (WHEN x > 4): only 5 and 8 trigger; delay 3 extends each to t + 3 and waits for the
    # clock (the watermark) to reach it: 5 fires when 8 arrives, 8 fires when 11 arrives
    spec = EkuiperWindows("sliding", unit="ms", size_ms=4, delay_ms=3, on="ts",
                          when=parse_condition("x > 4", "when"))
    result = ek_run(spec, stamped(2, 5, 8, 11), aggregate=XS)
    assert spans(result) == [(1, 8, None, [2, 5, 8]), (4, 11, None, [5, 8, 11])]


# --- session ----------------------------------------------------------------------------------


def test_session_splits_on_a_gap_larger_than_the_timeout() -> None:
    # timeout 3: 0 3 (gap 3 = timeout: same session) 7 (gap 4: new); max duration large
    spec = EkuiperWindows("session", unit="ms", timeout_ms=3, max_duration_ms=1000, on="ts")
    result = ek_run(spec, stamped(0, 3, 7, 20), aggregate=XS)
    assert spans(result)[:2] == [(0, 6, None, [0, 3]), (7, 10, None, [7])]


def test_session_maximum_duration_is_checked_only_at_ticks() -> None:
    # max duration 10, ticks at 0, 10, 20, ...; events every 2 from 3 to 23 (timeout 5).
    # tick 10: the session is 7 long: kept. tick 20: 17 >= 10: cut at 20 -> [3, 20); the next
    # session starts at the tick with 21, 23
    spec = EkuiperWindows("session", unit="ms", timeout_ms=5, max_duration_ms=10, on="ts")
    result = ek_run(spec, stamped(3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 40), aggregate=XS)
    assert spans(result)[:2] == [
        (3, 20, None, [3, 5, 7, 9, 11, 13, 15, 17, 19]), (20, 28, None, [21, 23]),
    ]


# --- count ------------------------------------------------------------------------------------


def test_count_window_rejects_an_interval_larger_than_the_count() -> None:
    with pytest.raises(InvalidSpec, match="larger than the count"):
        EkuiperWindows("count", count=3, interval=5)


def test_tumbling_count_window_and_no_partial_at_the_end() -> None:
    result = ek_run(EkuiperWindows("count", count=2), stamped(1, 2, 3), aggregate=XS)
    assert [(e.window.start_offset, e.row["xs"]) for e in result.emissions] == [(0, [1, 2])]


# --- the fixed kind and scenario files --------------------------------------------------------


def test_fixed_kind_runs_as_event_time_tumbling_with_tolerance_as_lateness() -> None:
    items = stamped(1, 9, 6, 12)
    fixed = ek_run(FixedWindows(10, on="ts", tolerance_ms=2), items)
    native = ek_run(EkuiperWindows("tumbling", unit="ms", size_ms=10, on="ts", lateness_ms=2),
                    items)
    assert fixed.outputs == native.outputs


@pytest.mark.parametrize(
    ("window", "field"),
    [
        ({"kind": "ekuiper"}, "window.type"),
        ({"kind": "ekuiper", "type": "tumbling", "unit": "weeks", "size": 1}, "window.unit"),
        ({"kind": "ekuiper", "type": "tumbling", "size": 1, "timezone": "Mars/Base"},
         "window.timezone"),
        ({"kind": "ekuiper", "type": "count", "count": 3, "filter": "x >"}, "window.filter"),
        ({"kind": "ekuiper", "type": "tumbling", "size": 1, "when": "x > 1"}, "window.when"),
        ({"kind": "ekuiper", "type": "session", "timeout": 2}, "window.timeout"),
    ],
)
def test_bad_ekuiper_windows_name_the_field(window: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        parse_scenario({"profile": "ekuiper", "window": window, "input": [{"x": 1}]})
    assert info.value.field == field


@pytest.mark.parametrize(
    ("rule", "value"),
    [("late_test", "window"), ("close_at", "passes"), ("clock_scope", "key"),
     ("clock_moves", "batch"), ("alignment", "epoch_from_zero")],
)
def test_rule_values_the_ekuiper_operators_do_not_implement_are_input_errors(
    rule: str, value: str
) -> None:
    window = EkuiperWindows("tumbling", size_ms=10, on="ts")
    with pytest.raises(InvalidSpec) as info:
        ek_run(window, stamped(1), rules=EKUIPER.with_overrides({rule: value}))
    assert info.value.field == f"rules.{rule}"


def test_hop_larger_than_size_is_accepted_unless_the_rule_rejects_it() -> None:
    #   0   10   20   30      HOPPINGWINDOW(ms, 5, 10): [0, 5) [10, 15) [20, 25); 7 in a gap
    #   laid out by ends (hopping_layout: ends): [-5, 0) [5, 10) [15, 20) [25, 30); 1, 12, 30 in gaps
    window = EkuiperWindows("hopping", unit="ms", size_ms=5, hop_ms=10, on="ts")
    starts = EKUIPER.with_overrides({"hopping_layout": "starts"})
    result = ek_run(window, stamped(1, 7, 12, 30), rules=starts)
    assert [(s, e, n) for s, e, _, n in spans(result)] == [(0, 5, 1), (10, 15, 1), (20, 25, 0)]
    ends = ek_run(window, stamped(1, 7, 12, 30))
    assert [(s, e, n) for s, e, _, n in spans(ends)] == [(5, 10, 1), (15, 20, 0), (25, 30, 0)]
    assert [d.seq for d in ends.drops if d.reason == "no_window"] == [0, 2, 3]
    assert [(d.seq, d.reason) for d in result.drops] == [(1, "no_window"), (3, "end_of_input")]
    with pytest.raises(InvalidSpec) as info:
        ek_run(window, stamped(1),
               rules=EKUIPER.with_overrides({"every_greater_than_size": "reject"}))
    assert info.value.field == "window.hop"


@pytest.mark.parametrize(("gap_rule", "sessions"), [("inclusive", [2]), ("exclusive", [1, 1])])
def test_session_gap_equal_to_the_timeout(gap_rule: str, sessions: list[int]) -> None:
    #   0   2   4 ... 100     events 2 apart, timeout 2: one session (inclusive) or two
    window = EkuiperWindows("session", unit="ms", timeout_ms=2, max_duration_ms=1000, on="ts")
    result = ek_run(window, stamped(0, 2, 100),
                    rules=EKUIPER.with_overrides({"session_gap": gap_rule}))
    assert [e.row["n"] for e in result.emissions] == sessions


@pytest.mark.parametrize(
    ("having", "aggregate"),
    [("avg(x) > 1", COUNT), ("COUNT(*) > 2", None), ("foo(x) > 1", COUNT)],
)
def test_having_a_call_no_aggregation_computes_is_an_input_error(
    having: str, aggregate: Any
) -> None:
    window = EkuiperWindows("count", count=2, having=parse_condition(having, "having"))
    with pytest.raises(InvalidSpec) as info:
        ek_run(window, stamped(1, 2), aggregate=aggregate)
    assert info.value.field == "window.having"
    assert "not a column of this query" in str(info.value)


def test_having_reads_a_call_through_its_aggregation_and_plain_output_columns() -> None:
    window = EkuiperWindows("count", count=2, having=parse_condition("COUNT( * ) >= 2 AND n > 1",
                                                                     "having"))
    result = ek_run(window, stamped(1, 2, 3, 4), aggregate=(Aggregation("n", "count"),))
    assert [e.row["n"] for e in result.emissions] == [2, 2]


def test_every_rule_of_the_ekuiper_profile_cites_a_source() -> None:
    from windtunnel.oracle.model.rules import RULE_VALUES

    profile = profile_named("ekuiper")
    assert set(profile.sources) == set(RULE_VALUES)
    assert all(profile.source(rule).strip() for rule in RULE_VALUES)


def test_sliding_windows_are_closed_at_both_ends_only() -> None:
    window = EkuiperWindows("sliding", unit="ms", size_ms=10, on="ts")
    with pytest.raises(InvalidSpec) as info:
        ek_run(window, stamped(1), rules=EKUIPER.with_overrides({"trailing_ends": "left_open"}))
    assert info.value.field == "rules.trailing_ends"


def test_session_kind_runs_as_sessionwindow_and_needs_a_maximum_duration() -> None:
    from windtunnel.oracle import SessionWindows

    items = stamped(0, 2, 100, 300)
    generic = ek_run(SessionWindows(2, on="ts", max_duration_ms=1000), items)
    native = ek_run(EkuiperWindows("session", unit="ms", timeout_ms=2, max_duration_ms=1000,
                                   on="ts"), items)
    assert generic.outputs == native.outputs
    assert [(e.window.start_ms, e.window.end_ms, e.row["n"]) for e in generic.emissions] == [
        (0, 4, 2), (100, 102, 1)]
    with pytest.raises(InvalidSpec) as info:
        ek_run(SessionWindows(2, on="ts"), items)
    assert info.value.field == "window.max_duration"


def test_count_and_trailing_kinds_run_as_countwindow_and_slidingwindow() -> None:
    from windtunnel.oracle import CountWindows, TrailingWindows

    items = stamped(1, 2, 3, 4, 5, 6)
    assert ek_run(CountWindows(3, every=2), items).outputs == ek_run(
        EkuiperWindows("count", count=3, interval=2), items).outputs
    trailing = ek_run(TrailingWindows(2, on="ts"), items)
    assert trailing.outputs == ek_run(
        EkuiperWindows("sliding", unit="ms", size_ms=2, on="ts"), items).outputs
    assert [e.row["n"] for e in trailing.emissions] == [1, 2, 3, 3, 3, 3]
    with pytest.raises(InvalidSpec) as info:
        ek_run(TrailingWindows(2, on="ts", every_ms=1), items)
    assert info.value.field == "window.every"


def test_events_no_emitted_window_holds_are_reported() -> None:
    # SLIDINGWINDOW(ms, 2) OVER (WHEN x >= 10): 1 does not trigger and no triggered window holds it
    window = EkuiperWindows("sliding", unit="ms", size_ms=2, on="ts",
                            when=parse_condition("x >= 10", "when"))
    result = ek_run(window, stamped(1, 10, 11, 20))
    assert [(e.window.start_ms, e.window.end_ms, e.row["n"]) for e in result.emissions] == [
        (8, 10, 1), (9, 11, 2), (18, 20, 1)]
    assert [(d.seq, d.reason) for d in result.drops] == [(0, "no_window")]


def test_a_record_the_lateness_admits_before_the_first_window_opens_it() -> None:
    #  -1  0      lateness 1: the first record (0) starts the grid at [0, 1); -1 is not late
    #   |-1|0 0 0|  (watermark -1) and gets its own window [-1, 0), emitted when 1 arrives
    window = EkuiperWindows("tumbling", unit="ms", size_ms=1, on="ts", lateness_ms=1)
    result = ek_run(window, stamped(0, 0, -1, 2))
    assert [(e.window.start_ms, e.row["n"]) for e in result.emissions] == [(-1, 1), (0, 2)]
    assert [(d.seq, d.reason) for d in result.drops] == [(3, "end_of_input")]


def test_records_no_sliding_window_held_by_the_end_are_reported() -> None:
    window = EkuiperWindows("sliding", unit="ms", size_ms=1, on="ts",
                            when=parse_condition("x > 100", "when"))
    result = ek_run(window, stamped(0, 0))
    assert not result.emissions
    # the second 0 waits for the watermark to move past 0 (the engine's stage releases records
    # only when the watermark moves forward): it is lost at the end
    assert [(d.seq, d.reason) for d in result.drops] == [(1, "end_of_input"), (0, "no_window")]
