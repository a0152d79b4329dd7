"""Count windows of the default profile: tumbling and hopping over each group's event offsets.

Offsets: `0 1 2 | 3 4 5 | 6` for count 3; windows are half-open offset ranges.
"""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.oracle import Aggregation, InvalidScenario, InvalidSpec, Query, Rules
from windtunnel.oracle.model.results import Result
from windtunnel.oracle.model.spec import CountWindows
from windtunnel.oracle.model.stream import numbered
from windtunnel.oracle.scenario import parse_scenario

from ..implementations import RunQuery

TOTAL = (Aggregation("n", "count"), Aggregation("total", "sum", "v"))
AGGREGATES = {"count and sum": TOTAL, "count": (Aggregation("n", "count"),)}


@pytest.fixture(params=sorted(AGGREGATES))
def aggregate(request: pytest.FixtureRequest) -> tuple[Aggregation, ...]:
    """A count and a sum (which only the reference takes), or a count alone (which the fast
    path takes too)."""
    return AGGREGATES[request.param]


def windows(result: Result) -> list[tuple[Any, int | None, int | None, int, str, bool]]:
    return [
        (e.group, e.window.start_offset, e.window.end_offset, e.row["n"], e.reason, e.partial)
        for e in result.emissions
    ]


def values(*vs: int, **fields: Any) -> Any:
    return numbered({"v": v, **fields} for v in vs)


def test_tumbling_count_windows_emit_when_full_and_flush_the_partial_last_window(run_query: RunQuery, aggregate: tuple[Aggregation, ...]) -> None:
    # offsets 0 1 2 | 3 4 5 | 6 . .   the partial window reports its nominal range [6, 9)
    # (Tenzir 6.20, C1: $window.begin/finish of the flushed window are 6 and 9)
    result = run_query(Query(CountWindows(3), aggregate=aggregate), values(1, 2, 3, 4, 5, 6, 7))
    assert windows(result) == [
        (None, 0, 3, 3, "count", False),
        (None, 3, 6, 3, "count", False),
        (None, 6, 9, 1, "end_of_input", True),
    ]
    assert [e.after_seq for e in result.emissions[:2]] == [2, 5]
    if aggregate == TOTAL:
        assert [e.row["total"] for e in result.emissions] == [6, 15, 7]


def test_hopping_count_windows_overlap_by_count_minus_every(run_query: RunQuery, aggregate: tuple[Aggregation, ...]) -> None:
    # count 3, every 2:  [0 1 2]  [2 3 4]  [4 . .)  the partial window keeps its nominal
    # range [4, 7) (C1)
    result = run_query(Query(CountWindows(3, every=2), aggregate=aggregate), values(10, 11, 12, 13, 14))
    assert windows(result) == [
        (None, 0, 3, 3, "count", False),
        (None, 2, 5, 3, "count", False),
        (None, 4, 7, 1, "end_of_input", True),
    ]
    if aggregate == TOTAL:
        assert [e.row["total"] for e in result.emissions] == [33, 39, 14]


def test_offsets_are_counted_per_group(run_query: RunQuery, aggregate: tuple[Aggregation, ...]) -> None:
    events = numbered([{"k": k, "v": 1} for k in "abab"])
    result = run_query(Query(CountWindows(2), group_by=("k",), aggregate=aggregate), events)
    assert windows(result) == [("a", 0, 2, 2, "count", False), ("b", 0, 2, 2, "count", False)]


def test_count_windows_ignore_event_time(run_query: RunQuery, aggregate: tuple[Aggregation, ...]) -> None:
    events = numbered([{"ts": None}, {"ts": "not a time"}, {}])
    result = run_query(Query(CountWindows(3), aggregate=aggregate), events)
    assert windows(result) == [(None, 0, 3, 3, "count", False)]
    assert result.drops == []


def test_every_greater_than_count_is_rejected_unless_the_rule_accepts_gaps(run_query: RunQuery) -> None:
    with pytest.raises(InvalidSpec) as error:
        CountWindows(2, every=3)
    assert error.value.field == "window.every"
    scenario = parse_scenario(
        {"window": {"kind": "count", "count": 2, "every": 3}, "rules": {"every_greater_than_size": "accept"}, "aggregate": {"n": "count()"}, "input": [{"v": i} for i in range(6)]}
    )
    result = run_query.replay(scenario)
    assert [(e.window.start_offset, e.window.end_offset) for e in result.emissions] == [(0, 2), (3, 5)]
    assert [(d.seq, d.reason) for d in result.drops] == [(2, "no_window"), (5, "no_window")]


def test_end_of_input_discard_loses_the_partial_window(run_query: RunQuery, aggregate: tuple[Aggregation, ...]) -> None:
    result = run_query(Query(CountWindows(3), aggregate=aggregate), values(1, 2, 3, 4), rules=Rules(end_of_input="discard"))
    assert windows(result) == [(None, 0, 3, 3, "count", False)]


def test_pass_through_count_windows_stream_each_event_with_its_windows(run_query: RunQuery) -> None:
    result = run_query(Query(CountWindows(2, every=1)), values(1, 2))
    assert [(e.window.start_offset, e.window.end_offset, e.row["v"], e.reason) for e in result.emissions] == [
        (0, 2, 1, "event"),
        (0, 2, 2, "event"),
        (1, 3, 2, "event"),
    ]


def test_count_windows_report_offsets_in_json(run_query: RunQuery, aggregate: tuple[Aggregation, ...]) -> None:
    result = run_query(Query(CountWindows(2), aggregate=aggregate), values(1, 2))
    assert result.emissions[0].to_json()["window"] == {"start_offset": 0, "end_offset": 2}


@pytest.mark.parametrize(("block", "field"), [({"kind": "count"}, "window.count"), ({"kind": "count", "count": 0}, "window.count"), ({"kind": "count", "count": 2, "on": "ts"}, "window.on")])
def test_invalid_count_blocks_name_the_field(block: dict[str, Any], field: str) -> None:
    with pytest.raises((InvalidScenario, InvalidSpec)) as error:
        parse_scenario({"window": block, "input": []})
    assert error.value.field == field
