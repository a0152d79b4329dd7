"""Properties that need no expected output, on Spark's general operator.

Each Hypothesis example draws one window spec and a few streams (every kind, keys,
disorder, null times, batches, idle periods, idle timeouts), makes transformed copies,
and runs them all in one Spark query (``spark_impl.harness.general.run_general_many``: every
scenario as if run alone). The Spark runs are then compared with each other:

- the same events in fewer, larger micro-batches give the same outputs as the drawn batches;
- relabelling the keys relabels the outputs' groups and nothing else;
- shifting event times (by a multiple of the hop for fixed windows) shifts the windows;
- tumbling equals hopping with ``every = size``;
- every event is delivered (its ``id`` is in an emission) or dropped with a reason;
- stopping the query after k micro-batches and restarting it from its checkpoint gives
  the uninterrupted run's outputs.

Spark results come in no particular order, so runs compare as multisets of JSON lines.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from windtunnel.oracle.engine import replay
from windtunnel.oracle.model.results import Drop, Emission, Output, to_jsonl_line
from windtunnel.oracle.model.spec import FixedWindows
from windtunnel.oracle.scenario import parse_scenario
from windtunnel.simulator.strategies import scenario_dicts
from windtunnel.spark_impl.harness.feed import feed
from windtunnel.spark_impl.harness.general import run_general_many
from windtunnel.spark_impl.harness.replay import replay_on_spark
from windtunnel.spark_impl.harness.runs import divergences
from windtunnel.spark_impl.schema import OUTPUT_DDL, output_of

from .json_runs import run_piece

SPARK_SETTINGS = settings(
    max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
STREAMS_PER_EXAMPLE = 2


def rich(**options: Any) -> st.SearchStrategy[dict[str, Any]]:
    chosen: dict[str, Any] = {
        "kinds": ("fixed", "session", "count", "trailing"),
        "max_size_ms": 40,
        "max_tolerance_ms": 10,
        "idle_timeouts": True,
        "max_events": 10,
        "keys": 3,
        "max_step_ms": 12,
        "max_disorder_ms": 30,
        "allow_null_times": True,
        "with_batches": True,
        "with_advances": True,
    }
    chosen.update(options)
    return scenario_dicts(**chosen)


@st.composite
def families(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A few scenario files sharing the first one's window, group_by and aggregate; each
    event carries its seq as ``id``, collected per window (or passed through)."""
    first = draw(rich())
    spec = {k: first[k] for k in ("window", "group_by", "aggregate") if k in first}
    out = []
    for data in [first, *draw(st.lists(rich(), min_size=STREAMS_PER_EXAMPLE - 1,
                                      max_size=STREAMS_PER_EXAMPLE - 1))]:
        data = {**{k: v for k, v in data.items() if k not in ("group_by", "aggregate")}, **spec}
        data = with_ids(data)
        if "aggregate" in data:
            data["aggregate"] = {"n": "count()", "ids": "collect(id)"}
        out.append(data)
    return out


def with_ids(data: dict[str, Any]) -> dict[str, Any]:
    """The scenario with each event's seq in its payload as ``id``."""
    seqs = iter(range(10**6))
    return map_payloads(data, lambda payload: {**payload, "id": next(seqs)})


