"""One JVM for every Flink harness run of a Python process (``windtunnel.flink.Server``).

Started at the first run (not before: a run that never comes costs nothing) and kept until the process exits: the JVM start, Flink's class
loading and the MiniCluster start (about 5 s) are paid once, and later jobs run warm (a
batch of a few scenarios in about 0.1 s, what shrinking needs). A request is one line on the
JVM's stdin (the harness and its arguments); the answer one tagged line on its stdout
(``ok`` once the output file is written, or ``error`` and the deepest cause); the JVM's
other output goes to a temporary file, kept for the current request only. The JVM exits when
its stdin closes: at this process's exit (:func:`shutdown`, registered with ``atexit``), or
when this process dies. A JVM that ran past its time is stopped and replaced at the next
run; one found dead during a run (killed, out of memory) is replaced and the run retried once.
"""

from __future__ import annotations

import atexit
import os
import select
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import IO

from windtunnel.oracle.model.errors import EngineUnavailable

TAG = b"windtunnel-flink\t"
"""The prefix of the JVM's answers (its stdout carries nothing else, but log4j may)."""


class JvmDied(EngineUnavailable):
    """The harness JVM exited before answering."""


class HarnessJvm:
    """A running ``windtunnel.flink.Server``: ``command`` started it."""

    def __init__(self, command: Sequence[str]) -> None:
        self.command = tuple(command)
        # open for the JVM's life (its stderr), closed by close()
        self.log: IO[bytes] = tempfile.TemporaryFile(prefix="windtunnel-flink-")  # noqa: SIM115
        try:
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log
            )
        except OSError as exc:
            self.log.close()
            raise EngineUnavailable(
                f"java could not be started ({exc}); check JAVA_HOME"
            ) from None
        self.pending = b""

    def alive(self) -> bool:
        return self.process.poll() is None

    def request(self, fields: Sequence[str], timeout_s: float) -> str:
        """Send one request; its answer without the tag (``ok`` or ``error\\t...``).

        Raises EngineUnavailable (and stops the JVM) when it dies or does not answer
        within ``timeout_s``."""
        self.log.seek(0)
        self.log.truncate()  # the JVM shares this file offset: it writes from 0 again
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(("\t".join(fields) + "\n").encode())
            stdin.flush()
        except OSError:
            raise self._died() from None
        deadline = time.monotonic() + timeout_s
        while True:
            while b"\n" in self.pending:
                line, self.pending = self.pending.split(b"\n", 1)
                if line.startswith(TAG):
                    return line[len(TAG):].decode("utf-8", errors="replace")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.close(kill=True)
                raise EngineUnavailable(
                    f"the Flink harness did not finish within {timeout_s:.0f} s; run fewer "
                    "scenarios per call (--batch-size)"
                )
            ready, _, _ = select.select([stdout], [], [], remaining)
            if ready:
                chunk = os.read(stdout.fileno(), 1 << 16)
                if not chunk:
                    raise self._died()
                self.pending += chunk

    def errors(self) -> str:
        """What the JVM wrote to stderr during the current request."""
        self.log.seek(0)
        text = self.log.read().decode("utf-8", errors="replace")
        self.log.seek(0, os.SEEK_END)
        return text

    def _died(self) -> JvmDied:
        self.process.wait()
        text = self.errors()
        self.close()
        return JvmDied(
            f"the Flink harness JVM exited (code {self.process.returncode}): {last_error(text)}"
        )

    def close(self, kill: bool = False) -> None:
        """Stop the JVM: end its stdin and give it 10 s to stop its cluster and exit (not
        when ``kill``: it hangs), then SIGTERM (its shutdown hooks remove Flink's temporary
        files) and 10 s more, then SIGKILL."""
        if self.process.poll() is None and not kill:
            try:
                if self.process.stdin is not None:
                    self.process.stdin.close()
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None and not stream.closed:
                stream.close()
        if not self.log.closed:
            self.log.close()


def last_error(stderr: str) -> str:
    """The most telling line of a JVM's stderr: the deepest ``Caused by``, else the last."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    causes = [line for line in lines if line.startswith("Caused by:")]
    if causes:
        return causes[-1]
    errors = [line for line in lines if "Exception" in line or "Error" in line]
    return (errors or lines or ["no output"])[-1]


_LOCK = threading.Lock()
_JVM: HarnessJvm | None = None


def _running(command: Sequence[str]) -> HarnessJvm:
    """This process's JVM started with ``command`` (started now if none runs, or if the
    running one was started otherwise or died). Call with :data:`_LOCK` held."""
    global _JVM
    if _JVM is not None and (not _JVM.alive() or _JVM.command != tuple(command)):
        _JVM.close()
        _JVM = None
    if _JVM is None:
        _JVM = HarnessJvm(command)
    return _JVM


def request(command: Sequence[str], fields: Sequence[str], timeout_s: float) -> str:
    """Run one request on this process's JVM (see :func:`_running`); its answer (see
    :meth:`HarnessJvm.request`)."""
    global _JVM
    with _LOCK:
        try:
            return _running(command).request(fields, timeout_s)
        except JvmDied:
            _JVM = None  # found dead (killed before, or now): once more on a fresh JVM
        try:
            return _running(command).request(fields, timeout_s)
        finally:
            if _JVM is not None and not _JVM.alive():
                _JVM = None


def running_pid() -> int | None:
    """The process id of this process's JVM while it runs, else None."""
    with _LOCK:
        return _JVM.process.pid if _JVM is not None and _JVM.alive() else None


def shutdown() -> None:
    """Stop this process's JVM, if one runs."""
    global _JVM
    with _LOCK:
        if _JVM is not None:
            _JVM.close()
            _JVM = None


atexit.register(shutdown)
