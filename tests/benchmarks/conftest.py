"""Benchmarks run in the test process: ``benchmark(name)`` imports ``benchmarks/<name>.py``
as the script's siblings see it (``benchmarks/`` on ``sys.path`` for the test), and ``spark``
is the worker's shared local session (a script's ``spark_session()`` gets it back)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"


@pytest.fixture
def benchmark(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], ModuleType]]:
    """``benchmark(name)``: the module of ``benchmarks/<name>.py``; the scripts imported for
    the test are forgotten after it."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))

    def load(name: str) -> ModuleType:
        return importlib.import_module(name)

    yield load
    for name, module in list(sys.modules.items()):
        if Path(getattr(module, "__file__", None) or "/").parent == BENCHMARKS:
            del sys.modules[name]


@pytest.fixture(scope="session")
def spark() -> Any:
    """The worker's shared local session (getOrCreate: the scripts' sessions are this one)."""
    from windtunnel.spark_impl.session import spark_session

    session = spark_session(shuffle_partitions=2)
    session.sparkContext.setLogLevel("ERROR")
    return session
