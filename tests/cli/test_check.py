"""`windtunnel check`: exit 0 on agreement, 1 with a replayable counterexample, 2 on bad input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli

SPEC = """
name: logins
window: {kind: fixed, size: 10s, on: ts, tolerance: 2s}
group_by: [user]
aggregate: {n: count(), total: sum(bytes)}
input:
  - {ts: 1000, user: alice, bytes: 5}
  - {ts: 4000, user: bob, bytes: 3}
"""
RATE = re.compile(r"checked (\d+) scenarios .* \(([\d.]+) scenarios/min\)")


def spec_file(tmp_path: Path, text: str = SPEC) -> str:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return str(path)


def invoke(*args: str) -> object:
    return CliRunner().invoke(cli, ["check", *args])


def test_agreement_exits_0_with_the_rate_on_the_last_line(tmp_path: Path) -> None:
    result = invoke(spec_file(tmp_path), "--target", "oracle:tenzir", "--examples", "30")
    assert result.exit_code == 0, result.output
    match = RATE.search(result.output.splitlines()[-1])
    assert match and match.group(1) == "31"


def test_python_callable_target(tmp_path: Path) -> None:
    result = invoke(spec_file(tmp_path), "--target",
                    "python:windtunnel.conformance.targets:oracle_outputs", "--examples", "5")
    assert result.exit_code == 0, result.output


def test_divergence_exits_1_and_writes_a_counterexample_replay_loads(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = invoke(spec_file(tmp_path), "--target", "oracle:spark", "--examples", "20",
                    "--out", str(out))
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert RATE.search(lines[-1]) and "1 divergence" in lines[-1]
    assert "missing: oracle tenzir emits" in result.output
    assert "first divergent window" in result.output
    (path,) = out.glob("*.yaml")
    assert f"counterexample written to {path}" in result.output
    replayed = CliRunner().invoke(cli, ["replay", str(path)])
    assert replayed.exit_code == 0, replayed.output
    again = invoke(str(path), "--target", "oracle:spark", "--examples", "0",
                   "--out", str(tmp_path / "again"))
    assert again.exit_code == 1


def test_profile_option(tmp_path: Path) -> None:
    result = invoke(spec_file(tmp_path), "--target", "oracle:spark", "--profile", "spark",
                    "--examples", "10")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--target", "nope"], "spark-stock"),
        (["--target", "oracle:nope"], "nope"),
        (["--job", "no_such_module_xyz:job"], "no_such_module_xyz"),
        (["--job", "a:b", "--target", "spark"], "--job"),
        (["--target", "oracle:tenzir", "--profile", "nope"], "nope"),
    ],
)
def test_invalid_input_exits_2_with_one_line(tmp_path: Path, args: list[str], words: str) -> None:
    result = invoke(spec_file(tmp_path), *args)
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1 and words in result.output
    assert "Traceback" not in result.output


def test_invalid_spec_exits_2(tmp_path: Path) -> None:
    result = invoke(spec_file(tmp_path, "window: {kind: fixed}\ninput: []\n"),
                    "--target", "oracle:tenzir")
    assert result.exit_code == 2 and "window.size" in result.output


def test_the_report_reads_times_in_the_spec_unit(tmp_path: Path) -> None:
    text = SPEC.replace("name: logins", "name: logins\ntime_unit: s").replace(
        "ts: 1000", "ts: 1").replace("ts: 4000", "ts: 4")
    result = invoke(spec_file(tmp_path, text), "--target", "oracle:spark", "--examples", "0",
                    "--out", str(tmp_path / "out"))
    assert result.exit_code == 1, result.output
    assert "first divergent window: [0s,10s)" in result.output
    assert "times in s" in result.output and "10000" not in result.output
    assert '{"event": {"ts": 1, "user": "alice", "bytes": 5}}' in result.output


def test_a_generated_scenario_starting_at_an_epoch_is_checked(tmp_path: Path) -> None:
    # `generate --format scenario` starts the wall clock at an epoch time; the generated
    # streams must start there too (they once arrived at 0 and the check exited 2)
    spec = tmp_path / "pay.yaml"
    made = CliRunner().invoke(
        cli, ["generate", "payments", "--format", "scenario", "--events", "60", "--seed", "3", "--out", str(spec)]
    )
    assert made.exit_code == 0, made.output
    result = invoke(str(spec), "--target", "oracle:tenzir", "--examples", "20")
    assert result.exit_code == 0, result.output
    assert "checked 21 scenarios" in result.output and "0 divergences" in result.output
