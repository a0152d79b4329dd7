"""A divergence made small: a divergence found on the spec's own input stays one through
shrinking, every shrunk stream keeps the fields the job reads, stand-ins come from the
job's plan, and the cause is named (no Spark: a job stand-in whose plan is given)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pytest

from windtunnel.conformance.check import DETECT, check
from windtunnel.conformance.job_plan import JobPlan, PlanAggregate, PlanWatermark, PlanWindow
from windtunnel.conformance.targets import TargetRun, oracle_micro_batches_of, oracle_outputs
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.stages import Deduplicate
from windtunnel.oracle.model.stream import events_of
from windtunnel.oracle.scenario import Scenario, parse_scenario

CLICKS = {
    "name": "clicks",
    "profile": "spark",
    "window": {"kind": "fixed", "size": "1min", "on": "ts", "tolerance": "20s"},
    "group_by": ["campaign"],
    "aggregate": {"clicks": "count()"},
    "input": [
        {"ts": 1000, "click_id": "c1", "campaign": "spring", "cost": 3},
        {"ts": 2000, "click_id": "c1", "campaign": "spring", "cost": 4},
        {"ts": 5000, "click_id": "c9", "campaign": "summer", "cost": 1},
        {"ts": 90000, "click_id": "c2", "campaign": "spring", "cost": 2},
    ],
}
"""A spec with no deduplicate stage whose own input has a redelivered click (c1)."""

DEDUPLICATING_PLAN = JobPlan(
    watermarks=(PlanWatermark("ts", 20000, "20 seconds"),),
    windows=(PlanWindow("fixed", "ts", size_ms=60000, slide_ms=60000),),
    group_by=("campaign",),
    aggregates=(PlanAggregate("clicks", "count", ()),),
    deduplicate=("click_id",),
    reads=frozenset({"ts", "campaign", "click_id"}),
)


@dataclass
class DeduplicatingJob:
    """What a stock job with ``dropDuplicatesWithinWatermark(["click_id"])`` does (the
    oracle's spark profile with that stage), refusing streams without ``click_id`` as
    Spark refuses a job reading a missing column; records every stream it is given."""

    name: str = "jobs:clicks_deduplicated"
    reports_drops: bool = False
    reports_timing: bool = True
    given: list[Scenario] = field(default_factory=list)
    solo_calls: int = 0

    def run_many(self, scenarios: Sequence[Scenario]) -> list[TargetRun]:
        runs = []
        for scenario in scenarios:
            self.given.append(scenario)
            if any("click_id" not in e.payload for e in events_of(scenario.items)):
                raise InvalidSpec("--job", self.name, "the job reads column click_id, which the "
                                  "spec's events do not have", "add it")
            stage = Deduplicate(("click_id",), 20000)
            job = replace(scenario, query=replace(scenario.query, stages=(stage,)))
            outputs = tuple(o for o in oracle_outputs(job, "spark") if o.__class__.__name__ ==
                            "Emission")
            runs.append(TargetRun(outputs, oracle_micro_batches_of(job, outputs, "spark")))
        return runs

    def solo(self) -> DeduplicatingJob:
        self.solo_calls += 1
        return self

    def plan(self, scenario: Scenario) -> JobPlan:
        return DEDUPLICATING_PLAN


@pytest.mark.parametrize("stand_in", [DETECT, None])
def test_a_divergence_on_the_specs_input_stays_one_and_keeps_the_fields_the_job_reads(
    stand_in: str | None,
) -> None:
    job = DeduplicatingJob()
    result = check(parse_scenario(CLICKS), job, examples=0, stand_in=stand_in)
    failure = result.failure
    assert failure is not None and failure.mismatch
    assert job.solo_calls == 1
    assert job.given and all("click_id" in e.payload
                             for scenario in job.given for e in events_of(scenario.items))
    shrunk = list(events_of(failure.scenario.items))
    assert 2 <= len(shrunk) <= 3 and all("click_id" in e.payload for e in shrunk)
    assert all("cost" not in e.payload for e in shrunk)  # a field the job does not read goes
    assert failure.cause == ("the job deduplicates on click_id; the spec has no deduplicate "
                             "stage",)
    if stand_in == DETECT:
        assert failure.shrunk_on == "stand-in oracle:spark with the job's plan: deduplicate on click_id"


def test_a_job_whose_plan_cannot_be_read_keeps_every_field() -> None:
    class Unreadable(DeduplicatingJob):
        def plan(self, scenario: Scenario) -> JobPlan:
            raise InvalidSpec("--job", self.name, "has no plan", "none")

    job = Unreadable()
    result = check(parse_scenario(CLICKS), job, examples=0, stand_in=None)
    assert result.failure is not None and result.failure.cause == ()
    assert all(set(e.payload) == {"ts", "click_id", "campaign", "cost"}
               for scenario in job.given for e in events_of(scenario.items))
