"""``--target beam``: Beam's own trigger driver (``GeneralTriggerDriver``) held to the
``beam`` profile pane for pane on random streams of every window kind and trigger family
(a sample; the full run is ``python benchmarks/beam_agreement.py``, docs/engines.md).
Skipped without the ``[beam]`` extra."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli
from windtunnel.conformance.beam.families import TRIGGER_FAMILIES, WINDOW_KINDS, cell_specs
from windtunnel.conformance.check import compare_run
from windtunnel.conformance.generate import generate
from windtunnel.conformance.targets import oracle_micro_batches_of, oracle_outputs, target_named
from windtunnel.oracle import InvalidSpec
from windtunnel.oracle.scenario import parse_scenario

ROOT = Path(__file__).resolve().parents[3]
pytestmark = [
    pytest.mark.beam,
    pytest.mark.skipif(importlib.util.find_spec("apache_beam") is None,
                       reason="needs apache-beam (the [beam] extra)"),
]
STREAMS_PER_CELL = 6


@pytest.mark.parametrize("kind", list(WINDOW_KINDS))
def test_beams_trigger_driver_agrees_with_the_profile_on_random_streams(kind: str) -> None:
    target = target_named("beam")
    for family in TRIGGER_FAMILIES:
        scenarios = [s for spec in cell_specs(kind, family, 3)
                     for s in generate(spec, STREAMS_PER_CELL // 3, seed=7)]
        for scenario, run in zip(scenarios, target.run_many(scenarios), strict=True):
            want = oracle_outputs(scenario)
            mismatch = compare_run(want, oracle_micro_batches_of(scenario, want), run,
                                   drops=False, timing=True)
            assert not mismatch, f"{scenario.name} ({family}): {mismatch}"


def test_a_profile_that_reads_beam_wrongly_is_caught() -> None:
    # the same streams held to the spec with the other accumulation mode must diverge
    spec = cell_specs("fixed", "count", 3)[2]  # Repeatedly(AfterCount(1)), accumulating
    other = "discarding" if spec.query.window.accumulating else "accumulating"
    wrong = replace(spec, query=replace(spec.query, window=replace(
        spec.query.window, accumulation=other)))
    scenarios = list(generate(spec, 20, seed=3))
    runs = target_named("beam").run_many(scenarios)
    assert any(compare_run(oracle_outputs(replace(s, query=wrong.query)), (), run,
                           drops=False, timing=False) for s, run in zip(scenarios, runs,
                                                                        strict=True))


@pytest.mark.parametrize("rule", [{"beam_expiry": "reaches"}, {"beam_processing_time": "guide"}])
def test_the_driver_checks_the_engine_readings_only(rule: dict[str, str]) -> None:
    spec = parse_scenario({"profile": "beam", "rules": rule, "input": [{"ts": 1}],
                           "window": {"kind": "fixed", "size": 10}})
    with pytest.raises(InvalidSpec) as error:
        target_named("beam").run_many([spec])
    assert error.value.field == f"rules.{next(iter(rule))}"


def test_check_runs_beam_specs_on_the_driver_by_default() -> None:
    result = CliRunner().invoke(cli, ["check", str(ROOT / "examples/beam/clicks.yaml"),
                                      "--examples", "30"])
    assert result.exit_code == 0, result.output
    assert "against beam (profile beam)" in result.output and "scenarios/min" in result.output


@pytest.mark.process  # a fresh Python
def test_the_agreement_benchmark_runs_at_a_tiny_size() -> None:
    done = subprocess.run([sys.executable, "benchmarks/beam_agreement.py", "--examples", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "20/20 streams agree with GeneralTriggerDriver" in done.stdout