def map_payloads(data: dict[str, Any], change: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    out = copy.deepcopy(data)
    for item in out["input"]:
        for event in item.get("batch", [item] if "event" in item else []):
            event["event"] = change(event["event"])
    return out


def coalesced(data: dict[str, Any]) -> dict[str, Any]:
    """The same events, every run of them between two advances in one batch (fewer
    micro-batches than drawn, so the query stays short)."""
    out = copy.deepcopy(data)
    items: list[dict[str, Any]] = []
    for item in out["input"]:
        events = item.get("batch", [item] if "event" in item else None)
        if events is None:
            items.append(item)
        elif items and "batch" in items[-1]:
            items[-1]["batch"] += events
        else:
            items.append({"batch": list(events)})
    out["input"] = items
    return out


def lines(outputs: Any, change: Callable[[dict[str, Any]], dict[str, Any]] = lambda d: d) -> Counter[str]:
    """Outputs as a multiset of JSON lines, each changed by ``change`` first; prose left out."""
    out: Counter[str] = Counter()
    for output in outputs:
        data = json.loads(to_jsonl_line(output))
        data.pop("message", None)
        out[json.dumps(change(data), sort_keys=True)] += 1
    return out


def label(value: Any) -> Any:
    return None if value is None else f"relabelled-{value}"[::-1]


def relabelled_line(data: dict[str, Any]) -> dict[str, Any]:
    if data.get("group") is not None:
        data["group"] = label(data["group"])
    if "row" in data and "key" in data["row"]:
        data["row"]["key"] = label(data["row"]["key"])
    return data


def shifted_line(by_ms: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def change(data: dict[str, Any]) -> dict[str, Any]:
        for window in [data["window"]] if "window" in data else data["windows"]:
            if "start_ms" in window:
                window["start_ms"] += by_ms
                window["end_ms"] += by_ms
        if isinstance(data.get("row", {}).get("ts"), int):
            data["row"]["ts"] += by_ms
        return data

    return change


def delivered_or_dropped(outputs: tuple[Output, ...], data: dict[str, Any]) -> None:
    delivered = set()
    for o in outputs:
        if isinstance(o, Emission):
            delivered |= set(o.row["ids"]) if "ids" in o.row else {o.row["id"]}
    dropped = {o.seq: o.reason for o in outputs if isinstance(o, Drop)}
    seqs = range(sum(1 for i in data["input"] for _ in (i.get("batch", [i] if "event" in i else []))))
    for seq in seqs:
        assert (seq in delivered) != (seq in dropped), f"event {seq}: delivered and dropped, or lost"
        assert dropped.get(seq, "reason") != "", seq


@pytest.mark.spark
@SPARK_SETTINGS
@given(family=families(), multiple=st.sampled_from([-2, 1, 3]))
def test_spark_runs_relate_as_the_properties_say(spark, family, multiple) -> None:
    spec = parse_scenario(family[0]).query.window
    by_ms = multiple * (spec.hop_ms if isinstance(spec, FixedWindows) else 7)

    def shift(p: dict[str, Any]) -> dict[str, Any]:
        return p if p.get("ts") is None else {**p, "ts": p["ts"] + by_ms}

    def relabel(p: dict[str, Any]) -> dict[str, Any]:
        return {**p, "key": label(p.get("key"))}

    variants = [coalesced, lambda d: map_payloads(d, relabel), lambda d: map_payloads(d, shift)]
    files = [f(d) if f else d for d in family for f in (None, *variants)]
    tumbling = [copy.deepcopy(d) for d in family if d["window"]["kind"] in ("fixed", "count")]
    hopping = []
    for data in tumbling:
        block = data["window"]
        block.pop("every", None)
        hopping.append({**data, "window": {**block, "every": block.get("size", block.get("count"))}})
    scenarios = [parse_scenario(d) for d in files + tumbling + hopping]
    runs = [r.run.result.outputs for r in run_general_many(spark, scenarios)]
    for index, data in enumerate(family):
        base, rebatched, relabelled, shifted = runs[4 * index : 4 * index + 4]
        assert divergences(replay(scenarios[4 * index]).outputs, base) == []
        delivered_or_dropped(base, data)
        assert lines(rebatched) == lines(base)
        assert lines(relabelled) == lines(base, relabelled_line)
        assert lines(shifted) == lines(base, shifted_line(by_ms))
    count = len(tumbling)
    done = 4 * len(family)
    assert runs[done : done + count] == runs[done + count :]


@pytest.mark.spark
@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=rich(max_events=10, kinds=("fixed", "session")), cut=st.integers(1, 4))
def test_restart_from_checkpoint_equals_the_uninterrupted_run(spark, tmp_path_factory, data, cut) -> None:
    scenario = parse_scenario(data)
    fed = feed(scenario.items, scenario.query.group_by, buckets=1)
    assume(len(fed.batches) >= 2)
    cut = min(cut, len(fed.batches) - 1)
    tmp = tmp_path_factory.mktemp("restart")
    run_piece(spark, fed, scenario, cut, tmp / "out", tmp / "checkpoint", 1)
    run_piece(spark, fed, scenario, len(fed.batches), tmp / "out", tmp / "checkpoint", 1)
    records = [r.asDict() for r in spark.read.schema(OUTPUT_DDL).json(str(tmp / "out")).collect()]
    uninterrupted = replay_on_spark(scenario, spark, buckets=1).result.outputs
    assert lines(output_of(r) for r in records) == lines(uninterrupted)
