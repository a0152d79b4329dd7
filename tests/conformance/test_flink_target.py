"""The ``flink`` target against the real engine: the ``flink`` profile held to Flink 2.3.

A Hypothesis property draws a batch of streams for tumbling, hopping (gapped too), session
and cumulating windows and allowed lateness, runs them all in one job (one branch per stream;
cumulating windows through Flink SQL's ``CUMULATE``) and requires every one to agree with the
oracle, emissions and drops. The long run is ``python benchmarks/flink_agreement.py``. The
Flink SQL examples and their broken twins are checked with one command each. Skipped without
the ``[flink]`` extra or Java.
"""

from __future__ import annotations

import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from windtunnel.cli.main import cli
from windtunnel.conformance.check import compare_run, describe_output
from windtunnel.conformance.flink import runtime
from windtunnel.conformance.generate import spec_streams
from windtunnel.conformance.targets import oracle_outputs
from windtunnel.oracle.scenario import Scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[2]
AVAILABLE = runtime.flink_lib() is not None and runtime.java_binary() is not None

AGG = {"n": "count()", "s": "sum(x)", "xs": "collect(x)", "hi": "max(x)"}
WINDOWS: dict[str, dict[str, Any]] = {
    "tumbling": {"kind": "fixed", "size": 10, "tolerance": 2},
    "hopping": {"kind": "fixed", "size": 10, "every": 4, "tolerance": 1},
    "gapped": {"kind": "fixed", "size": 4, "every": 10},
    "session": {"kind": "session", "gap": 5, "tolerance": 1},
    "tumbling-lateness": {"kind": "fixed", "size": 10, "tolerance": 1, "allowed_lateness": 6},
    "hopping-lateness": {"kind": "fixed", "size": 10, "every": 5, "allowed_lateness": 4},
    "session-lateness": {"kind": "session", "gap": 5, "allowed_lateness": 7},
    "cumulate": {"kind": "cumulate", "step": 3, "size": 12, "tolerance": 2},
}
SPECS = {
    name: parse_scenario({"profile": "flink", "window": window, "group_by": ["k"],
                          "aggregate": AGG, "input": []})
    for name, window in WINDOWS.items()
}


@st.composite
def flink_scenarios(draw: st.DrawFn, *, per_kind: int = 6) -> list[tuple[str, Scenario]]:
    """``per_kind`` streams for every window of :data:`WINDOWS` (small integer times, so
    1 ms edges are hit). Shrinks towards few short, in-order streams on one key."""
    out = []
    for name, spec in SPECS.items():
        for items in draw(st.lists(spec_streams(spec), min_size=per_kind, max_size=per_kind)):
            out.append((name, replace(spec, items=tuple(items))))
    return out


@pytest.mark.flink
@pytest.mark.skipif(not AVAILABLE, reason="needs the [flink] extra and a Java runtime")
@settings(max_examples=2, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(drawn=flink_scenarios())
def test_the_flink_profile_equals_flink(drawn: list[tuple[str, Scenario]]) -> None:
    from windtunnel.conformance.targets.flink import flink_target

    runs = flink_target().run_many([scenario for _, scenario in drawn])
    for (name, scenario), got in zip(drawn, runs, strict=True):
        mismatch = compare_run(oracle_outputs(scenario, "flink"), (), got, drops=True, timing=False)
        assert not mismatch, (
            f"{name}: {scenario.items}\nmissing: "
            f"{[describe_output(o) for o in mismatch.missing]}\nunexpected: "
            f"{[describe_output(o) for o in mismatch.unexpected]}"
        )


@pytest.mark.flink
@pytest.mark.skipif(not AVAILABLE, reason="needs the [flink] extra and a Java runtime")
@pytest.mark.parametrize(
    "name",
    [
        "clicks",  # TUMBLE; broken: a 1 s watermark bound, so 55 (12 s behind 67) is late
        "running-totals",  # CUMULATE; broken: HOP, whose windows' starts move
    ],
)
def test_a_flink_sql_job_is_checked_and_its_broken_twin_caught(name: str, tmp_path: Path) -> None:
    folder = ROOT / "examples" / "flink-sql"
    spec = str(folder / f"{name}.yaml")
    good = CliRunner().invoke(cli, ["check", spec, "--flink-sql", str(folder / f"{name}.sql"),
                                    "--examples", "0"])
    assert good.exit_code == 0, good.output
    assert "0 divergences" in good.output
    broken = CliRunner().invoke(cli, ["check", spec, "--flink-sql",
                                      str(folder / f"{name}-broken.sql"),
                                      "--examples", "0", "--shrink-seconds", "0",
                                      "--out", str(tmp_path)])
    assert broken.exit_code == 1, broken.output
    assert "counterexample written to" in broken.output
    assert list(tmp_path.glob("*.yaml"))


def test_the_shipped_harness_jar_is_built_from_the_sources_beside_it() -> None:
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import build_flink_jar
        import build_jar
    finally:
        sys.path.pop(0)
    with zipfile.ZipFile(runtime.HARNESS_JAR) as jar:
        digest = jar.read(build_flink_jar.DIGEST_ENTRY).decode().strip()
        names = set(jar.namelist())
    assert digest == build_jar.source_digest(build_flink_jar.FLINK_DIR), (
        "a Java source changed: run python tools/build_flink_jar.py"
    )
    assert {"windtunnel/flink/WindowHarness.class", "windtunnel/flink/SqlHarness.class",
            "windtunnel/flink/Server.class"} <= names


@pytest.mark.parametrize(
    ("missing", "words"),
    [("flink_lib", "pip install \"windtunnel[flink]\""), ("java_binary", "Java 17+ runtime")],
)
def test_without_the_extra_or_java_check_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, missing: str, words: str
) -> None:
    monkeypatch.setattr(runtime, missing, lambda: None)
    spec = str(ROOT / "examples" / "flink-sql" / "clicks.yaml")
    for extra in (["--target", "flink"], ["--flink-sql", str(ROOT / "examples" / "flink-sql" / "clicks.sql")]):
        result = CliRunner().invoke(cli, ["check", spec, *extra, "--examples", "0"])
        assert result.exit_code == 2, result.output
        (line,) = [line for line in result.output.splitlines() if line.strip()]
        assert words in line and "Traceback" not in result.output


def test_a_flink_sql_file_without_a_watermark_is_rejected_in_one_line(tmp_path: Path) -> None:
    query = tmp_path / "q.sql"
    query.write_text("CREATE TABLE t (ts TIMESTAMP(3)) WITH ('connector' = 'x');\n"
                     "SELECT * FROM t;\n", encoding="utf-8")
    spec = str(ROOT / "examples" / "flink-sql" / "clicks.yaml")
    result = CliRunner().invoke(cli, ["check", spec, "--flink-sql", str(query)])
    assert result.exit_code == 2
    assert "--flink-sql" in result.output and "WATERMARK FOR" in result.output
