"""Stand-ins found for a job: the spec's variant the job matches on the failing stream is
shrunk on, and the small counterexample is confirmed on the job."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest

from windtunnel.conformance.check import DETECT, check
from windtunnel.conformance.stand_ins import variants
from windtunnel.conformance.targets import TargetRun, oracle_outputs
from windtunnel.oracle.model.conditions import parse_condition
from windtunnel.oracle.model.results import Emission
from windtunnel.oracle.model.stages import Where
from windtunnel.oracle.model.stream import events_of
from windtunnel.oracle.scenario import Scenario, parse_scenario

SPEC = parse_scenario({
    "name": "logins",
    "profile": "spark",
    "window": {"kind": "fixed", "size": "10s", "tolerance": "4s", "on": "ts"},
    "group_by": ["user"],
    "aggregate": {"n": "count()", "total": "sum(bytes)"},
    "fields": {"user": {"choices": ["alice", "bob"], "nulls": 0.3},
               "bytes": {"type": "int", "min": 0, "max": 9}},
    "input": [],
})


CALL = 10
"""Streams per target call: a check draws only the streams up to the call that fails."""


def _half_tolerance(scenario: Scenario) -> Scenario:
    window = replace(scenario.query.window, tolerance_ms=2000)
    return replace(scenario, query=replace(scenario.query, window=window))


def _no_null_users(scenario: Scenario) -> Scenario:
    stage = Where(parse_condition("user != null", "where"))
    return replace(scenario, rule_overrides={"where_null_equals": "compared"},
                   query=replace(scenario.query, stages=(stage,)))


@dataclass
class Buggy:
    """A job stand-in: the oracle on a changed spec (a bug), counting its calls."""

    bug: object
    name: str = "job"
    reports_drops: bool = False
    reports_timing: bool = False
    calls: list[int] = field(default_factory=list)

    def run_many(self, scenarios: list[Scenario]) -> list[TargetRun]:
        self.calls.append(len(scenarios))
        return [TargetRun(oracle_outputs(self.bug(s))) for s in scenarios]  # type: ignore[operator]


@pytest.mark.parametrize(
    ("bug", "label"),
    [(_half_tolerance, "tolerance 2s"), (_no_null_users, "where user != null")],
)
def test_a_job_is_shrunk_on_the_variant_it_matches(bug: object, label: str) -> None:
    job = Buggy(bug)
    result = check(SPEC, job, examples=200, seed=3, stand_in=DETECT, shrink_seconds=30,
                   batch_size=CALL)
    failure = result.failure
    assert failure is not None
    assert failure.shrunk_on.startswith(f"stand-in oracle:spark with {label}")
    assert len(list(events_of(failure.scenario.items))) <= 3
    # the job ran the checked scenarios, the failing stream once more, and the confirmation
    assert len(job.calls) <= -(-result.checked // CALL) + 3


def test_no_variant_matches_a_job_that_is_wrong_otherwise() -> None:
    def doubled(scenario: Scenario) -> list[object]:
        return [replace(o, row={**o.row, "n": 2 * o.row["n"]})
                for o in oracle_outputs(scenario) if isinstance(o, Emission)]

    job = Buggy(lambda s: s)
    job.run_many = lambda scenarios: [TargetRun(tuple(doubled(s))) for s in scenarios]  # type: ignore[method-assign]
    result = check(SPEC, job, examples=50, stand_in=DETECT, shrink_seconds=1, batch_size=CALL)
    assert result.failure is not None and result.failure.shrunk_on == "job"


def test_variants_leave_out_what_the_oracle_cannot_run() -> None:
    labels = [v.label for v in variants(SPEC, "spark")]
    assert labels[:3] == ["tolerance 2s", "tolerance 0ms", "tolerance 8s"]
    assert "where user != null (filtered_clock: moves)" in labels
    assert "where bytes != null (filtered_clock: moves)" in labels
    assert "rule clock_floor: none" in labels  # the spark profile's own value is left out
    assert "rule clock_floor: epoch" not in labels
