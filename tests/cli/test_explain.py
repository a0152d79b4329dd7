"""`windtunnel explain`: the fate of one event, computed by the oracle itself."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from windtunnel.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_explains_a_late_drop() -> None:
    result = CliRunner().invoke(cli, ["explain", str(EXAMPLES / "brute-force.yaml"), "--seq", "4"])
    assert result.exit_code == 0
    assert "dropped (late)" in result.stdout and "idle_timeout force-closed it" in result.stdout
    assert "delivered to" not in result.stdout


def test_explains_deliveries_and_their_emissions() -> None:
    # seq 4 of hourly-severity is out of order but within tolerance: it reaches [00:00, 01:00)
    result = CliRunner().invoke(cli, ["explain", str(EXAMPLES / "hourly-severity.yaml"), "--seq", "4"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[1] == "  delivered to [1767225600000, 1767229200000)"
    assert lines[2].startswith("    emitted (close) after seq 5")


def test_unknown_seq_exits_2() -> None:
    result = CliRunner().invoke(cli, ["explain", str(EXAMPLES / "hourly-severity.yaml"), "--seq", "99"])
    assert result.exit_code == 2
    assert "--seq=99: no such event" in result.stderr
