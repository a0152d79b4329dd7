"""What the Java engine covers, and the spec text it runs from (no JVM needed)."""

from __future__ import annotations

import json

import pytest

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import (
    NOW,
    Aggregation,
    CountWindows,
    FixedWindows,
    Query,
    SessionWindows,
    TrailingWindows,
)
from windtunnel.spark_impl.engine_spec import covered, engine_spec, spec_fields

REALISTIC = Query(
    FixedWindows(600_000, on="ts", every_ms=60_000, tolerance_ms=120_000),
    ("user",),
    (Aggregation("n", "count"), Aggregation("total", "sum", "amount"), Aggregation("mean", "avg", "amount")),
)


@pytest.mark.parametrize(
    "query",
    [
        REALISTIC,
        Query(FixedWindows(10, on=NOW, idle_timeout_ms=5), ("a.b", "c")),
        Query(SessionWindows(30, max_duration_ms=100, max_events=5, tolerance_ms=3, idle_timeout_ms=9)),
        Query(SessionWindows(30, on=NOW), ("k",), (Aggregation("d", "distinct", "v"),), ("b",)),
        Query(CountWindows(5, every=2), ("k",), (Aggregation("w", "window_start"),)),
    ],
)
def test_default_profile_queries_are_covered(query: Query) -> None:
    assert covered(query, Rules()) is None


@pytest.mark.parametrize(
    ("query", "rules", "reason"),
    [
        (Query(TrailingWindows(10)), Rules(), "trailing windows"),
        (REALISTIC, Rules(close_at="passes"), "rules.close_at=passes"),
        (Query(FixedWindows(10, every_ms=20, allow_gaps=True)), Rules(), "gapped fixed windows (every > size)"),
        (Query(CountWindows(2, every=5, allow_gaps=True)), Rules(), "gapped count windows (every > count)"),
        (Query(FixedWindows(2**62)), Rules(), "durations beyond 2**61 ms"),
    ],
)
def test_uncovered_queries_are_named(query: Query, rules: Rules, reason: str) -> None:
    assert covered(query, rules) == reason


def test_other_profiles_are_not_covered() -> None:
    assert covered(REALISTIC, Rules(), profile="flink") == "profile flink (the engine runs the default profile, tenzir)"


def test_the_spec_lists_each_field_once_in_slot_order() -> None:
    query = Query(
        FixedWindows(10, on="t.x"), ("k", "t.x"),
        (Aggregation("s", "sum", "v"), Aggregation("c", "count", "k"), Aggregation("n", "count")), ("b",),
    )
    assert spec_fields(query) == ("t.x", "k", "b", "v")
    spec = json.loads(engine_spec(query, Rules(), 1000, 5))
    assert spec["fields"] == ["t.x", "k", "b", "v"]
    assert (spec["kind"], spec["size_ms"], spec["hop_ms"], spec["time_unit_ms"], spec["start_wall_ms"]) == (
        "fixed", 10, 10, 1000, 5,
    )
    assert spec["aggregate"][2] == {"name": "n", "function": "count", "field": None}


def test_processing_time_sessions_merge() -> None:
    spec = json.loads(engine_spec(Query(SessionWindows(5, on=NOW)), Rules(), 1, 0))
    assert (spec["session_order"], spec["fields"]) == ("merge", [])


def test_an_uncovered_query_has_no_spec() -> None:
    with pytest.raises(InvalidSpec, match="not covered by the Java engine: trailing windows"):
        engine_spec(Query(TrailingWindows(10)), Rules(), 1, 0)
