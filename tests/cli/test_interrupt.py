"""Ctrl-C (a real SIGINT to a real process): one line, exit 130, Spark stopped, nothing left
behind (no partial output file, no temporary checkpoint, no ``.hypothesis/``)."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

CLI = "from windtunnel.cli.main import main; main()"


def ctrl_c_delivered() -> None:
    """In the child: SIGINT as a terminal delivers it. A shell runs background jobs with
    SIGINT ignored, and Python keeps an ignored SIGINT ignored (no KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Running:
    """A ``windtunnel`` process whose stderr lines are read as they come."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", CLI, *args], cwd=cwd, env=env, text=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=ctrl_c_delivered,
        )  # fmt: skip
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, words: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                break
            self.lines.append(line)
            if words in line:
                return
        self.process.kill()
        raise AssertionError(f"no line with {words!r}; stderr so far: {self.lines}")

    def wait_until(self, holds: Callable[[], bool], what: str, timeout_s: float) -> None:
        """Until ``holds()`` (checked as stderr lines come, and every 0.1 s), within
        ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while not holds():
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.process.kill()
                raise AssertionError(f"never {what}; stderr so far: {self.lines}")
            try:
                line = self._queue.get(timeout=0.1)
            except queue.Empty:
                continue
            if line is not None:
                self.lines.append(line)

    def interrupt(self, timeout_s: float = 120, number: int = signal.SIGINT) -> int:
        self.process.send_signal(number)
        try:
            code = self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGABRT)  # PYTHONFAULTHANDLER: its threads' stacks
            self.process.wait(30)
            while (line := self._queue.get(timeout=10)) is not None:
                self.lines.append(line)
            raise AssertionError("\n".join(self.lines)) from None
        while (line := self._queue.get(timeout=10)) is not None:
            self.lines.append(line)
        return code


def environment(tmp_path: Path) -> dict[str, str]:
    """PYTHONPATH with the test's own, and a temp directory of the test's own."""
    temp = tmp_path / "temp"
    temp.mkdir()
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]),
            "TMPDIR": str(temp), "PYTHONFAULTHANDLER": "1"}


@pytest.mark.process  # windtunnel in a fresh Python
def test_ctrl_c_during_generate_leaves_no_partial_file(tmp_path: Path) -> None:
    running = Running(
        ["generate", "bare", "-n", "5000000", "--format", "jsonl", "-o", "big.jsonl"],
        tmp_path, environment(tmp_path),
    )  # fmt: skip
    running.wait_for("bare -> jsonl: ", timeout_s=120)  # records are being written
    assert running.interrupt() == 130
    assert running.lines[-1] == "windtunnel: interrupted (Ctrl-C)"
    assert not any("Traceback" in line for line in running.lines)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["temp"]  # no big.jsonl, no partial


JOB = '''
from pyspark.sql import functions as F


def counts(events):
    return (events.withWatermark("ts", "2 seconds")
            .groupBy(F.window("ts", "10 seconds"), "user")
            .agg(F.count(F.lit(1)).alias("n")))
'''
SPEC = """
name: interrupted
profile: spark
window: {kind: fixed, size: 10s, on: ts, tolerance: 2s}
group_by: [user]
aggregate: {n: count()}
input: [{event: {ts: 1000, user: a}}]
"""


@pytest.mark.spark
@pytest.mark.parametrize(
    ("number", "code", "said"),
    [(signal.SIGINT, 130, "interrupted (Ctrl-C)"), (signal.SIGTERM, 143, "terminated (SIGTERM)")],
    ids=["ctrl-c", "sigterm"],
)
def test_ctrl_c_during_check_stops_spark_and_exits_130(
    tmp_path: Path, number: int, code: int, said: str
) -> None:
    """And SIGTERM (what ``timeout`` and CI runners send) exits 143 the same way: the lanes'
    threads, still calling the stopping JVM, print nothing after the one line."""
    (tmp_path / "spec.yaml").write_text(SPEC)
    (tmp_path / "wt_interrupt_jobs.py").write_text(JOB)
    env = environment(tmp_path)
    running = Running(
        ["check", "spec.yaml", "--job", "wt_interrupt_jobs:counts", "--examples", "5000"],
        tmp_path, env,
    )  # fmt: skip
    running.wait_for("checking wt_interrupt_jobs:counts: 1/5,001 scenarios", timeout_s=600)
    temp = Path(env["TMPDIR"])
    running.wait_until(  # a lane's query of generated streams holds a temporary checkpoint
        lambda: any(p.name.startswith("windtunnel-job-") for p in temp.iterdir()),
        "a query of generated streams running", timeout_s=300)
    assert running.interrupt(number=number) == code
    assert running.lines[-1] == f"windtunnel: {said}; Spark stopped"
    assert len(running.lines) <= 3, "\n".join(running.lines)  # the estimate, one progress line, this
    assert not any("Traceback" in line or "py4j" in line for line in running.lines)
    assert not (tmp_path / ".hypothesis").exists()
    leftovers = [p.name for p in Path(env["TMPDIR"]).iterdir() if p.name != "windtunnel-spark.log"]
    assert leftovers == []
