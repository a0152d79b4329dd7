"""benchmarks/run_startup.py at a tiny size: ``windtunnel run`` end to end in a new process
without and with the class archive (built first when missing), then each start-up step in
this one (what a reader of docs/spark.md's breakdown reruns)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.spark, pytest.mark.process, pytest.mark.slow]

STEPS = ("imports", "session start", "source (records_source)",
         "run_job to the first micro-batch's end", "the other micro-batches and the end", "total")


def test_start_up_is_timed_end_to_end_and_step_by_step() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run_startup.py"), "--events", "200",
         "--batch-size", "100", "--repeat", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("end to end: windtunnel run, 200 events, no class archive: ")
    assert lines[1].startswith("end to end: windtunnel run, 200 events, class archive: ")
    assert lines[1].endswith("x faster)")
    assert [line.strip().rsplit(" ", 2)[0].strip() for line in lines[2:]] == list(STEPS)
