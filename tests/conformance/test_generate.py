"""Generated streams for a spec: deterministic per seed, shaped by the spec's fields and scale."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.conformance.generate import StreamShape, generate
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.stream import Advance, Batch, events_of
from windtunnel.oracle.scenario import Scenario, parse_scenario


def spec(window: dict[str, Any], **extra: Any) -> Scenario:
    data = {"window": window, "group_by": ["user"],
            "aggregate": {"n": "count()", "total": "sum(bytes)"}, "input": [], **extra}
    return parse_scenario(data)


FIXED = {"kind": "fixed", "size": "10s", "tolerance": "2s", "on": "ts"}


def test_same_seed_same_streams_other_seed_other_streams() -> None:
    one = [s.items for s in generate(spec(FIXED), 30, seed=7)]
    assert one == [s.items for s in generate(spec(FIXED), 30, seed=7)]
    assert one != [s.items for s in generate(spec(FIXED), 30, seed=8)]
    assert len(one) == 30


def test_streams_carry_the_spec_fields_disorder_nulls_batches_and_keys() -> None:
    scenarios = list(generate(spec(FIXED), 100, seed=1))
    events = [e for s in scenarios for e in events_of(s.items)]
    assert all(set(e.payload) <= {"ts", "user", "bytes"} for e in events)
    assert {e.payload["user"] for e in events} >= {"a", "b", "c"}
    assert any(e.payload["ts"] is None for e in events)
    assert any(e.payload.get("bytes") is None for e in events)
    assert any(isinstance(i, Batch) and len(i.events) > 1 for s in scenarios for i in s.items)
    # out of order by more than the tolerance (late) in some stream
    def late(s: Scenario) -> bool:
        times = [e.payload["ts"] for e in events_of(s.items) if e.payload["ts"] is not None]
        return any(t < max(times[:i]) - 2000 for i, t in enumerate(times) if i)
    assert any(late(s) for s in scenarios)
    assert all(t >= 0 for e in events if (t := e.payload["ts"]) is not None)
    # no idle gaps where the wall clock does not matter
    assert not any(isinstance(i, Advance) for s in scenarios for i in s.items)


def test_idle_gaps_where_the_window_has_an_idle_timeout() -> None:
    window = {**FIXED, "idle_timeout": "5s"}
    scenarios = list(generate(spec(window), 60, seed=3))
    assert any(isinstance(i, Advance) for s in scenarios for i in s.items)


def test_nested_time_field_and_scale_in_the_file_unit() -> None:
    shaped = spec({"kind": "session", "gap": 30, "on": "meta.at"}, time_unit="s")
    shape = StreamShape.of(shaped)
    assert (shape.on, shape.step, shape.disorder) == ("meta.at", 30, 30)
    events = [e for s in generate(shaped, 20, seed=0) for e in events_of(s.items)]
    assert events and all("at" in e.payload["meta"] for e in events)


def test_negative_count_is_invalid() -> None:
    with pytest.raises(InvalidSpec, match="--examples"):
        generate(spec(FIXED), -1)


@pytest.mark.parametrize("time_unit", ["ms", "s"])
def test_streams_start_at_the_specs_wall_clock(time_unit: str) -> None:
    # a spec from `generate ... --format scenario` starts its wall clock at an epoch time:
    # generated streams arrive from it (a stream before it is invalid) and carry event
    # times from it, in the spec's unit
    from windtunnel.oracle.model.stream import StreamChecker

    start = "2026-11-24T00:00:00Z"
    shaped = spec({**FIXED, "idle_timeout": "5s"}, start_wall=start, time_unit=time_unit)
    start_ms = shaped.start_wall_ms
    assert start_ms == 1_795_478_400_000
    unit_ms = shaped.time_unit_ms
    scenarios = list(generate(shaped, 40, seed=2))
    for s in scenarios:
        check = StreamChecker(start_ms)
        for index, item in enumerate(s.items):
            check.item(index, item)  # raises InvalidStream for an arrival before the start
    events = [e for s in scenarios for e in events_of(s.items)]
    assert all(e.at_ms is None or e.at_ms >= start_ms for e in events)
    assert all(t >= start_ms // unit_ms for e in events if (t := e.payload["ts"]) is not None)
    assert all(i.to_ms >= start_ms for s in scenarios for i in s.items if isinstance(i, Advance))
