"""Where the JVM's stderr goes: Spark's log and its Python workers' chatter, kept off the
terminal."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

LOG_ENV = "WINDTUNNEL_SPARK_LOG"
"""Where the JVM's stderr (Spark's log and its Python workers' chatter) goes: a file path,
or ``-`` to keep it on the terminal. Default: ``windtunnel-spark.log`` in the temp dir."""


def spark_log_path() -> str | None:
    """The file the JVM's stderr goes to, or None when it stays on the terminal."""
    chosen = os.environ.get(LOG_ENV, "")
    if chosen == "-":
        return None
    return chosen or str(Path(tempfile.gettempdir()) / "windtunnel-spark.log")


@contextlib.contextmanager
def jvm_stderr_to_log() -> Iterator[None]:
    """While the JVM is launched (it inherits fd 2), point fd 2 at the Spark log."""
    path = spark_log_path()
    if path is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(path, "ab") as log:
            os.dup2(log.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
