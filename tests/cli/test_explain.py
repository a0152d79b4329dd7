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


LATE = """
name: late-drops
window: {kind: KIND, on: ts, tolerance: 5s}
group_by: [device]
aggregate: {readings: count()}
input:
  - {ts: 100000, device: d1}
  - {ts: 1000, device: d1}
  - batch: [{ts: 5000, device: d2}, {ts: 300000, device: d2}]
  - {ts: 4000, device: d2}
"""


@pytest.mark.parametrize("kind", ["{kind: session, gap: 30s", "{kind: fixed, size: 30s"])
@pytest.mark.parametrize("profile", ["spark", "flink", "ekuiper", "timeplus"])
def test_a_watermark_profile_speaks_of_the_watermark_never_of_the_clock(
    tmp_path: Path, kind: str, profile: str
) -> None:
    path = tmp_path / "late.yaml"
    path.write_text(LATE.replace("{kind: KIND", kind))
    result = CliRunner().invoke(cli, ["explain", str(path), "--profile", profile])
    if result.exit_code == 2:  # a window kind the profile does not have
        pytest.skip(result.output.strip())
    assert result.exit_code == 0, result.output
    words = result.stdout.replace("wall clock", "").replace("_clock", "")
    assert "clock" not in words
    assert "watermark" in words and "late" in words


def test_under_spark_a_late_session_reads_the_watermark_it_missed(tmp_path: Path) -> None:
    """Tolerance 5 s: the watermark after 100000 is 95000; the session of 5000 (gap 30 s)
    ends at 35000, so it would be final once the watermark reached 35000."""
    path = tmp_path / "late.yaml"
    path.write_text(LATE.replace("{kind: KIND", "{kind: session, gap: 30s"))
    result = CliRunner().invoke(cli, ["explain", str(path), "--profile", "spark", "--drops"])
    assert ("its session would be final once the watermark reached 35000; the watermark is at "
            "95000") in result.stdout
