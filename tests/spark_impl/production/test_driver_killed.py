"""The driver killed (SIGKILL) at random points and started again loses and duplicates
nothing: ``windtunnel run`` over a generated payments stream (eight micro-batches, late events,
string user ids) is killed, with its JVM, while micro-batches are in flight, restarted on the
same checkpoint until it finishes; its output files then hold exactly the oracle's outputs.

    run 1:  b0 b1 [kill mid-b2]
    run 2:        b2' b3 b4 [kill right after a commit]
    run 3:                 b5 ... b9 end        outputs == oracle, no duplicates
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from windtunnel.oracle.engine import replay
from windtunnel.oracle.scenario import load_scenario
from windtunnel.spark_impl.schema import OUTPUT_COLUMNS, canonical_lines, output_of

pytestmark = pytest.mark.spark

WINDTUNNEL = [sys.executable, "-m", "windtunnel.cli"]


def _generate(root: Path) -> tuple[Path, Path]:
    common = ["generate", "payments", "-n", "1200", "--keys", "60", "--batch-size", "150",
              "--late-fraction", "0.1", "--seed", "3"]
    spec, data = root / "pay.yaml", root / "pay-dir"
    for fmt, out in (("scenario", spec), ("spark-dir", data)):
        subprocess.run([*WINDTUNNEL, *common, "--format", fmt, "--out", str(out)], check=True,
                       capture_output=True)
    return spec, data


def _progress(checkpoint: Path, log: str) -> int:
    """How many files Spark's ``log`` folder (offsets or commits) holds."""
    folder = checkpoint / log
    return sum(1 for p in folder.iterdir() if p.name.isdigit()) if folder.is_dir() else 0


def _start(spec: Path, data: Path, out: Path, checkpoint: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*WINDTUNNEL, "run", str(spec), str(data), "--out", str(out),
         "--checkpoint", str(checkpoint), "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )


def _kill_when(process: subprocess.Popen[bytes], checkpoint: Path, log: str, count: int,
               delay_s: float) -> bool:
    """SIGKILL the driver's process group once ``log`` holds ``count`` files plus
    ``delay_s``; False when the run finished first."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        if _progress(checkpoint, log) >= count:
            time.sleep(delay_s)
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return True
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)
    raise AssertionError("the run made no progress in 240 s")


def _outputs(out: Path) -> Counter[str]:
    """The output files' rows (Spark's JSON writer leaves null columns out)."""
    rows = []
    for path in sorted(out.glob("part-*.json")):
        rows += [dict.fromkeys(OUTPUT_COLUMNS) | json.loads(line)
                 for line in path.read_text().splitlines() if line]
    return Counter(canonical_lines([output_of(r) for r in rows]))


def test_killed_drivers_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    spec, data = _generate(tmp_path)
    out, checkpoint = tmp_path / "out", tmp_path / "ckpt"
    rng = random.Random(int(os.environ.get("WINDTUNNEL_FAULT_SEED", "7")))
    kills = 0
    # kill points: mid-micro-batch (Spark logged its offsets, not its commit) and right after
    # a commit, at a random moment of the micro-batch that follows
    plan = [("offsets", 2, rng.uniform(0.0, 0.4)), ("commits", 4, rng.uniform(0.0, 0.3))]
    for log, count, delay in plan:
        process = _start(spec, data, out, checkpoint)
        if _kill_when(process, checkpoint, log, count, delay):
            kills += 1
    final = _start(spec, data, out, checkpoint)
    _, err = final.communicate(timeout=600)
    assert final.returncode == 0, err.decode()[-2000:]
    assert kills >= 2, "the runs finished before they could be killed"
    scenario = load_scenario(spec)
    expected = Counter(canonical_lines(replay(scenario).outputs))
    assert _outputs(out) == expected
