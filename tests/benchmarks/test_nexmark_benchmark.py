"""benchmarks/nexmark.py at a tiny size: each side's output on a small run agrees with the
oracle under its own profile before it is timed, and the side-by-side table is printed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from windtunnel.conformance.flink import runtime

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--stages", "q7", "--events", "2000", "--check-events", "40", "--repeat", "1",
        "--files", "1"]
FLINK = runtime.flink_lib() is not None and runtime.java_binary() is not None

pytestmark = [pytest.mark.process, pytest.mark.slow]


def run(sides: str) -> str:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "nexmark.py"), *TINY, "--sides", sides],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    return result.stdout


def table_rows(out: str) -> dict[str, list[str]]:
    rows = [line.split() for line in out.splitlines() if line.startswith("q7 ")]
    return {row[1]: row[2:] for row in rows}


@pytest.mark.spark
def test_spark_sides_are_checked_then_timed() -> None:
    out = run("production,stock")
    assert "check q7        production (40 events, profile tenzir): agrees" in out
    assert "check q7        stock      (40 events, profile spark): agrees" in out
    rows = table_rows(out)
    assert set(rows) == {"production", "stock"}
    assert rows["production"][2].endswith("x")  # production/stock


@pytest.mark.flink
@pytest.mark.skipif(not FLINK or shutil.which("javac") is None,
                    reason="needs the [flink] extra and a JDK 17+ (javac)")
def test_flink_is_checked_then_timed() -> None:
    out = run("flink-p1")
    assert "check q7        flink      (40 events, profile flink): agrees" in out
    assert set(table_rows(out)) == {"flink-p1"}
