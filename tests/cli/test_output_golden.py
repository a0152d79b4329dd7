"""Golden files for table output: replay, compare and profiles as plain text, CSV and JSON.

Regenerate with ``WINDTUNNEL_UPDATE_GOLDEN=1 pytest tests/cli/test_output_golden.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GOLDEN = Path(__file__).resolve().parent / "golden"
SIX = "tenzir,flink,spark,kdb,ekuiper,timeplus"
TRAILING = """\
name: trailing-closed-ends
time_unit: s
window: {kind: trailing, size: 10s, on: ts}
group_by: [host]
aggregate: {n: count()}
input:
  - {ts: 1, host: a}
  - {ts: 5, host: b}
  - {ts: 8, host: a}
  - {ts: 12, host: a}
"""

CASES = {
    "replay-brute-force.txt": ["replay", "examples/brute-force.yaml"],
    "replay-brute-force.csv": ["replay", "examples/brute-force.yaml", "--format", "csv"],
    "replay-brute-force.json": ["replay", "examples/brute-force.yaml", "--format", "json"],
    "replay-brute-force-ms.txt": ["replay", "examples/brute-force.yaml", "--times", "ms"],
    "replay-article-session.txt": ["replay", "examples/article-session.yaml"],
    "replay-trailing.txt": ["replay", "TRAILING"],
    "replay-ekuiper-sliding-iso.txt": [
        "replay", "examples/ekuiper-event-time-sliding.yaml", "--times", "iso"],
    "compare-six-profiles.txt": ["compare", "examples/six-profiles.yaml", "--profiles", SIX],
    "compare-six-profiles.csv": [
        "compare", "examples/six-profiles.yaml", "--profiles", SIX, "--format", "csv"],
    "profiles-spark.txt": ["profiles", "spark"],
}


def _args(args: list[str], tmp_path: Path) -> list[str]:
    out = []
    for arg in args:
        if arg == "TRAILING":
            path = tmp_path / "trailing.yaml"
            path.write_text(TRAILING)
            arg = str(path)
        elif arg.startswith("examples/"):
            arg = str(EXAMPLES / arg.removeprefix("examples/"))
        out.append(arg)
    return out


@pytest.mark.parametrize("golden", sorted(CASES))
def test_output_matches_the_golden_file(golden: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, _args(CASES[golden], tmp_path))
    assert result.exit_code == 0, result.output
    path = GOLDEN / golden
    if os.environ.get("WINDTUNNEL_UPDATE_GOLDEN"):
        path.write_text(result.stdout, encoding="utf-8")
    assert result.stdout == path.read_text(encoding="utf-8")
