"""Checkpoint folders for queries nobody resumes: made in the temp directory, removed after.

A streaming query needs a checkpoint location even when it runs once to its end (a
replay, a check, a run without ``--checkpoint``). :func:`checkpoint_dir` gives the
caller's location unchanged, or a fresh ``windtunnel-<what>-*`` folder that is removed
when the block ends, also when it ends by an exception.

Ctrl-C is the hard case: the main thread stops Spark and leaves, while queries in other
threads (a check's lanes) are still inside their blocks, and a daemon thread may be halted
halfway through removing its folder. So every temporary folder is also kept in a register:
:func:`close` refuses new ones (before Spark is stopped) and :func:`remove_open` removes
those still open (after Spark is stopped, when no query writes into them any more).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from windtunnel.oracle.model.errors import WindtunnelError


class ScratchClosed(WindtunnelError, RuntimeError):
    """A query asked for a temporary checkpoint after Spark began stopping."""

    def __init__(self, what: str) -> None:
        super().__init__(f"checkpoint={what!r}: no query starts once Spark is stopping "
                         "(Ctrl-C or SIGTERM); run the command again")


class Register:
    """The temporary checkpoint folders open in this process (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[str] = set()
        self._closed = False

    def make(self, what: str) -> str:
        """A fresh ``windtunnel-<what>-*`` folder, registered. Raises ScratchClosed after
        :meth:`close`."""
        with self._lock:
            if self._closed:
                raise ScratchClosed(what)
            location = tempfile.mkdtemp(prefix=f"windtunnel-{what}-")
            self._open.add(location)
            return location

    def remove(self, location: str) -> None:
        """Removes ``location``, then forgets it (a thread halted halfway leaves it registered)."""
        shutil.rmtree(location, ignore_errors=True)
        with self._lock:
            self._open.discard(location)

    def close(self) -> None:
        """From now on :meth:`make` refuses."""
        with self._lock:
            self._closed = True

    def remove_open(self) -> list[str]:
        """Removes every folder still registered; the ones that could not be removed."""
        with self._lock:
            locations = sorted(self._open)
        for location in locations:
            self.remove(location)
        return [location for location in locations if Path(location).exists()]


REGISTER = Register()


@contextlib.contextmanager
def checkpoint_dir(given: str | None, what: str) -> Iterator[str]:
    """``given`` as is (the caller keeps it), else a temporary ``windtunnel-<what>-*``
    folder removed when the block ends. Raises ScratchClosed once :func:`close` was called."""
    if given is not None:
        yield given
        return
    location = REGISTER.make(what)
    try:
        yield location
    finally:
        REGISTER.remove(location)


def close() -> None:
    """No new temporary checkpoint from now on (Spark is about to be stopped)."""
    REGISTER.close()


def remove_open() -> list[str]:
    """Removes the temporary checkpoints still open (call it once Spark is stopped); returns
    those that could not be removed."""
    return REGISTER.remove_open()
