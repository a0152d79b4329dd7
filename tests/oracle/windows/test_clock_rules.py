"""The clock rules profiles are built from, on fixed and session windows.

`clock_moves`: event | batch (Spark: previous batches, late test one batch behind) |
batch_inclusive (the batch counts at its end; the late test uses the clock before it).
`clock_floor`: none | epoch. `alignment`: epoch | epoch_from_zero.
"""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.oracle import Aggregation, Batch, Event, FixedWindows, Query, Rules
from windtunnel.oracle.model.results import Result
from windtunnel.oracle.model.spec import SessionWindows

from ..implementations import RunQuery

COUNT = (Aggregation("n", "count"),)


def batches(*groups: list[int]) -> tuple[Batch, ...]:
    out, seq = [], 0
    for group in groups:
        out.append(Batch(tuple(Event(seq + i, {"ts": t}) for i, t in enumerate(group))))
        seq += len(group)
    return tuple(out)


def outcome(result: Result) -> tuple[list[tuple[Any, ...]], list[int]]:
    return (
        [(e.window.start_ms, e.row["n"], e.reason, e.after_seq) for e in result.emissions],
        [d.seq for d in result.drops],
    )


@pytest.mark.parametrize(
    ("moves", "expected"),
    [
        # per event: 5 and 7 come after 25 closed [0,10): late
        ("event", ([(20, 1, "end_of_input", 2)], [1, 2])),
        # batch_inclusive: 5 is tested against the clock before its batch (none): on time;
        # [0,10) closes at the end of batch 0; 7 in batch 1 is late
        ("batch_inclusive", ([(0, 1, "close", 1), (20, 1, "end_of_input", 2)], [2])),
        # batch: closing lags one batch: [0,10) closes at the end of batch 1, and 7 in
        # batch 1 is tested against the clock before batch 0 (none): on time
        ("batch", ([(0, 2, "close", 2), (20, 1, "end_of_input", 2)], [])),
    ],
)
def test_clock_moves_on_fixed_windows(run_query: RunQuery, moves: str, expected: tuple[list[Any], list[int]]) -> None:
    #  batches: [25, 5] [7]
    result = run_query(Query(FixedWindows(10), aggregate=COUNT), batches([25, 5], [7]), rules=Rules(clock_moves=moves))
    assert outcome(result) == expected


def test_per_event_clock_ignores_batches(run_query: RunQuery) -> None:
    one = run_query(Query(FixedWindows(10), aggregate=COUNT), batches([25, 5, 7]))
    split = run_query(Query(FixedWindows(10), aggregate=COUNT), batches([25], [5, 7]))
    assert outcome(one) == outcome(split) == ([(20, 1, "end_of_input", 2)], [1, 2])


@pytest.mark.parametrize(("moves", "late"), [("event", [2]), ("batch_inclusive", [2]), ("batch", [])])
def test_clock_moves_on_sessions(run_query: RunQuery, moves: str, late: list[int]) -> None:
    # gap 5: batch [0, 20] then [3]: per event and batch_inclusive, (0) is final before 3
    # arrives; under batch the late test still uses the clock before batch 0 (batch clocks
    # are the merging session model's, session_order: merge: flink, spark, timeplus)
    rules = Rules(clock_moves=moves, session_order="merge")
    result = run_query(Query(SessionWindows(5), aggregate=COUNT), batches([0, 20], [3]), rules=rules)
    assert [d.seq for d in result.drops] == late


@pytest.mark.parametrize(("floor", "late"), [("none", []), ("epoch", [0])])
def test_clock_floor_epoch_makes_windows_ending_at_or_before_0_late(run_query: RunQuery, floor: str, late: list[int]) -> None:
    result = run_query(Query(FixedWindows(10), aggregate=COUNT), batches([-15]), rules=Rules(clock_floor=floor))
    assert [d.seq for d in result.drops] == late


def test_alignment_epoch_from_zero_opens_no_window_before_0(run_query: RunQuery) -> None:
    query = Query(FixedWindows(60, every_ms=30), aggregate=COUNT)
    epoch = run_query(query, batches([5]))
    clamped = run_query(query, batches([5, -1]), rules=Rules(alignment="epoch_from_zero"))
    assert [e.window.start_ms for e in epoch.emissions] == [-30, 0]
    assert [e.window.start_ms for e in clamped.emissions] == [0]
    assert [(d.seq, d.reason) for d in clamped.drops] == [(1, "no_window")]
