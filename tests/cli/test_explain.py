"""`windtunnel explain`: golden accounts (WINDTUNNEL_UPDATE_GOLDEN=1 rewrites them), selection
options and one-line errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GOLDEN = Path(__file__).resolve().parent / "golden"

CASES = [
    ("six-profiles.yaml", "tenzir"),
    ("six-profiles.yaml", "spark"),
    ("six-profiles.yaml", "ekuiper"),
    ("brute-force.yaml", None),  # idle timeout
    ("article-session.yaml", None),  # sessions
    ("kdb-count.yaml", None),  # count windows
]


@pytest.mark.parametrize(("example", "profile"), CASES)
def test_explain_matches_the_golden_file(example: str, profile: str | None) -> None:
    args = ["explain", str(EXAMPLES / example)] + (["--profile", profile] if profile else [])
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    golden = GOLDEN / f"explain-{Path(example).stem}{'-' + profile if profile else ''}.txt"
    if os.environ.get("WINDTUNNEL_UPDATE_GOLDEN"):
        golden.write_text(result.stdout, encoding="utf-8")
    assert result.stdout == golden.read_text(encoding="utf-8")


def test_seq_and_drops_select_events() -> None:
    path = str(EXAMPLES / "brute-force.yaml")
    result = CliRunner().invoke(cli, ["explain", path, "--drops"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines and all("dropped (" in line for line in lines)
    assert any("force-closed by the idle timeout at wall time" in line for line in lines)
    one = CliRunner().invoke(cli, ["explain", path, "--seq", "0", "--seq", "1"])
    assert [line.split()[0] for line in one.stdout.splitlines()] == ["#0", "#1"]


def test_json_format() -> None:
    result = CliRunner().invoke(
        cli, ["explain", str(EXAMPLES / "six-profiles.yaml"), "--profile", "spark", "--format", "json"]
    )
    data = json.loads(result.stdout)
    assert data["profile"] == "spark" and len(data["items"]) == 6


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--seq", "99"], "--seq=99: no such event"), (["--profile", "nope"], "unknown profile")],
)
def test_bad_input_exits_2_with_one_line(args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["explain", str(EXAMPLES / "hourly-severity.yaml"), *args])
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
