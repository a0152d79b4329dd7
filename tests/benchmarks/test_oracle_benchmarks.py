"""The oracle's benchmarks run at a tiny size, their agreement checks included (oracle
against baseline, fast path against reference, YAML against JSON), so none can rot: a
benchmark whose check fails exits with an AssertionError."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

RUNS = {
    "oracle_fixed": (["--events", "2000", "--repeat", "1"], ["tumbling 1min", "hopping 1min/6s"]),
    "oracle_kinds": (
        ["--events", "2000", "--repeat", "1"],
        ["session gap 2s (tenzir)", "session 2s (flink, key clk)", "count 50 every 10"],
    ),
    "oracle_stream fixed": (["--events", "500", "1500", "--query", "fixed"], ["equal to the reference's"]),
    "oracle_stream count": (["--events", "500", "1500", "--query", "count"], ["equal to the reference's"]),
    "oracle_stream session": (["--events", "500", "1500", "--query", "session"], ["equal to the reference's"]),
    "scenario_load": (["--events", "2000"], ["ratio yaml/json"]),
}


@pytest.mark.process  # a fresh Python per benchmark
@pytest.mark.parametrize("name", sorted(RUNS))
def test_the_benchmark_runs_green_at_a_tiny_size(name: str, tmp_path: Path) -> None:
    arguments, expected = RUNS[name]
    script = ROOT / "benchmarks" / f"{name.split()[0]}.py"
    if name.startswith("oracle_stream"):
        arguments = [*arguments, "--file", str(tmp_path / "events.jsonl")]
    result = subprocess.run(
        [sys.executable, str(script), *arguments], cwd=ROOT, capture_output=True, text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for line in expected:
        assert line in result.stdout, result.stdout
