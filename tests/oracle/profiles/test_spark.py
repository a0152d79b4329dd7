"""The ``spark`` profile predicts stock Spark Structured Streaming as measured with PySpark 4.3.0.

Batches are micro-batches. wm_N = max(wm_{N-1}, max event time of batches 0..N-1 - delay),
starting at 0; a row is late for a window when window.end <= wm_{N-1}; append mode emits
a window in batch N when window.end <= wm_N; at end one no-data batch, then nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.oracle import Aggregation, Batch, Event, FixedWindows, InvalidSpec, Query, run
from windtunnel.oracle.model.results import Result
from windtunnel.oracle.model.spec import SessionWindows, TrailingWindows
from windtunnel.oracle.profiles import profile_named

SPARK = profile_named("spark").rules
COUNT = (Aggregation("n", "count"),)


def batches(*groups: list[Any], key: str | None = None) -> tuple[Batch, ...]:
    """Micro-batches of events; an int is ``{"ts": t}``, a tuple ``(t, key)``."""
    out, seq = [], 0
    for group in groups:
        events = []
        for item in group:
            t, k = item if isinstance(item, tuple) else (item, key)
            payload = {"ts": t} if k is None else {"ts": t, "k": k}
            events.append(Event(seq, payload))
            seq += 1
        out.append(Batch(tuple(events)))
    return tuple(out)


def spark(query: Query, items: Any) -> Result:
    return run(query, items, rules=SPARK, profile="spark")


def tumbling(size_ms: int = 10, **kw: Any) -> Query:
    group_by = kw.pop("group_by", ())
    return Query(FixedWindows(size_ms, **kw), group_by=group_by, aggregate=COUNT)


def emitted(result: Result) -> list[tuple[Any, int | None, int, int | None]]:
    return [(e.group, e.window.start_ms, e.row["n"], e.after_seq) for e in result.emissions]


def test_one_batch_25_5_counts_5_and_never_emits_the_open_window() -> None:
    # spark.md: one batch [25, 5] counts 5. The final no-data batch has wm 25: [0,10) is
    # emitted, [20,30) never (no flush at end of input).
    result = spark(tumbling(), batches([25, 5]))
    assert emitted(result) == [(None, 0, 1, 1)]
    assert result.drops == []


def test_batches_25_then_5_also_count_5_late_test_uses_the_previous_watermark() -> None:
    # batch 1: lateWm = wm_0 = 0, so 5 is kept; wm_1 = 25 emits [0,10) in batch 1
    result = spark(tumbling(), batches([25], [5]))
    assert emitted(result) == [(None, 0, 1, 1)]
    assert result.drops == []


def test_a_row_is_late_once_the_previous_batch_watermark_passed_its_window_end() -> None:
    # batch 2: lateWm = wm_1 = 25 >= 10 = end of [0,10): dropped
    result = spark(tumbling(), batches([25], [30], [5]))
    assert [(d.seq, d.reason) for d in result.drops] == [(2, "late")]


def test_delay_is_the_tolerance() -> None:
    # delay 10: wm_1 = 25 - 10 = 15 -> [0,10) emitted after batch 1, [10,20) not yet
    result = spark(tumbling(tolerance_ms=10), batches([25], [5, 12], [40]))
    assert emitted(result) == [(None, 0, 1, 2), (None, 10, 1, 3), (None, 20, 1, 3)]


def test_hopping_windows_test_each_window_instance_partial_delivery() -> None:
    # size 10 every 5; batch 2 has lateWm = 12: 8 misses [0,10) but joins [5,15)
    result = spark(tumbling(10, every_ms=5), batches([12], [13], [8], [40]))
    counts = {e.window.start_ms: e.row["n"] for e in result.emissions}
    assert counts[5] == 3  # 12, 13 and the late-ish 8
    assert 0 not in counts  # [0,10) never opened: 8 missed it
    assert result.drops == []


def test_the_watermark_is_global_across_keys() -> None:
    # key a at 100 moves everyone's watermark: b's row at 5 two batches later is late
    result = spark(tumbling(group_by=("k",)), batches([(100, "a")], [(50, "a")], [(5, "b")]))
    assert [(d.seq, d.reason) for d in result.drops] == [(2, "late")]


def test_the_watermark_starts_at_0_so_windows_ending_at_or_before_the_epoch_are_late() -> None:
    result = spark(tumbling(), batches([-15]))
    assert [(d.seq, d.reason) for d in result.drops] == [(0, "late")]


def test_order_inside_a_micro_batch_does_not_matter() -> None:
    one = spark(tumbling(group_by=("k",)), batches([(25, "a"), (5, "b"), (12, "a")], [(40, "a")]))
    other = spark(tumbling(group_by=("k",)), batches([(12, "a"), (5, "b"), (25, "a")], [(40, "a")]))
    assert sorted(emitted(one), key=str) == sorted(emitted(other), key=str)


def test_session_gap_equality_is_inclusive_and_sessions_end_at_last_plus_gap() -> None:
    # spark.md: events 35 and 40 with gap 5 merge; the session [35, 45) is emitted once
    # the watermark reaches 45 (here in the final no-data batch, wm 100)
    query = Query(SessionWindows(5), group_by=("k",), aggregate=COUNT)
    result = spark(query, batches([(35, "k"), (40, "k")], [(100, "z")]))
    assert [(e.group, e.window.start_ms, e.window.end_ms, e.row["n"]) for e in result.emissions] == [("k", 35, 45, 2)]


def test_a_late_row_merges_backwards_into_an_open_session() -> None:
    # delay 10. (30 34) then 38 joins: wm_2 = 28. Batch 2 has lateWm = wm_1 = 24; row 26 is
    # older than the watermark, but its own window [26, 31) ends after 24: kept, and it
    # merges backwards into the open session (30 .. 38)
    query = Query(SessionWindows(5, tolerance_ms=10), group_by=("k",), aggregate=COUNT)
    result = spark(query, batches([(30, "k"), (34, "k")], [(38, "k")], [(26, "k")], [(100, "z")]))
    assert [(e.group, e.window.start_ms, e.window.end_ms, e.row["n"]) for e in result.emissions] == [("k", 26, 43, 4)]
    assert result.drops == []


def test_a_row_touching_an_evicted_session_starts_a_new_one() -> None:
    # delay 3, gap 5. batch 2 has wm_2 = 20 - 3 = 17: session (10) = [10, 15) is emitted.
    # batch 3: lateWm = 17; row 14's own window [14, 19) ends after 17: kept. It is within
    # gap of the evicted (10), which is gone from the state: a new session (14), emitted
    # a second time for the same stretch of time (the article's "duplicate session emit").
    query = Query(SessionWindows(5, tolerance_ms=3), group_by=("k",), aggregate=COUNT)
    result = spark(query, batches([(10, "k")], [(20, "k")], [(21, "k")], [(14, "k")], [(100, "z")]))
    sessions = [(e.window.start_ms, e.window.end_ms, e.row["n"]) for e in result.emissions if e.group == "k"]
    assert sessions == [(10, 15, 1), (14, 19, 1), (20, 26, 2)]
    assert result.emissions[0].after_seq == 2


def test_nothing_is_flushed_at_end_of_input() -> None:
    result = spark(tumbling(), batches([1], [2]))
    assert result.emissions == []


@pytest.mark.parametrize(
    ("query", "field"),
    [
        (Query(SessionWindows(5), aggregate=COUNT), "group_by"),
        (Query(FixedWindows(10, idle_timeout_ms=5), aggregate=COUNT), "window.idle_timeout"),
        (Query(FixedWindows(10)), "aggregate"),
        (Query(TrailingWindows(10), aggregate=COUNT), "window.kind"),
    ],
)
def test_what_stock_spark_cannot_express_is_an_input_error(query: Query, field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        spark(query, batches([1]))
    assert error.value.field == field
    assert "spark" in str(error.value)
