"""``{watermark: T}`` through ``windtunnel replay``: JSON lines, and the exit-2 rejection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli

SCENARIO = """
profile: {profile}
window: {{kind: fixed, size: 10s}}
aggregate: {{n: count()}}
input:
  - {{event: {{ts: 1000}}, at: 500}}
  - {{advance: 2s}}
  - {{watermark: 10000}}
  - {{ts: 4000}}
"""


@pytest.mark.parametrize("profile", ["tenzir", "flink", "timeplus"])
def test_replay_reports_the_fired_window_and_the_late_event(tmp_path: Path, profile: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(profile=profile))
    result = CliRunner().invoke(cli, ["replay", str(path), "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert lines[0]["type"] == "emit" and lines[0]["reason"] == "close"
    # the watermark took no seq: after_seq is the event before it; wall_ms the wall clock then
    assert (lines[0]["after_seq"], lines[0]["wall_ms"]) == (0, 2500)
    assert lines[1] == {**lines[1], "type": "drop", "seq": 1, "reason": "late"}


@pytest.mark.parametrize(
    ("profile", "args", "needle"),
    [
        ("kdb", [], "profile kdb cannot take an injected watermark"),
        ("spark", ["--engine", "spark"], "the Spark engine cannot take an injected watermark"),
    ],
)
def test_replay_rejects_the_item_with_one_line_and_exit_2(
    tmp_path: Path, profile: str, args: list[str], needle: str
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(profile=profile))
    result = CliRunner().invoke(cli, ["replay", str(path), *args])
    assert result.exit_code == 2
    assert needle in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
