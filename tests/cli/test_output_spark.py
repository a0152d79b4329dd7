"""``replay --engine spark|both``: progress lines on stderr (never in stdout), and the
drops on Spark carry their group like the oracle's (compared line by line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli

pytestmark = pytest.mark.spark

GROUPED = """\
group_by: [k]
window: {kind: %s, on: ts}
aggregate: {n: count()}
input:
  - {ts: 100, k: a}
  - {ts: 1, k: a}
  - {ts: null, k: b}
  - {ts: 200, k: b}
"""


@pytest.mark.parametrize("window", ["fixed, size: 10", "session, gap: 10"])
def test_spark_drops_carry_their_group_and_progress_goes_to_stderr(tmp_path: Path, window: str) -> None:
    path = tmp_path / "grouped.yaml"
    path.write_text(GROUPED % window)
    result = CliRunner().invoke(
        cli, ["replay", str(path), "--engine", "both", "--format", "jsonl", "--progress"]
    )
    assert result.exit_code == 0, result.output
    drops = [json.loads(line) for line in result.stdout.splitlines() if '"drop"' in line]
    assert {(d["seq"], d["group"]) for d in drops} == {(1, "a"), (2, "b")}
    assert "micro-batch" not in result.stdout and "Spark" not in result.stdout
    lines = result.stderr.splitlines()
    assert lines[0] == "starting Spark (local[2])..."
    assert lines[1].startswith("Spark started in ") and lines[1].endswith(" s")
    batches = [line for line in lines if line.startswith("micro-batch ")]
    assert batches and batches[0].startswith("micro-batch 1/")
    assert any(line.startswith("spark matches the oracle") for line in lines)


def test_progress_lines_with_rate_and_eta_when_piped_unless_turned_off(tmp_path: Path) -> None:
    path = tmp_path / "grouped.yaml"
    path.write_text(GROUPED % "fixed, size: 10")
    result = CliRunner().invoke(cli, ["replay", str(path), "--engine", "spark"])
    assert result.exit_code == 0, result.output
    batches = [line for line in result.stderr.splitlines() if line.startswith("micro-batch ")]
    assert batches[0].startswith("micro-batch 1/") and "micro-batches/s, ETA " in batches[0]
    assert "100%" in batches[-1]
    quiet = CliRunner().invoke(cli, ["replay", str(path), "--engine", "spark", "--no-progress"])
    assert quiet.exit_code == 0, quiet.output
    assert "micro-batch" not in quiet.stderr and "starting Spark" not in quiet.stderr


def test_stock_spark_progress_counts_its_closing_micro_batch(tmp_path: Path) -> None:
    path = tmp_path / "stock.yaml"
    path.write_text("profile: spark\n" + (GROUPED % "fixed, size: 10").replace("  - {ts: null, k: b}\n", ""))
    result = CliRunner().invoke(cli, ["replay", str(path), "--engine", "spark", "--progress"])
    assert result.exit_code == 0, result.output
    batches = [line for line in result.stderr.splitlines() if line.startswith("micro-batch ")]
    total = len(batches)
    assert batches[-1].startswith(f"micro-batch {total}/{total}: 0 events in; 100%")
