"""Every command under the ``beam`` profile: replay (panes in tables and JSON lines), explain
(why a pane fired), plot (panes as bars), compare, generate's ground truth and profiles."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from windtunnel.cli.main import cli

CLICKS = str(Path(__file__).resolve().parents[2] / "examples" / "beam" / "clicks.yaml")


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_replay_shows_panes_in_the_table_and_in_json_lines() -> None:
    table = run("replay", CLICKS)
    assert "clicks=3 | pane 0 early, first, at 59.999s" in table
    assert "expectations held" in table
    lines = [json.loads(x) for x in run("replay", CLICKS, "--format", "jsonl").splitlines()
             if x.startswith("{")]
    assert lines[1]["pane"] == {"timing": "on_time", "index": 1, "nonspeculative_index": 0,
                                "first": False, "last": False, "timestamp_ms": 59999}
    assert all("pane" in x for x in lines if x["type"] == "emit")


def test_explain_says_which_trigger_part_fired_each_pane() -> None:
    text = run("explain", CLICKS, "--seq", "2")
    assert "fired by AfterWatermark early: AfterCount(3): 3 elements in the pane" in text


def test_plot_draws_each_pane_of_a_window(tmp_path: Path) -> None:
    out = tmp_path / "clicks.html"
    assert "5 window bars" in run("plot", CLICKS, "--out", str(out))
    assert "(pane 2 late)" in out.read_text(encoding="utf-8")


def test_compare_runs_beam_beside_other_profiles() -> None:
    six = str(Path(CLICKS).parents[1] / "six-profiles.yaml")
    text = run("compare", six, "--profiles", "tenzir,beam")
    assert "beam: own operator" in text


def test_generate_labels_ground_truth_under_beam(tmp_path: Path) -> None:
    out = tmp_path / "bare.jsonl"
    text = run("generate", "bare", "-n", "300", "--late-fraction", "0.1",
               "--truth-profile", "beam", "-o", str(out), "--format", "jsonl")
    assert "dropped by design (profile beam)" in text
    assert any('"late"' in line for line in out.read_text(encoding="utf-8").splitlines())


def test_profiles_lists_beam_with_its_own_rules_only() -> None:
    text = run("profiles", "beam")
    assert "beam_watermark" in text and "kinds: fixed, session, beam" in text
    assert "beam_watermark" not in run("profiles", "spark")
