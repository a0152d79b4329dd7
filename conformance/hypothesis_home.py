"""Hypothesis without files in the working directory.

Hypothesis keeps an example database and a cache of constants it found in local source
files under ``.hypothesis/`` in the working directory. windtunnel draws streams with the
database off, but the constants cache is written anyway, so every ``windtunnel check``
left a ``.hypothesis/`` folder behind. :func:`scratch_home` points Hypothesis at a
temporary folder while streams are drawn and removes it after, restoring the caller's
setting (a test suite of the user's own keeps its ``.hypothesis/``).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

from hypothesis import configuration

_HOME = "__hypothesis_home_directory"
"""The module attribute ``set_hypothesis_home_dir`` sets (None: the default)."""


@contextlib.contextmanager
def scratch_home() -> Iterator[None]:
    """Hypothesis's storage in a temporary folder for the block (removed after)."""
    previous: Any = getattr(configuration, _HOME, None)
    folder = tempfile.mkdtemp(prefix="windtunnel-hypothesis-")
    configuration.set_hypothesis_home_dir(folder)
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(previous)
        shutil.rmtree(folder, ignore_errors=True)
