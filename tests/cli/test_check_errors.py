"""`windtunnel check --job`: a job that cannot be imported or run exits 2 with one line that
names the cause: the file and line of a syntax error, an exception inside the module or
the job's UDF, a missing ``:function``, a watermark on the wrong column."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli

SPEC = """
name: logins
profile: spark
window: {kind: fixed, size: 10s, on: ts, tolerance: 2s}
group_by: [user]
aggregate: {n: count()}
input:
  - {event: {ts: 1000, user: alice, bytes: 120}}
  - {event: {ts: 13000, user: alice, bytes: 7}}
"""

JOBS = '''
from pyspark.sql import functions as F
from pyspark.sql import types as T


@F.udf(T.LongType())
def checked_bytes(b):
    if b is not None and b > 50:
        raise ValueError(f"bytes too large: {b}")
    return b


def udf_raises(events):
    return (events.withWatermark("ts", "2 seconds")
            .where(checked_bytes("bytes") >= 0)
            .groupBy(F.window("ts", "10 seconds"), "user")
            .agg(F.count(F.lit(1)).alias("n")))


def other_watermark(events):
    return (events.withColumn("ts2", F.col("ts")).withWatermark("ts2", "2 seconds")
            .groupBy(F.window("ts", "10 seconds"), "user")
            .agg(F.count(F.lit(1)).alias("n")))


def wrong_columns(events):
    return (events.withWatermark("ts", "2 seconds")
            .groupBy(F.window("ts", "10 seconds"), "device")
            .agg(F.count(F.lit(1)).alias("n")))
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A spec and job modules, the folder on sys.path, the working directory."""
    (tmp_path / "spec.yaml").write_text(SPEC)
    (tmp_path / "wt_jobs.py").write_text(JOBS)
    (tmp_path / "wt_syntax.py").write_text("def job(events):\n    return events.(\n")
    (tmp_path / "wt_imports.py").write_text("import os\nimport no_such_module_q\n\ndef job(e):\n    return e\n")
    (tmp_path / "wt_raises.py").write_text("X = 1\nY = {}['missing']\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(*args: str) -> Any:
    return CliRunner().invoke(cli, ["check", "spec.yaml", *args])


def one_line(result: Any) -> str:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "Traceback" not in result.output
    return lines[0]


def test_a_job_without_function_says_so(project: Path) -> None:
    line = one_line(check("--job", "wt_jobs"))
    assert line == (
        "windtunnel: --job='wt_jobs': lacks :function (the job function in the module); "
        "write --job wt_jobs:FUNCTION, naming your job(events) -> DataFrame in wt_jobs"
    )


@pytest.mark.parametrize(
    ("job", "words"),
    [
        ("wt_syntax:job", "module 'wt_syntax' cannot be imported: a syntax error at "
                          "{root}/wt_syntax.py:2: "),
        ("wt_imports:job", "module 'wt_imports' cannot be imported: it raised at "
                           "{root}/wt_imports.py:2 ModuleNotFoundError: No module named "
                           "'no_such_module_q'"),
        ("wt_raises:job", "module 'wt_raises' cannot be imported: it raised at "
                          "{root}/wt_raises.py:2 KeyError: 'missing'"),
        ("wt_absent:job", "module 'wt_absent' cannot be imported: it is not found; check the name"),
    ],
    ids=["syntax-error", "import-inside", "exception-inside", "missing"],
)
def test_a_module_that_fails_to_import_names_file_and_line(
    project: Path, job: str, words: str
) -> None:
    assert words.format(root=project) in one_line(check("--job", job))


@pytest.mark.spark
def test_a_udf_that_raises_names_the_exception_and_its_line(windtunnel_spark: Any, project: Path) -> None:
    line = one_line(check("--job", "wt_jobs:udf_raises", "--examples", "0"))
    assert "the job's query failed: ValueError: bytes too large: 120" in line
    assert f"(at {project}/wt_jobs.py:9, in checked_bytes)" in line
    assert "Return Message" not in line


@pytest.mark.spark
def test_a_watermark_on_another_column_gets_a_hint_that_names_it(windtunnel_spark: Any, project: Path) -> None:
    line = one_line(check("--job", "wt_jobs:other_watermark", "--examples", "0"))
    assert "Spark rejects the job" in line
    assert "the job's watermark is on `ts2`, but the spec's window is on `ts`" in line
    assert "write it with withWatermark" not in line


@pytest.mark.spark
def test_no_spark_log_line_on_the_terminal_before_the_error(project: Path) -> None:
    """A real process (Spark's loggers write to the process's stderr): one line, no JSON log."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", "from windtunnel.cli.main import main; main()", "check",
         "spec.yaml", "--job", "wt_jobs:wrong_columns", "--examples", "0"],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[:2000]
    assert "the job reads column device, which the spec's events do not have" in lines[0]
    assert "DataFrameQueryContextLogger" not in done.stderr


def test_the_estimate_comes_first_for_too_many_examples(project: Path) -> None:
    result = CliRunner().invoke(
        cli, ["check", "spec.yaml", "--target", "oracle:tenzir", "--examples", "1000000000",
              "--shrink-seconds", "0"],
    )  # fmt: skip
    assert result.exit_code == 1  # the spec's own input diverges (tenzir is not spark)
    first = result.stderr.splitlines()[0]
    assert first.startswith("windtunnel: --examples 1,000,000,000 takes about ")
    assert "--examples 10000 fits 10m00s" in first
