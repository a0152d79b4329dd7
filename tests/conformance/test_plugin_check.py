"""The plugin's windtunnel_check fixture, options and header (no Spark: oracle targets
stand in for implementations; the Spark side is in test_plugin_spark.py)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

from windtunnel.conformance.plugin.checking import needs_spark

pytest_plugins = ["pytester"]

SPEC = """
name: logins
profile: tenzir
window: {kind: fixed, size: 10s, on: ts, tolerance: 2s}
group_by: [user]
aggregate: {n: count()}
input:
  - {event: {ts: 1000, user: a}}
  - {event: {ts: 12500, user: a}}
"""

TESTS = """
from windtunnel.conformance.targets import oracle_target
from windtunnel.oracle.scenario import load_scenario


def test_same_semantics(windtunnel_check):
    result = windtunnel_check("oracle:tenzir", "spec.yaml")
    assert result.failure is None
    print("CHECKED", result.checked, result.profile)


def test_a_target_object(windtunnel_check):
    assert windtunnel_check(oracle_target("tenzir"), "spec.yaml", examples=2).checked == 3


def test_other_semantics(windtunnel_check):
    windtunnel_check("oracle:spark", "spec.yaml")


def test_other_semantics_from_a_parsed_spec(windtunnel_check):
    windtunnel_check("oracle:spark", load_scenario("spec.yaml"), examples=0)
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "spec.yaml").write_text(SPEC)
    pytester.makepyfile(test_checks=TESTS)
    return pytester


def test_check_passes_a_conforming_target_and_fails_a_divergent_one_with_the_report(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest("-p", "no:cacheprovider", "-s", "--windtunnel-examples", "5")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*CHECKED 6 tenzir*"])  # own input + 5 generated
    result.stdout.fnmatch_lines([
        "*_ test_other_semantics _*",
        "divergence: oracle:spark differs from the oracle (profile tenzir); shrunk to 1 event(s)*",
        "*missing: oracle tenzir emits, oracle:spark not*| unexpected: oracle:spark emits, oracle not",
        "*- [0,10000) \"a\" n=1 (end_of_input partial)*",
        "first divergent window: [0,10000) \"a\" n=1 (end_of_input partial)",
        "timeline under profile tenzir*",
        "counterexample written to *windtunnel-counterexamples*logins-counterexample-oracle-spark-*.yaml",
        "  replay it: windtunnel replay *",
        "  again: windtunnel check * --target oracle:spark --examples 0",
        "checked 1 scenarios against oracle:spark (profile tenzir) in * 1 divergence",
    ])
    assert "Traceback" not in result.stdout.str()
    # a parsed spec has no file to copy: the shrunk stream is shown instead
    result.stdout.fnmatch_lines([
        "*_ test_other_semantics_from_a_parsed_spec _*",
        "*shrunk stream (give the spec as a file to get a counterexample file):",
        '  {"event": {"ts": *',
    ])
    # under pytest's temporary directory (--basetemp), never in the project; named at the end
    result.stdout.fnmatch_lines(["*windtunnel counterexamples*", "written to *.yaml"])
    summary = result.stdout.lines[result.stdout.lines.index(
        next(line for line in result.stdout.lines if "windtunnel counterexamples" in line)) + 1]
    written = Path(summary.removeprefix("written to "))
    assert written.is_file() and written.parent.name == "windtunnel-counterexamples"
    assert project.path not in written.parents  # pytester's inner --basetemp, beside it
    assert not (project.path / "windtunnel-counterexamples").exists()
    rerun = project.runpytest("-p", "no:cacheprovider", "-k", "same_semantics")
    rerun.assert_outcomes(passed=1)


def test_seed_examples_and_profile_options_reach_the_check(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_options="""
        def test_defaults_from_options(windtunnel_check):
            result = windtunnel_check("oracle:flink", "spec.yaml")
            assert (result.checked, result.profile) == (4, "flink")
        """
    )
    result = project.runpytest(
        "-p", "no:cacheprovider", "test_options.py", "--windtunnel-examples", "3",
        "--windtunnel-seed", "7", "--windtunnel-profile", "flink",
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["windtunnel: seed 7, examples 3, scenario target oracle, profile flink*"]
    )


@pytest.mark.process  # pytest in a fresh Python
def test_the_header_names_pyspark_version_without_importing_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_x="""
        import sys

        def test_pyspark_not_loaded():
            assert "pyspark" not in sys.modules
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    try:
        installed = version("pyspark")
    except PackageNotFoundError:
        installed = None
    header = next(line for line in result.outlines if line.startswith("windtunnel:"))
    assert header.startswith("windtunnel: seed 0, examples 100, scenario target oracle, profile each spec's own")
    assert (f", pyspark {installed}" in header) == (installed is not None)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--windtunnel-examples", "-1"], "--windtunnel-examples must be 0 or more: windtunnel-examples=-1*"),
        (["--windtunnel-shrink-seconds", "-2"], "--windtunnel-shrink-seconds must be 0 or more*"),
        (["--windtunnel-engine", "both", "--windtunnel-target", "spark"],
         "*older spelling of --windtunnel-target: give one of them"),
        (["--windtunnel-examples", "many"], "*invalid int value: 'many'*"),
    ],
)
def test_bad_options_are_usage_errors(
    pytester: pytest.Pytester, options: list[str], message: str
) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", *options)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}"])


def test_unknown_target_fails_with_one_line(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_unknown="""
        def test_unknown(windtunnel_check):
            windtunnel_check("oracle:nope", "spec.yaml")
        """
    )
    result = project.runpytest("-p", "no:cacheprovider", "test_unknown.py")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["windtunnel_check: *profile*'nope'*"])


def test_collected_scenarios_run_on_another_target(pytester: pytest.Pytester) -> None:
    """``--windtunnel-target oracle:spark``: each collected file is also checked as
    ``windtunnel check FILE --target oracle:spark --examples 0`` does."""
    pytester.makeini("[pytest]\nwindtunnel_scenarios = scenarios/*.yaml\n")
    pytester.mkdir("scenarios")
    (pytester.path / "scenarios" / "logins.yaml").write_text(SPEC)
    plain = pytester.runpytest("-p", "no:cacheprovider")
    plain.assert_outcomes(passed=1)
    same = pytester.runpytest("-p", "no:cacheprovider", "--windtunnel-target", "oracle:tenzir")
    same.assert_outcomes(passed=1)
    other = pytester.runpytest("-p", "no:cacheprovider", "--windtunnel-target", "oracle:spark")
    other.assert_outcomes(failed=1)
    other.stdout.fnmatch_lines([
        "logins.yaml: divergence: oracle:spark differs from the oracle (profile tenzir)*",
        "checked 1 scenarios against oracle:spark*",
    ])


@pytest.mark.parametrize(
    ("job_or_target", "spark"),
    [
        ("spark", True),
        ("spark-stock", True),
        ("jobs:failed_logins", True),
        ("oracle:flink", False),
        ("python:mod:fn", False),
        (lambda events: events, True),
    ],
)
def test_only_spark_targets_start_spark(job_or_target: object, spark: bool) -> None:
    assert needs_spark(job_or_target) is spark
