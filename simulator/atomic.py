"""Output that appears whole or not at all: written under a temporary name, then renamed.

A generated stream can take minutes to write; an interrupted run (Ctrl-C, a full disk, a
bug) must not leave a truncated file that looks like a finished one.
:func:`atomic_output` gives the writer a hidden temporary path beside the target (same
directory, so the rename stays on one file system; same suffix, so writers that choose a
format by suffix choose the same), renames it onto the target when the block ends
normally and removes it otherwise.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

PARTIAL = ".windtunnel-partial-"
"""Marks the temporary names (``.<name>.windtunnel-partial-<random><suffix>``)."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_output(target: Path, *, directory: bool = False) -> Iterator[Path]:
    """A temporary path to write instead of ``target`` (a file, or a directory with
    ``directory``); renamed onto ``target`` after the block, removed if it raises. An
    existing ``target`` is replaced (a directory only when empty)."""
    parent = target.parent
    prefix = f".{target.name}{PARTIAL}"
    if directory:
        temporary = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    else:
        handle, name = tempfile.mkstemp(prefix=prefix, suffix=target.suffix, dir=parent)
        os.close(handle)
        temporary = Path(name)
    temporary.chmod((0o777 if directory else 0o666) & ~_umask())  # as a plain open() makes it
    try:
        yield temporary
        if directory and target.is_dir():
            target.rmdir()  # only an empty directory: OSError otherwise
        os.replace(temporary, target)
    except BaseException:
        if temporary.is_dir():
            shutil.rmtree(temporary, ignore_errors=True)
        else:
            temporary.unlink(missing_ok=True)
        raise
