"""timeplus profile rules (TP1-TP10 in docs/semantics.md) beyond examples/timeplus-*.yaml.

Timelines: event times on the axis, `|` window bounds; `B1`, `B2` mark inserted batches.
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
    profile_named,
    replay,
    run,
)
from windtunnel.oracle.model.results import Result
from windtunnel.oracle.model.spec import NOW
from windtunnel.oracle.model.stream import Event, numbered
from windtunnel.oracle.profiles.timeplus.spec import EmitPolicy, TimeplusWindows, parse_emit
from windtunnel.oracle.scenario import load_yaml, parse_scenario

TIMEPLUS = profile_named("timeplus").rules
COUNT = (Aggregation("n", "count"),)


def tp_run(window: Any, items: Sequence[Any], *, rules: Any = TIMEPLUS, **query: Any) -> Result:
    return run(Query(window, aggregate=query.pop("aggregate", COUNT), **query), items,
               profile="timeplus", rules=rules)


def summary(result: Result) -> list[tuple[Any, ...]]:
    return [(e.window.start_ms, e.window.end_ms, e.row.get("n"), e.reason) for e in
            result.emissions]


def times(*ts: int) -> tuple[Event, ...]:
    return numbered({"t": t} for t in ts)


def batches(*groups: Sequence[int]) -> list[Batch]:
    events = iter(times(*(t for g in groups for t in g)))
    return [Batch(tuple(next(events) for _ in g)) for g in groups]


def tumble(size: int, **kw: Any) -> TimeplusWindows:
    return TimeplusWindows("tumble", size, on="t", **kw)


@pytest.mark.parametrize(
    ("text", "policy"),
    [
        ("EMIT AFTER WINDOW CLOSE", EmitPolicy()),
        ("after window close with delay 2s", EmitPolicy(delay_ms=2000)),
        ("EMIT TIMEOUT 3s", EmitPolicy(timeout_ms=3000)),
        ("EMIT ON UPDATE", EmitPolicy("update")),
        ("EMIT ON UPDATE WITH BATCH 1s", EmitPolicy("update", batch_ms=1000)),
        ("EMIT ON UPDATE WITH DELAY 2s;", EmitPolicy("update", delay_ms=2000)),
        ("EMIT AFTER WINDOW CLOSE WITH DELAY 1m", EmitPolicy(delay_ms=60_000)),
    ],
)
def test_every_emit_policy_of_the_page_parses(text: str, policy: EmitPolicy) -> None:
    assert parse_emit(text) == policy


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("EMIT PERIODIC 2s", "use AFTER WINDOW CLOSE"),
        ("ON UPDATE WITH BATCH", "use AFTER WINDOW CLOSE"),
        ("EMIT TIMEOUT soon", "not a Timeplus interval"),
    ],
)
def test_bad_emit_policies_say_what_is_supported(text: str, message: str) -> None:
    with pytest.raises(InvalidSpec, match=message):
        parse_emit(text)


def test_hop_larger_than_size_is_rejected() -> None:
    with pytest.raises(InvalidSpec, match="takes the hop first"):
        TimeplusWindows("hop", 5000, hop_ms=10_000)


def test_hop_windows_overlap() -> None:
    #  hop 5, size 10:  [0,10) [5,15)   7 is in both; B2's 20 closes both
    result = tp_run(TimeplusWindows("hop", 10, on="t", hop_ms=5), batches([7], [20]))
    assert summary(result) == [(0, 10, 1, "close"), (5, 15, 1, "close")]


def test_records_of_one_batch_are_never_late_to_each_other() -> None:
    #  0    5    10        one batch: 12 then 3; a per-event clock would close [0, 5) first
    result = tp_run(tumble(5), batches([12, 3], [30]))
    assert result.drops == []
    assert summary(result)[0] == (0, 5, 1, "close")


def test_the_watermark_belongs_to_the_stream() -> None:
    # device b's 12 closes device a's [0, 5)
    items = [Event(0, {"t": 1, "d": "a"}), Event(1, {"t": 12, "d": "b"})]
    result = tp_run(tumble(5), items, group_by=("d",))
    assert [(e.group, e.window.start_ms) for e in result.emissions] == [("a", 0)]


def test_close_with_delay_includes_equality() -> None:
    # delay 2: max 7 -> 7 - 2 >= 5 closes [0, 5)
    result = tp_run(tumble(5, emit=EmitPolicy(delay_ms=2)), batches([1], [7]))
    assert summary(result) == [(0, 5, 1, "close")]


def test_emit_timeout_most_recent_window_versus_all() -> None:
    # hop 5 / size 10, one event at 7 (wall 0): windows [0,10) and [5,15) open; 3 ms of silence.
    # latest (the page): [5, 15) is force-closed; the watermark moves to 15 and closes [0, 10).
    # all (the engine): both are force-closed.
    spec = TimeplusWindows("hop", 10, on="t", hop_ms=5, emit=EmitPolicy(timeout_ms=3))
    items = [Event(0, {"t": 7}, at_ms=0), Advance(3)]
    latest = tp_run(spec, items)
    assert [(e.window.start_ms, e.reason) for e in latest.emissions] == [
        (5, "idle_timeout"), (0, "close"),
    ]
    flush_all = tp_run(spec, items, rules=TIMEPLUS.with_overrides({"timeout_closes": "all"}))
    assert [(e.window.start_ms, e.reason) for e in flush_all.emissions] == [
        (0, "idle_timeout"), (5, "idle_timeout"),
    ]


def test_nothing_is_flushed_at_end_of_input_unless_asked() -> None:
    assert tp_run(tumble(5), times(1)).emissions == []
    flushed = tp_run(tumble(5), times(1), rules=TIMEPLUS.with_overrides({"end_of_input": "flush"}))
    assert summary(flushed) == [(0, 5, 1, "end_of_input")]


def test_processing_time_windows_use_the_arrival_wall_clock() -> None:
    items = [Event(0, {}, at_ms=1), Event(1, {}, at_ms=4), Event(2, {}, at_ms=6)]
    result = tp_run(TimeplusWindows("tumble", 5, on=NOW), items)
    assert summary(result) == [(0, 5, 2, "close")]


def test_on_update_needs_an_aggregation() -> None:
    with pytest.raises(InvalidSpec, match="EMIT ON UPDATE needs an aggregation"):
        tp_run(tumble(5, emit=EmitPolicy("update")), times(1), aggregate=None)


def test_fixed_kind_runs_as_tumble_with_tolerance_as_delay() -> None:
    items = batches([1], [6], [3], [8])
    fixed = tp_run(FixedWindows(5, on="t", tolerance_ms=2), items)
    native = tp_run(tumble(5, emit=EmitPolicy(delay_ms=2)), items)
    assert fixed.outputs == native.outputs
    assert summary(fixed) == [(0, 5, 2, "close")]


# --- sessions ---------------------------------------------------------------------------------


def test_session_gap_equal_to_the_timeout_splits() -> None:
    #  0  3     8          20      timeout 5: 3 -> 8 is exactly 5: a new session (engine fact)
    #  [0, 8)   [8, 13)            20 closes both
    result = tp_run(TimeplusWindows("session", 5, on="t"), batches([0, 3], [8], [20]))
    assert summary(result) == [(0, 8, 2, "close"), (8, 13, 1, "close")]
    inclusive = tp_run(TimeplusWindows("session", 5, on="t"), batches([0, 3], [8], [20]),
                       rules=TIMEPLUS.with_overrides({"session_gap": "inclusive"}))
    assert summary(inclusive) == [(0, 13, 3, "close")]


def test_session_max_size_caps_the_session() -> None:
    #  max_size 6: 0 2 4 are one session; 7 - 0 >= 6 starts a new one; ends start + max_size
    result = tp_run(TimeplusWindows("session", 5, on="t", max_size_ms=6), batches([0, 2, 4, 7],
                                                                                   [30]))
    assert summary(result) == [(0, 6, 3, "close"), (7, 12, 1, "close")]


def test_an_event_bridging_two_sessions_merges_them() -> None:
    #  0       8      one batch: 4 bridges [0, 5) and [8, 13) (timeout 5): one session [0, 13)
    result = tp_run(TimeplusWindows("session", 5, on="t"), batches([0, 8, 4], [40]),
                    aggregate=(Aggregation("n", "count"), Aggregation("ts", "collect", "t")))
    assert [(e.window.start_ms, e.window.end_ms, e.row["ts"]) for e in result.emissions] == [
        (0, 13, [0, 8, 4])
    ]


def test_open_sessions_report_max_ts_plus_one_on_update() -> None:
    result = tp_run(TimeplusWindows("session", 5, on="t", emit=EmitPolicy("update")),
                    batches([0, 3]))
    assert summary(result) == [(0, 4, 2, "update")]


@pytest.mark.parametrize(
    ("rule", "value"),
    [("close_at", "passes"), ("late_test", "record"), ("clock_moves", "batch"),
     ("empty_windows", "emit"), ("alignment", "epoch_from_zero"),
     ("idle_closed_window", "reopen")],
)
def test_rule_values_the_timeplus_operator_does_not_implement_are_input_errors(
    rule: str, value: str
) -> None:
    with pytest.raises(InvalidSpec) as info:
        tp_run(tumble(10), times(1), rules=TIMEPLUS.with_overrides({rule: value}))
    assert info.value.field == f"rules.{rule}"


def test_session_rules_must_match_timeplus_sessions() -> None:
    with pytest.raises(InvalidSpec) as info:
        tp_run(TimeplusWindows("session", 5, on="t"), times(1),
               rules=TIMEPLUS.with_overrides({"session_ends": "events"}))
    assert info.value.field == "rules.session_ends"


def test_clock_moves_event_makes_every_record_its_own_insert() -> None:
    #   0    10   20      one batch [12, 3]: per batch (the profile) the 3 is not late;
    #   |  3 | 12 |       per event the 12 closes [0, 10) first and the 3 is dropped
    items = batches([1], [12, 3])
    per_batch = tp_run(tumble(10), items)
    per_event = tp_run(tumble(10), items, rules=TIMEPLUS.with_overrides({"clock_moves": "event"}))
    assert summary(per_batch) == [(0, 10, 2, "close")]
    assert summary(per_event) == [(0, 10, 1, "close")]
    assert [(d.seq, d.reason) for d in per_event.drops] == [(2, "late")]


def test_every_rule_of_the_timeplus_profile_cites_a_source() -> None:
    from windtunnel.oracle.model.rules import RULE_VALUES

    profile = profile_named("timeplus")
    assert set(profile.sources) == set(RULE_VALUES)
    assert all(profile.source(rule).strip() for rule in RULE_VALUES)


def test_processing_time_windows_close_when_the_wall_clock_reaches_their_end() -> None:
    # tumble(s, now(), 5ms): arrivals at wall 1 and 2; the wall clock alone moves to 12:
    #   [0, 5) closes at wall 5 and nothing else is open (no event after it)
    items = [Event(0, {}, at_ms=1), Event(1, {}, at_ms=2), Advance(12)]
    result = tp_run(TimeplusWindows("tumble", 5, on=NOW), items)
    assert [(e.window.start_ms, e.row["n"], e.wall_ms, e.after_seq) for e in result.emissions] == [
        (0, 2, 5, 1)]
    delayed = tp_run(TimeplusWindows("tumble", 5, on=NOW, emit=EmitPolicy(delay_ms=2)),
                     [*items[:2], Advance(6)])
    assert list(delayed.emissions) == []


def test_a_late_event_still_goes_to_its_open_hop_windows() -> None:
    #  hop 5, size 10:  B1: 1   B2: 11 (closes [0, 10))   B3: 7, in [0, 10) closed and [5, 15) open
    #  B4: 30 closes the rest; the 7 is counted in [5, 15) and not dropped
    result = tp_run(TimeplusWindows("hop", 10, on="t", hop_ms=5), batches([1], [11], [7], [30]))
    assert summary(result) == [(-5, 5, 1, "close"), (0, 10, 1, "close"), (5, 15, 2, "close"),
                               (10, 20, 1, "close")]
    assert result.drops == []
    # the 2 at B3 has only closed windows: dropped, listing both
    dropped = tp_run(TimeplusWindows("hop", 10, on="t", hop_ms=5), batches([1], [16], [2]))
    assert [(d.seq, d.reason, [(w.start_ms, w.end_ms) for w in d.windows])
            for d in dropped.drops] == [(2, "late", [(-5, 5), (0, 10)])]


def test_session_kind_runs_as_a_timeplus_session() -> None:
    from windtunnel.oracle import SessionWindows

    items = batches([0, 3], [8], [20], [40])
    generic = tp_run(SessionWindows(5, on="t", max_duration_ms=6, tolerance_ms=1), items)
    native = tp_run(TimeplusWindows("session", 5, on="t", max_size_ms=6,
                                    emit=EmitPolicy(delay_ms=1)), items)
    assert generic.outputs == native.outputs
    # [0, 3] would end at 3 + 5 = 8, past the cap: it reports start + max_size
    assert summary(generic) == [(0, 6, 2, "close"), (8, 13, 1, "close"), (20, 25, 1, "close")]
    with pytest.raises(InvalidSpec) as info:
        tp_run(SessionWindows(5, on="t", max_events=3), items)
    assert info.value.field == "window.max_events"


def test_an_update_pending_when_the_wall_clock_closes_a_window_is_emitted() -> None:
    # ON UPDATE over tumble(s, now(), 1ms): one insert whose last record arrives at wall 1; the
    # wall clock closes [0, 1) inside the insert: its update (3 records) must still come out
    items = [Batch((Event(0, {}, at_ms=0), Event(1, {}, at_ms=0), Event(2, {}, at_ms=0),
                    Event(3, {}, at_ms=1)))]
    result = tp_run(TimeplusWindows("tumble", 1, on=NOW, emit=EmitPolicy("update")), items)
    assert summary(result) == [(0, 1, 3, "update"), (1, 2, 1, "update")]


@pytest.mark.parametrize(
    ("delay", "updates"),
    [
        ("immediate", [((0, 5), 10), ((5, 10), 5), ((0, 5), 30), ((5, 10), 7)]),
        ("delayed", [((0, 5), 10), ((0, 5), 30), ((5, 10), 7)]),
    ],
)
def test_updates_can_wait_the_delay(delay: str, updates: list[Any]) -> None:
    # examples/timeplus-on-update-with-delay.yaml (tumble 5 s, WITH DELAY 2s), batches a@1 a@6
    # a@3 a@8 a@2. delayed: an update waits until the clock is 2 s past the largest time seen
    # when its window changed: [0,5) changed at max 1 goes out at a@6 (max 6 >= 3); a@3 changes it
    # again at max 6, out at a@8 (8 >= 8) with [5,10), which changed at max 6 and then at 8
    # (its 5 is never sent alone); a@2 is late either way
    data = load_yaml((Path(__file__).resolve().parents[4] / "examples"
                      / "timeplus-on-update-with-delay.yaml").read_text())
    data["rules"] = {"update_delay": delay}
    result = replay(parse_scenario(data))
    assert [((e.window.start_ms // 1000, e.window.end_ms // 1000), e.row["max_cpu"])
            for e in result.emissions] == updates
    assert [(d.seq, d.reason) for d in result.drops] == [(4, "late")]
