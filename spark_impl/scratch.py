"""Checkpoint folders for queries nobody resumes: made in the temp directory, removed after.

A streaming query needs a checkpoint location even when it runs once to its end (a
replay, a check, a run without ``--checkpoint``). :func:`checkpoint_dir` gives the
caller's location unchanged, or a fresh ``windtunnel-<what>-*`` folder that is removed
when the block ends, also when it ends by an exception or Ctrl-C, so nothing is left
behind in the temp directory.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator


@contextlib.contextmanager
def checkpoint_dir(given: str | None, what: str) -> Iterator[str]:
    """``given`` as is (the caller keeps it), else a temporary ``windtunnel-<what>-*``
    folder removed when the block ends."""
    if given is not None:
        yield given
        return
    location = tempfile.mkdtemp(prefix=f"windtunnel-{what}-")
    try:
        yield location
    finally:
        shutil.rmtree(location, ignore_errors=True)
