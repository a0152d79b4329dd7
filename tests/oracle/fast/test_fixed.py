"""The fixed-window fast path (oracle/fast/fixed.py) against the reference operator."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.oracle.engine import reference_outputs
from windtunnel.oracle.fast import fixed, refusal
from windtunnel.oracle.model.errors import InvalidStream
from windtunnel.oracle.model.results import Emission
from windtunnel.oracle.model.rules import RULE_VALUES, Rules
from windtunnel.oracle.model.spec import NOW, Aggregation, FixedWindows, Query
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item, Watermark
from windtunnel.simulator.strategies import streams, window_specs

COUNT = (Aggregation("n", "count"),)
COUNT_AND_SUM = (Aggregation("n", "count"), Aggregation("total", "sum", "value"))


@settings(max_examples=300, deadline=None)
@given(
    window=window_specs(kinds=("fixed",), max_size_ms=20, max_tolerance_ms=6),
    items=streams(
        max_events=25, keys=3, max_step_ms=6, max_disorder_ms=25, allow_null_times=True,
        with_batches=True, with_advances=True,
    ),
    marks=st.lists(st.tuples(st.integers(0, 25), st.integers(-5, 150)), max_size=2),
    close_at=st.sampled_from(["reaches", "passes", "max_timestamp"]),
    end=st.sampled_from(["flush", "discard"]),
    by=st.booleans(),
)
def test_fast_path_equals_the_reference(
    window: FixedWindows, items: tuple[Item, ...], marks: list[tuple[int, int]], close_at: str,
    end: str, by: bool,
) -> None:
    """Small time grids make boundary coincidences (t == end, clock == end + tolerance)
    common; a watermark or the end hands every key's clock and open windows (summed panes
    of hopping counts included) to the reference."""
    stream: list[Item] = list(items)
    for position, to_ms in sorted(marks, reverse=True):
        stream.insert(min(position, len(stream)), Watermark(to_ms))
    rules = Rules(close_at=close_at, end_of_input=end)
    aggregate = COUNT_AND_SUM if by else COUNT
    query = Query(window, group_by=("key",), aggregate=aggregate, aggregate_by=("value",) if by else ())
    assert refusal(query, rules, "tenzir") is None
    fast = tuple(fixed.outputs(query, stream, rules))
    assert fast == tuple(reference_outputs(query, stream, rules=rules))


STREAMS = [
    [Event(0, {"ts": 1, "k": "a"}), Watermark(10), Event(1, {"ts": 4, "k": "b"}),
     Event(2, {"ts": 12, "k": "a"}), Watermark(35), Watermark(20), Event(3, {"ts": 36, "k": "c"}),
     Event(4, {"ts": 31, "k": "a"})],
    [Event(0, {"ts": 5, "k": "a"}), Event(1, {"ts": 7, "k": "b"}), Watermark(6),
     Event(2, {"ts": 8, "k": "a"}), Watermark(40), Event(3, {"ts": 45, "k": "b"})],
]


@pytest.mark.parametrize("every", [None, 5, 2])
@pytest.mark.parametrize("aggregate", ["count()", "sum(ts)"])
@pytest.mark.parametrize("stream", STREAMS)
def test_a_watermark_hands_the_open_windows_to_the_reference(
    every: int | None, aggregate: str, stream: list[Any]
) -> None:
    query = Query(FixedWindows(size_ms=10, every_ms=every, tolerance_ms=3), group_by=("k",),
                  aggregate=(Aggregation.parse("n", aggregate),))
    reference = list(reference_outputs(query, stream))
    assert any(isinstance(o, Emission) and o.reason == "close" for o in reference)
    assert list(fixed.outputs(query, stream, Rules())) == reference


@pytest.mark.parametrize("group_by", [(), ("key",), ("key", "value"), ("nested.key",)])
def test_list_and_mapping_group_values_group_like_the_reference(group_by: tuple[str, ...]) -> None:
    keys: list[Any] = [[1, 2], "a", {"x": 1}, [1, 2], {"x": 1}, "a", [2, 1]]
    items = [Event(i, {"ts": i, "key": k, "value": 1, "nested": {"key": k}}) for i, k in enumerate(keys)]
    query = Query(FixedWindows(3), group_by=group_by, aggregate=COUNT)
    assert tuple(fixed.outputs(query, items, Rules())) == tuple(reference_outputs(query, items))


@pytest.mark.parametrize(
    ("query", "rules", "profile", "reason"),
    [
        (Query(FixedWindows(10)), Rules(), "tenzir", "no aggregate"),
        (Query(FixedWindows(10), aggregate=COUNT), Rules(), "flink", "profile flink"),
        (Query(FixedWindows(10, on=NOW), aggregate=COUNT), Rules(), "tenzir", "now()"),
        (Query(FixedWindows(10, idle_timeout_ms=5), aggregate=COUNT), Rules(), "tenzir", "idle_timeout"),
        (Query(FixedWindows(5, every_ms=10, allow_gaps=True), aggregate=COUNT), Rules(), "tenzir", "gapped"),
    ],
)
def test_other_runs_take_the_reference(query: Query, rules: Rules, profile: str, reason: str) -> None:
    found = refusal(query, rules, profile)
    assert found is not None and reason in found


@pytest.mark.parametrize(
    ("name", "value"),
    [
        (name, value)
        for name, values in RULE_VALUES.items()
        if name not in fixed.FREE_RULES
        for value in values
        if value != getattr(Rules(), name)
    ],
)
def test_any_other_rule_off_its_default_takes_the_reference(name: str, value: Any) -> None:
    query = Query(FixedWindows(10), aggregate=COUNT)
    assert refusal(query, dataclasses.replace(Rules(), **{name: value}), "tenzir") is not None


INVALID_STREAMS = {
    "seq skips": (Event(0, {"ts": 1, "key": "a"}), Event(2, {"ts": 2, "key": "a"})),
    "arrival goes back": (Event(0, {"ts": 1, "key": "a"}, 50), Event(1, {"ts": 2, "key": "a"}, 40)),
    "arrival goes back in a batch": (Batch((Event(0, {"ts": 1, "key": "a"}, 50), Event(1, {"ts": 2, "key": "a"}, 40))),),
    "advance goes back": (Event(0, {"ts": 1, "key": "a"}, 50), Advance(10)),
    "event after end": (Event(0, {"ts": 1, "key": "a"}), End(), Event(1, {"ts": 2, "key": "a"})),
    "not an item": (Event(0, {"ts": 1, "key": "a"}), "event"),
}


@pytest.mark.parametrize("items", INVALID_STREAMS.values(), ids=INVALID_STREAMS.keys())
def test_fast_path_rejects_invalid_streams_like_the_reference(items: tuple[Item, ...]) -> None:
    query = Query(FixedWindows(10), group_by=("key",), aggregate=COUNT)
    with pytest.raises(InvalidStream) as fast:
        list(fixed.outputs(query, items, Rules()))
    with pytest.raises(InvalidStream) as slow:
        list(reference_outputs(query, items))
    assert str(fast.value) == str(slow.value)
