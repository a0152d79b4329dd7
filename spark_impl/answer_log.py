"""The JVM step's answers kept as a write-ahead log, written into output files in the background.

A micro-batch on the JVM step (:mod:`windtunnel.spark_impl.jvm_step`) gets the task's
answer (drops, closed windows, the new state) back as a file. Turning it into output rows
and writing the output file took about 15 ms per micro-batch of 300k events, on the
micro-batch's critical path. With a file output the fast path instead keeps the answer in
``<state_dir>/answers/<id>.answer`` **before** it saves the state version of that
micro-batch, and a background thread (one per state directory, in order) writes the output
file and then deletes the answer, while Spark runs the next micro-batch (one thread per
process; the writes run in submission order).

Nothing is lost or counted twice:

- a micro-batch's function returns (and Spark commits it) only after its answer file is
  in place, so every committed micro-batch's rows are either in its output file or in its
  answer file;
- ``ExactBatches.flush`` (run before an ``ExactBatches``' first micro-batch, by
  ``ExactBatches.finish`` and by ``windtunnel run`` at the end) waits for the thread and writes the answers a stopped process left behind: those of
  micro-batches whose state version was saved (the newest version's keys name every code
  an older answer uses, since keys are only ever added), while an answer without its
  state version belongs to a micro-batch Spark replays, which writes it again;
- writing is idempotent: the output file of a micro-batch id is replaced, never appended.

An output file therefore appears up to two micro-batches after its commit;
``ExactBatches.flush()`` waits for them. An error in the background thread is raised by the
next micro-batch (so Spark commits nothing more) and by ``flush``.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

ANSWERS = "answers"
"""The answers' folder inside the state directory."""
_ANSWER = re.compile(r"^(\d+)\.answer$")
MAX_PENDING = 2
"""Micro-batches whose output may still be waiting; the next one waits for the oldest."""


class AnswerLog:
    """Answers by micro-batch id in ``<state_dir>/answers``."""

    def __init__(self, state_dir: str | Path) -> None:
        self.directory = Path(state_dir) / ANSWERS

    def path(self, batch_id: int) -> Path:
        return self.directory / f"{batch_id}.answer"

    def incoming(self, batch_id: int) -> Path:
        """Where the task writes micro-batch ``batch_id``'s answer before :meth:`keep`."""
        self.directory.mkdir(parents=True, exist_ok=True)
        return self.directory / f".{batch_id}.answer.{os.getpid()}.{threading.get_ident()}.tmp"

    def keep(self, batch_id: int) -> None:
        """The incoming answer becomes micro-batch ``batch_id``'s (replacing an older one)."""
        os.replace(self.incoming(batch_id), self.path(batch_id))

    def pending(self) -> list[int]:
        """Micro-batch ids with an answer not yet written out, ascending."""
        if not self.directory.is_dir():
            return []
        found = (_ANSWER.match(p.name) for p in self.directory.iterdir())
        return sorted(int(m.group(1)) for m in found if m)

    def read(self, batch_id: int) -> bytes:
        return self.path(batch_id).read_bytes()

    def remove(self, batch_id: int) -> None:
        self.path(batch_id).unlink(missing_ok=True)


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The process's one background thread (writes run in submission order; Python's
    exit waits for the queued ones)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="windtunnel-output", initializer=_nice)
        return _POOL


def _nice() -> None:
    """The thread yields the CPU to Spark's (Linux niceness is per thread): its writes are
    off the micro-batch's path, Spark's work is on it."""
    with contextlib.suppress(AttributeError, OSError):  # not Linux: as it is
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


class AnswerWriter:
    """A state directory's answers written out by the background thread, in submission order."""

    def __init__(self) -> None:
        self._pending: list[Future[None]] = []

    def submit(self, write: Callable[[], None]) -> None:
        """Run ``write`` in the background after the earlier ones; first wait while
        :data:`MAX_PENDING` are still waiting, and raise the error of one that failed."""
        self._raise_failed()
        while len(self._pending) >= MAX_PENDING:
            self._pending.pop(0).result()
        self._pending.append(_pool().submit(write))

    def wait(self) -> None:
        """Wait for every submitted write, and for every write queued in the process before
        (another run's over the same checkpoint); raise the first error of this writer's."""
        while self._pending:
            self._pending.pop(0).result()
        with _POOL_LOCK:
            pool = _POOL
        if pool is not None:
            pool.submit(lambda: None).result()  # one thread, in order: all before are done

    def _raise_failed(self) -> None:
        done = [f for f in self._pending if f.done()]
        for future in done:
            self._pending.remove(future)
            future.result()


_WRITERS: weakref.WeakValueDictionary[str, AnswerWriter] = weakref.WeakValueDictionary()
_WRITERS_LOCK = threading.Lock()


def writer_for(state_dir: str | Path) -> AnswerWriter:
    """The process's writer for ``state_dir``, shared while anything holds it (two runs over
    one checkpoint in a process wait for the same writes)."""
    key = str(Path(state_dir).resolve())
    with _WRITERS_LOCK:
        writer = _WRITERS.get(key)
        if writer is None:
            writer = _WRITERS[key] = AnswerWriter()
        return writer


__all__ = ["ANSWERS", "MAX_PENDING", "AnswerLog", "AnswerWriter", "writer_for"]
