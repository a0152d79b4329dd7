"""kdb profile rules (K1-K14 in docs/semantics.md) beyond the page's examples in examples/kdb-*.yaml.

Timelines: times on the axis, `|` window bounds, `^` the batch's largest timestamp.
"""

from __future__ import annotations

from collections.abc import Sequence
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
from windtunnel.oracle.errors import InvalidInput
from windtunnel.oracle.kdb import KdbTimeWindows
from windtunnel.oracle.kdb_count import KdbCountWindows, KdbGlobalWindows, KdbTimerWindows
from windtunnel.oracle.results import Result
from windtunnel.oracle.stream import Event, numbered

KDB = profile_named("kdb").rules
VALS = (Aggregation("vals", "collect", "t"),)


def kdb_run(window: Any, items: Sequence[Any], *, rules: Any = KDB, **query: Any) -> Result:
    return run(Query(window, aggregate=query.pop("aggregate", VALS), **query), items,
               profile="kdb", rules=rules)


def windows(result: Result) -> list[tuple[Any, Any, Any, str]]:
    return [(e.window.start_ms, e.window.end_ms, e.row.get("vals"), e.reason)
            for e in result.emissions]


def times(*ts: int, **fields: Any) -> tuple[Event, ...]:
    return numbered({"t": t, **fields} for t in ts)


def batches(*groups: Sequence[int]) -> list[Batch]:
    """One Batch per group of times, seq numbered across them."""
    events = iter(times(*(t for g in groups for t in g)))
    return [Batch(tuple(next(events) for _ in g)) for g in groups]


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


def scenario(window: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"profile": "kdb", "window": window, "input": [{"t": 1}], **extra}


@pytest.mark.parametrize(
    ("window", "field"),
    [
        ({"kind": "kdb_global", "trigger": {"split_after": "x"}}, "window.trigger"),
        ({"kind": "kdb_global", "trigger": {"high_water_mark": "v"}, "state": "a"}, "window.state"),
        ({"kind": "kdb_tumbling", "period": "10s", "sort": "yes"}, "window.sort"),
        ({"kind": "kdb_sliding", "period": "10s"}, "window.duration"),
        ({"kind": "kdb_count"}, "window.size"),
        ({"kind": "kdb_count", "size": 0}, "window.size"),
        ({"kind": "kdb_timer", "period": "5s", "count_trigger": 1.5}, "window.count_trigger"),
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
     ("clock_floor", "epoch"), ("alignment", "epoch_from_zero"), ("close_order", "opened")],
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
