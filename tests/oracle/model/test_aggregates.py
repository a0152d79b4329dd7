"""Aggregation functions and their null handling, per docs/semantics.md."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.oracle import Aggregation, FixedWindows, InvalidSpec, Query
from windtunnel.oracle.model.stream import numbered

from ..implementations import RunQuery

VALUES = [{"ts": 1, "x": 3}, {"ts": 2, "x": None}, {"ts": 3, "x": 1}, {"ts": 4}, {"ts": 5, "x": 3}, {"ts": 6, "x": "a"}]


def one_row(run_query: RunQuery, function: str, field: str | None = "x", payloads: list[dict[str, Any]] = VALUES) -> Any:
    query = Query(FixedWindows(100), aggregate=(Aggregation("v", function, field),))
    (emission,) = run_query(query, numbered(payloads)).emissions
    return emission.row["v"]


@pytest.mark.parametrize(
    ("function", "field", "expected"),
    [
        ("count", None, 6),  # count() counts events
        ("count", "x", 4),  # count(x) counts non-null x
        ("sum", "x", 7),  # nulls and non-numbers ignored
        ("min", "x", 1),
        ("max", "x", 3),
        ("avg", "x", 7 / 3),
        ("distinct", "x", [3, 1, "a"]),  # first-seen order, nulls skipped
        ("count_distinct", "x", 3),
        ("collect", "x", [3, 1, 3, "a"]),
        ("first", "x", 3),
        ("last", "x", "a"),
    ],
)
def test_aggregation_functions(run_query: RunQuery, function: str, field: str | None, expected: Any) -> None:
    assert one_row(run_query, function, field) == expected


@pytest.mark.parametrize(
    ("function", "expected"),
    [("sum", None), ("min", None), ("max", None), ("avg", None), ("distinct", []), ("collect", []),
     ("count_distinct", 0), ("first", None), ("last", None)],
)
def test_functions_that_saw_only_nulls(run_query: RunQuery, function: str, expected: Any) -> None:
    assert one_row(run_query, function, "x", [{"ts": 1, "x": None}, {"ts": 2}]) == expected


def test_booleans_are_not_numbers(run_query: RunQuery) -> None:
    assert one_row(run_query, "sum", "x", [{"ts": 1, "x": True}, {"ts": 2, "x": 2}]) == 2


def test_window_bounds_in_the_row_when_asked(run_query: RunQuery) -> None:
    query = Query(
        FixedWindows(10),
        aggregate=(Aggregation("n", "count"), Aggregation("start", "window_start"), Aggregation("end", "window_end")),
    )
    (emission,) = run_query(query, numbered([{"ts": 14}])).emissions
    assert emission.row == {"n": 1, "start": 10, "end": 20}


def test_dotted_fields_are_read_from_nested_payloads(run_query: RunQuery) -> None:
    assert one_row(run_query, "sum", "a.b", [{"ts": 1, "a": {"b": 2}}, {"ts": 2, "a": {"b": 5}}, {"ts": 3, "a": 7}]) == 7


def test_aggregate_by_splits_a_window_into_rows(run_query: RunQuery) -> None:
    # TQL: summarize severity, events=count()
    query = Query(FixedWindows(100), aggregate=(Aggregation("events", "count"),), aggregate_by=("severity",))
    payloads = [{"ts": 1, "severity": "high"}, {"ts": 2, "severity": "low"}, {"ts": 3, "severity": "high"}]
    rows = [e.row for e in run_query(query, numbered(payloads)).emissions]
    assert rows == [{"severity": "high", "events": 2}, {"severity": "low", "events": 1}]


@pytest.mark.parametrize(
    ("text", "fix"),
    [("median(x)", "use one of"), ("sum()", "write sum(x)"), ("count", "write e.g."), ("window_start(x)", "write window_start()")],
)
def test_bad_aggregation_text(text: str, fix: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        Aggregation.parse("v", text)
    assert error.value.field == "aggregate.v"
    assert fix in str(error.value)
