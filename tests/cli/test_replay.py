"""`windtunnel replay`: formats, expectations and exit codes 0/1/2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

SCENARIO = """
window: {size: 10s, on: ts}
aggregate: {n: count()}
input:
  - {ts: 1000}
  - {ts: 12000}
  - {ts: 2000}
expect:
  emissions:
    - {window: [0, 10000], row: {n: EXPECTED}}
    - {window: [10000, 20000], row: {n: 1}, reason: end_of_input}
  drops: [{seq: 2, reason: late}]
"""


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def invoke(*args: str) -> object:
    return CliRunner().invoke(cli, list(args))


def test_jsonl_output_follows_the_contract(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["replay", write(tmp_path, SCENARIO.replace("EXPECTED", "1")), "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0] == {
        "type": "emit", "window": {"start_ms": 0, "end_ms": 10000}, "group": None, "row": {"n": 1},
        "reason": "close", "after_seq": 1, "wall_ms": 0, "partial": False,
    }
    assert lines[1]["type"] == "drop" and lines[1]["seq"] == 2 and lines[1]["reason"] == "late"
    assert lines[1]["windows"] == [{"start_ms": 0, "end_ms": 10000}]
    assert lines[2]["reason"] == "end_of_input"


def test_table_output(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["replay", write(tmp_path, SCENARIO.replace("EXPECTED", "1"))])
    assert result.exit_code == 0
    header, _, first, *_ = result.stdout.splitlines()
    assert header.split()[:4] == ["type", "window", "group", "reason"]
    assert first.split()[:4] == ["emit", "[0,10000)", "close", "1"]  # ungrouped: no group


def test_failed_expectation_exits_1_with_the_difference(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["replay", write(tmp_path, SCENARIO.replace("EXPECTED", "5"))])
    assert result.exit_code == 1
    assert "missing emission" in result.stderr and '"n": 5' in result.stderr
    assert "unexpected emission" in result.stderr


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("window: {size: 10 parsecs}\ninput: []\n", "window.size='10 parsecs'"),
        ("window: {size: 10s, every: 20s}\ninput: []\n", "window.every='20s'"),
        ("window: {size: 10s}\ninput: [{at: 5}, {at: 1}]\n", "input[1].at=1"),
    ],
)
def test_invalid_input_exits_2_with_one_line_and_no_traceback(tmp_path: Path, text: str, needle: str) -> None:
    result = CliRunner().invoke(cli, ["replay", write(tmp_path, text)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and needle in result.stderr
    assert "Traceback" not in result.stderr


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--debug", "replay", write(tmp_path, "window: {size: x}\ninput: []\n")])
    assert result.exit_code == 2
    assert "Traceback" in result.stderr


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["replay", write(tmp_path, "input: []"), "--format", "xml"])
    assert result.exit_code == 2


@pytest.mark.parametrize("name", ["hourly-severity", "brute-force", "password-spraying"])
def test_tenzir_examples_replay_with_their_expectations(name: str) -> None:
    result = CliRunner().invoke(cli, ["replay", str(EXAMPLES / f"{name}.yaml"), "--format", "jsonl"])
    assert result.exit_code == 0, result.stderr
    assert f"expectations held ({name})" in result.stderr
