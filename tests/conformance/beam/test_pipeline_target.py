"""``--beam-transform module:function`` and ``--target beam-direct``: Beam pipelines on the
DirectRunner with ``TestStream``, one per stream, held to the ``beam`` profile; a stalled
pipeline is stopped and named; a divergence says whether it is the DirectRunner's or the
transform's. Skipped without the ``[beam]`` extra."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli
from windtunnel.conformance.check import compare_run
from windtunnel.conformance.targets import oracle_outputs
from windtunnel.oracle.scenario import load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[3]
SPEC = ROOT / "examples/beam/clicks.yaml"
pytestmark = [
    pytest.mark.beam,
    pytest.mark.process,  # Beam's DirectRunner: an engine, and the stall test waits on it
    pytest.mark.skipif(importlib.util.find_spec("apache_beam") is None,
                       reason="needs apache-beam (the [beam] extra)"),
]


def test_the_example_transform_gives_the_specs_panes_on_the_directrunner(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from windtunnel.conformance.targets.beam import BeamPipelineTarget

    monkeypatch.syspath_prepend(str(ROOT))
    scenario = load_scenario(SPEC)
    for target in (BeamPipelineTarget("examples.beam.transforms:click_counts"),
                   BeamPipelineTarget()):
        (run,) = target.run_many([scenario])
        assert not compare_run(oracle_outputs(scenario), (), run, drops=False, timing=False,
                               ignored=target.ignored), target.name
        assert target.stalls == []


def test_a_broken_transform_is_shrunk_to_a_counterexample_file(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT))
    result = CliRunner().invoke(cli, [
        "check", str(SPEC), "--beam-transform", "examples.beam.transforms:discarding_counts",
        "--examples", "0", "--shrink-seconds", "5", "--out", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert "your transform diverges" in result.output
    (written,) = tmp_path.glob("*.yaml")
    assert load_scenario(written).profile.name == "beam"


def test_a_pipeline_left_with_a_processing_time_timer_is_stopped_and_named() -> None:
    from windtunnel.conformance.beam.pipeline import run_pipeline

    scenario = parse_scenario({
        "profile": "beam", "aggregate": {"n": "count()"},
        "window": {"kind": "beam", "window_fn": "FixedWindows(10ms)",
                   "trigger": "Repeatedly(AfterProcessingTime(5ms))", "accumulation": "discarding"},
        "input": [{"event": {"ts": 1}, "at": 0}, {"advance": 6}, {"ts": 2}]})
    outputs, stalled = run_pipeline(scenario)
    assert "processing-time timer is still pending" in stalled
    assert [dict(o.row) for o in outputs] == [{"n": 1}]  # the first pane; the second waits


def test_an_unloadable_transform_is_an_input_error() -> None:
    result = CliRunner().invoke(cli, ["check", str(SPEC), "--beam-transform", "no_such:fn"])
    assert result.exit_code == 2
    assert "--beam-transform" in result.output and "not found" in result.output


def test_the_directrunner_reads_a_late_panes_timing_against_its_held_output_watermark() -> None:
    # 10 moves the watermark to 10, so 0 is late for [0, 10) (lateness 5): the profile and
    # Beam's trigger driver say late; the DirectRunner passes its GroupByKey's output
    # watermark, held at [10, 20)'s earliest time (10 - 1 us), and the pane comes out early
    from windtunnel.conformance.targets.beam import BeamPipelineTarget, beam_target

    scenario = parse_scenario({
        "profile": "beam", "aggregate": {"n": "count()"}, "group_by": "k",
        "window": {"kind": "beam", "window_fn": "FixedWindows(10ms)", "allowed_lateness": 5,
                   "timestamp_combiner": "earliest"},
        "input": [{"ts": 10, "k": "a"}, {"ts": 0, "k": "a"}]})
    want = oracle_outputs(scenario)
    (driver,) = beam_target().run_many([scenario])
    assert not compare_run(want, (), driver, drops=False, timing=False)
    direct = BeamPipelineTarget()
    (run,) = direct.run_many([scenario])
    mismatch = compare_run(want, (), run, drops=False, timing=False, ignored=direct.ignored)
    assert [(o.window.start_ms, o.pane.timing) for o in mismatch.unexpected] == [(0, "early")]  # type: ignore[attr-defined]
    assert direct.whose(scenario, run) == "engine"
