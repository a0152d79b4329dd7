"""The plugin on Spark, run with pytester in this process (the session started here is
reused by the inner runs): stock-Spark scenario files compared as ``replay --engine both``
does, and the user project of examples/ checked with windtunnel_check."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import windtunnel.conformance.plugin.checking  # noqa: F401  (see test_plugin.py: imported once, here)
from windtunnel.conformance.plugin import chosen_target

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "examples" / "user_project"

STOCK_LATE = """
name: stock-late
profile: spark
window: {kind: fixed, size: 10s, on: ts}
aggregate: {n: count()}
input:
  - batch: [{event: {ts: 1000}}, {event: {ts: 25000}}]
  - {event: {ts: 26000}}
  - {event: {ts: 2000}}   # late: stock Spark drops it silently, the oracle reports the drop
expect:
  emissions: [{window: [0, 10000], row: {n: 1}}]
  drops: [{seq: 3, reason: late}]
"""


@pytest.fixture(scope="module")
def spark() -> Any:
    """Started here, before any inner run: pytester forgets modules an inner run imported."""
    from windtunnel.spark_impl.session import spark_session

    session = spark_session(shuffle_partitions=2)
    session.sparkContext.setLogLevel("ERROR")
    return session


@pytest.mark.spark
def test_stock_spark_scenario_with_a_late_event_passes_on_spark(
    pytester: pytest.Pytester, spark: Any
) -> None:
    """Regression: the oracle's drop used to be compared with stock Spark, which reports
    none; now emissions only, as ``windtunnel replay --engine both`` compares."""
    pytester.makeini("[pytest]\nwindtunnel_scenarios = *.yaml\n")
    (pytester.path / "stock-late.yaml").write_text(STOCK_LATE)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs", "--windtunnel-engine", "both")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("options", "target"),
    [
        ([], "oracle"),
        (["--windtunnel-engine", "oracle"], "oracle"),
        (["--windtunnel-engine", "spark"], "spark"),
        (["--windtunnel-engine", "both"], "spark"),
        (["--windtunnel-target", "spark"], "spark"),
        (["--windtunnel-target", "spark-stock"], "spark-stock"),
    ],
)
def test_engine_is_an_alias_of_target(
    pytester: pytest.Pytester, options: list[str], target: str
) -> None:
    config = pytester.parseconfig(*options)
    assert chosen_target(config) == target


@pytest.mark.spark
def test_user_project_catches_the_broken_job_with_a_readable_report(
    pytester: pytest.Pytester, spark: Any
) -> None:
    shutil.copytree(PROJECT, pytester.path, dirs_exist_ok=True)
    fast = ["-p", "no:cacheprovider", "--windtunnel-examples", "0", "--windtunnel-shrink-seconds", "0"]
    good = pytester.runpytest(*fast)
    good.assert_outcomes(passed=3)  # the spec file, the oracle test, the Spark check

    broken = pytester.runpytest(*fast, "--jobs-module", "jobs_broken")
    broken.assert_outcomes(passed=2, failed=1)
    broken.stdout.fnmatch_lines([
        "*_ test_failed_logins_holds_to_its_spec _*",
        "divergence: jobs_broken:failed_logins differs from the oracle (profile spark)*",
        "*missing: oracle spark emits, jobs_broken:failed_logins not*",
        "first divergent window: [2024-05-01T10:00:00Z,2024-05-01T10:10:00Z) \"alice\"*",
        "timeline under profile spark*",
        "counterexample written to *windtunnel-counterexamples*failed-logins-counterexample-jobs_broken-failed_logins-*.yaml",
        "  again: windtunnel check * --job jobs_broken:failed_logins --examples 0",
        "checked 1 scenarios against jobs_broken:failed_logins (profile spark)*1 divergence",
    ])
    assert "Traceback" not in broken.stdout.str()
