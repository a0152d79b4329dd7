"""`windtunnel profiles`: every profile with every rule and its source."""

from __future__ import annotations

import json

from click.testing import CliRunner

from windtunnel.cli.main import cli
from windtunnel.oracle.model.rules import RULE_VALUES


def test_profiles_lists_every_profile_and_every_rule() -> None:
    result = CliRunner().invoke(cli, ["profiles"])
    assert result.exit_code == 0
    for name in ("tenzir:", "flink:", "spark:"):
        assert name in result.output
    assert all(rule in result.output for rule in RULE_VALUES)
    assert "measured with PySpark 4.3.0" in result.output


def test_profiles_json_gives_values_and_sources_and_rule_meanings() -> None:
    result = CliRunner().invoke(cli, ["profiles", "spark", "--format", "json", "--rules"])
    data = json.loads(result.output)
    spark = data["profiles"][0]
    assert spark["name"] == "spark"
    assert spark["rules"]["clock_moves"] == {"value": "batch", "source": spark["rules"]["clock_moves"]["source"]}
    assert "previous" in spark["rules"]["clock_moves"]["source"]
    assert "idle_timeout" in spark["unsupported"]
    assert data["rules"]["session_gap"]["values"] == ["inclusive", "exclusive"]


def test_an_unknown_profile_exits_2_with_one_line() -> None:
    result = CliRunner().invoke(cli, ["profiles", "storm"])
    assert result.exit_code == 2
    assert "profile=" in result.output and "tenzir" in result.output
    assert "Traceback" not in result.output
