"""`windtunnel compare FILE --profiles ...`: table and JSON, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from windtunnel.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_compare_table_marks_differences_and_names_the_rule() -> None:
    result = CliRunner().invoke(cli, ["compare", str(EXAMPLES / "article-tumbling.yaml"), "--profiles", "tenzir,spark", "--rows-only"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "tenzir" in lines[0] and "spark" in lines[0]
    differing = [line for line in lines if line.startswith("*")]
    assert len(differing) == 1
    assert "[180s,240s)" in differing[0] and "spark: end_of_input" in differing[0]
    assert lines[-1] == "1 difference across tenzir, spark"


def test_compare_json() -> None:
    result = CliRunner().invoke(cli, ["compare", str(EXAMPLES / "article-session.yaml"), "--format", "json"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert [p["name"] for p in data["profiles"]] == ["tenzir", "flink", "spark"]
    assert data["differences"] > 0


def test_compare_rejects_a_single_profile_with_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["compare", str(EXAMPLES / "article-session.yaml"), "--profiles", "tenzir"])
    assert result.exit_code == 2
    assert "--profiles" in result.output and "Traceback" not in result.output


def test_compare_reports_a_bad_file_with_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("window: {kind: session}\ninput: []\n")
    result = CliRunner().invoke(cli, ["compare", str(path)])
    assert result.exit_code == 2
    assert "window.gap" in result.output


def test_compare_runs_all_six_profiles_on_one_stream() -> None:
    profiles = "tenzir,flink,spark,kdb,timeplus,ekuiper"
    result = CliRunner().invoke(
        cli, ["compare", str(EXAMPLES / "six-profiles.yaml"), "--profiles", profiles])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert all(name in lines[0] for name in profiles.split(","))
    assert "not run" not in result.output
    assert "kdb: own operator + empty_windows" in result.output
    assert lines[-1] == "10 differences across tenzir, flink, spark, kdb, timeplus, ekuiper"


def test_a_clause_error_names_the_offending_token_with_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "bad-clause.yaml"
    path.write_text('profile: kdb\nquery: ".qsp.window.tumbling[00:00:10; `time; .qsp.use '
                    '``timeAssigner!(::;00:00:01)]"\ninput: [{time: 1}]\n')
    result = CliRunner().invoke(cli, ["compare", str(path), "--profiles", "kdb,tenzir"])
    assert result.exit_code == 2
    assert "'`timeAssigner' at offset" in result.output
    assert "supported:" in result.output and "Traceback" not in result.output
