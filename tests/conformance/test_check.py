"""check(): comparison rules, batching, stand-ins, the report and the counterexample file."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from windtunnel.conformance.check import check, compare_run
from windtunnel.conformance.counterexample import write_counterexample
from windtunnel.conformance.report import render, summary
from windtunnel.conformance.targets import (
    TargetRun,
    callable_target,
    oracle_micro_batches,
    oracle_outputs,
    oracle_target,
)
from windtunnel.oracle.engine import replay
from windtunnel.oracle.expect import check as check_expect
from windtunnel.oracle.model.results import Drop, Emission, Output
from windtunnel.oracle.scenario import Scenario, load_scenario, parse_scenario

SPEC_DATA: dict[str, Any] = {
    "name": "logins",
    "window": {"kind": "fixed", "size": "10s", "tolerance": "2s", "on": "ts"},
    "group_by": ["user"],
    "aggregate": {"n": "count()", "total": "sum(bytes)"},
    "input": [{"ts": 1000, "user": "a", "bytes": 1}, {"ts": 15000, "user": "a", "bytes": 2},
              {"ts": 3000, "user": "a", "bytes": 3}],
}
SPEC = parse_scenario(SPEC_DATA)


@dataclass
class Counting:
    """The oracle under ``profile`` as a target, counting calls and scenarios."""

    profile: str = "tenzir"
    name: str = "counting"
    reports_drops: bool = True
    reports_timing: bool = False
    calls: list[int] = field(default_factory=list)

    def run_many(self, scenarios: Any) -> list[TargetRun]:
        self.calls.append(len(scenarios))
        return [TargetRun(oracle_outputs(s, self.profile)) for s in scenarios]


def test_agreement_checks_the_own_input_and_every_example_in_batches() -> None:
    target = Counting()
    result = check(SPEC, target, examples=45, seed=0, batch_size=20)
    assert result.failure is None and result.checked == 46
    assert target.calls == [1, 20, 20, 5]  # the own input alone first, then the 45 examples
    assert "46 scenarios" in summary(result) and "scenarios/min" in summary(result)


def test_drops_count_only_when_the_target_reports_them() -> None:
    expected = oracle_outputs(SPEC)
    assert any(isinstance(o, Drop) for o in expected)
    emissions = TargetRun(tuple(o for o in expected if isinstance(o, Emission)))
    assert not compare_run(expected, (), emissions, drops=False, timing=False)
    assert compare_run(expected, (), emissions, drops=True, timing=False).missing


def test_timing_counts_only_when_reported() -> None:
    expected = oracle_outputs(SPEC)
    batches = oracle_micro_batches(expected, SPEC.items)
    shifted = tuple(None if b is None else b + 1 for b in batches)
    late = TargetRun(expected, shifted)
    assert not compare_run(expected, batches, TargetRun(expected, batches), drops=True, timing=True)
    mismatch = compare_run(expected, batches, late, drops=True, timing=True)
    assert mismatch.timing and not mismatch.missing and not mismatch.unexpected
    assert not compare_run(expected, batches, late, drops=True, timing=False)


def test_profile_option_holds_the_target_to_another_profile() -> None:
    assert check(SPEC, oracle_target("spark"), profile="spark", examples=20).failure is None
    assert check(SPEC, oracle_target("spark"), examples=20).failure is not None


def emissions(profile: str) -> Any:
    def run(scenario: Scenario) -> list[Output]:
        return [o for o in oracle_outputs(scenario, profile) if isinstance(o, Emission)]
    return run


def test_stand_in_shrinks_and_is_confirmed_on_the_target() -> None:
    stock = callable_target(emissions("spark"), name="stock")
    result = check(SPEC, stock, examples=50, stand_in="spark")
    assert result.failure is not None
    assert result.failure.shrunk_on == "stand-in oracle:spark"
    assert result.failure.mismatch  # confirmed on the target itself


def test_a_stand_in_that_behaves_otherwise_is_not_used() -> None:
    flinkish = callable_target(emissions("flink"), name="flinkish")
    result = check(SPEC, flinkish, examples=50, stand_in="spark")
    assert result.failure is not None and result.failure.shrunk_on == "flinkish"


def test_report_and_counterexample_file(tmp_path: Path) -> None:
    stock = callable_target(emissions("spark"), name="stock")
    result = check(SPEC, stock, examples=10)
    failure = result.failure
    assert failure is not None
    text = render(result, failure)
    assert "missing: oracle tenzir emits" in text and "unexpected: stock emits" in text
    assert "first divergent window: [0,10000)" in text
    assert "\x1b[" not in text and "\x1b[" in render(result, failure, color=True)
    timeline = text.split("timeline under profile tenzir")[1].splitlines()
    assert any(line.startswith("  *") for line in timeline)
    path = write_counterexample(failure, SPEC_DATA, target="stock", profile="tenzir",
                                rerun="--target stock", out_dir=tmp_path)
    assert "windtunnel check" in path.read_text().splitlines()[2]
    again = load_scenario(path)
    assert again.items == failure.scenario.items and again.profile.name == "tenzir"
    assert again.expect is not None and not check_expect(again.expect, replay(again).outputs)
    assert yaml.safe_load(path.read_text())["expect"]["emissions"]
