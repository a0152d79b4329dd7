"""The engines' benchmarks run at a tiny size, their own checks included: the Java window
engine against its HashMap baseline, the ``flink`` and ``tenzir`` profiles against the real
engines scenario by scenario. A benchmark whose check fails exits non-zero or raises."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from types import ModuleType

import pytest


@pytest.mark.process
@pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (javac)")
def test_the_java_engine_benchmark_matches_its_baseline_at_a_tiny_size(
    benchmark: Callable[[str], ModuleType], capfd: pytest.CaptureFixture[str]
) -> None:
    code = benchmark("engine_java").main(["--events", "3000", "--rounds", "1"])
    out = capfd.readouterr().out
    assert code == 0, out
    assert "check: tumbling: the engine's" in out and "outputs are the baseline's" in out, out
    assert out.count("the state decodes to the slice's") == 4, out
