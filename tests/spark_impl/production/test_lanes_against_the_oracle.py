"""The production operator through its real streaming path, held to the oracle.

For each window kind, Hypothesis streams (``conformance.generate``: disorder, late events,
null and non-time times, several keys, idle gaps, random micro-batches) run as lanes of one
streaming query (``harness.production.run_lanes``): Spark's file source reads each
micro-batch from three files (three input partitions), the operator runs on three key
slices, and the query stops after random micro-batches and resumes from its checkpoint.
Every lane's outputs must equal the oracle's as the contract's JSON lines, every field
included (``after_seq``, ``wall_ms`` and drop messages too).

    lane 0:  #0 #1 | #2 | #3 #4 #5 | end          micro-batch i of the query holds
    lane 1:  #0 | #1 #2 | end                     micro-batch i of every lane
             ^ stop, restart from the checkpoint (random)
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from windtunnel.conformance.generate import generate
from windtunnel.oracle.engine import run
from windtunnel.oracle.scenario import Scenario, parse_scenario
from windtunnel.spark_impl.schema import canonical_lines

pytestmark = pytest.mark.spark

EXAMPLES = int(__import__("os").environ.get("WT_LANES", "200"))

SPECS = {
    "tumbling": {"window": {"kind": "fixed", "size": 10, "on": "ts", "tolerance": 3},
                 "group_by": ["user"], "aggregate": {"n": "count()", "total": "sum(x)",
                                                     "mean": "avg(x)"}},
    "hopping": {"window": {"kind": "fixed", "size": 10, "every": 4, "on": "ts", "tolerance": 2,
                           "idle_timeout": 15},
                "group_by": ["user", "region"],
                "aggregate": {"n": "count()", "hi": "max(x)", "xs": "collect(x)"}},
    "session": {"window": {"kind": "session", "gap": 5, "on": "ts", "tolerance": 2,
                           "max_duration": 20},
                "group_by": ["user"], "aggregate": {"n": "count()", "first": "first(x)",
                                                    "uniq": "distinct(x)"}},
    "count": {"window": {"kind": "count", "count": 3, "every": 2},
              "group_by": ["user"], "aggregate": {"n": "count()", "lo": "min(x)"}},
    "pass-through": {"window": {"kind": "fixed", "size": 10, "on": "ts", "tolerance": 1},
                     "group_by": ["user"]},
}


def _spec(kind: str) -> Scenario:
    return parse_scenario({"name": kind, **SPECS[kind], "input": []})


def _expected(scenario: Scenario) -> Counter[str]:
    result = run(scenario.query, scenario.items, time_unit_ms=scenario.time_unit_ms,
                 start_wall_ms=scenario.start_wall_ms)
    return Counter(canonical_lines(result.outputs))


@pytest.mark.parametrize("kind", sorted(SPECS))
def test_every_lane_equals_the_oracle(spark: Any, kind: str, tmp_path: Any) -> None:
    from windtunnel.spark_impl.harness.production import run_lanes

    spec = _spec(kind)
    scenarios = list(generate(spec, EXAMPLES, seed=21, max_events=16))
    assert len(scenarios) == EXAMPLES
    rng = random.Random(kind)
    restarts = sorted(rng.sample(range(1, 8), 2))
    runs = run_lanes(spark, scenarios, slices=3, partitions=3, restarts=restarts,
                     seed=rng.randrange(1000), workdir=str(tmp_path))
    wrong = []
    for scenario, lane in zip(scenarios, runs, strict=True):
        got = Counter(canonical_lines(lane.outputs))
        want = _expected(scenario)
        if got != want:
            wrong.append((scenario, sorted((want - got).elements()), sorted((got - want).elements())))
    assert not wrong, (
        f"{len(wrong)} of {EXAMPLES} lanes differ; first: {wrong[0][0].items}\n"
        f"missing: {wrong[0][1]}\nunexpected: {wrong[0][2]}"
    )
