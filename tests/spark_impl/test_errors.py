"""The root cause of a Spark failure in one line: the innermost exception and the user's
code it came from, from the texts Spark 4.3 really produces (recorded from a check of jobs
whose UDF raises, whose expression raises in the JVM, and that divide by zero)."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.spark_impl.errors import (
    Cause,
    append_mode_fix,
    cause_line,
    missed_start,
    once_more_if_missed_start,
    root_cause,
    spark_duration,
    watermark_columns,
)

SITE = "/venv/lib/python3.11/site-packages"
OUTER = f"""[STREAM_FAILED] Query [id = 1050156b-81cf, runId = 4f80132f-c252] terminated with \
exception: [FOREACH_BATCH_USER_FUNCTION_ERROR] An error occurred in the user provided function \
in foreach batch sink. Reason: An exception was raised by the Python Proxy. Return Message: \
Traceback (most recent call last):
  File "{SITE}/py4j/clientserver.py", line 644, in _call_proxy
    return_value = getattr(self.pool[obj_id], method)(*params)
  File "{SITE}/pyspark/sql/utils.py", line 163, in call
    self.func(DataFrame(jdf, wrapped_session_jdf), batch_id)
  File "{SITE}/windtunnel/spark_impl/harness/user_job.py", line 470, in keep
    collected.extend((batch_id, r.asDict(recursive=True)) for r in batch.collect())
  File "{SITE}/pyspark/sql/classic/dataframe.py", line 504, in collect
    sock_info = self._jdf.collectToPython()
  File "{SITE}/pyspark/errors/exceptions/captured.py", line 262, in deco
    raise converted from None
"""
PLAN = """
=== Streaming Query ===
Identifier: [id = 1050156b-81cf, runId = 4f80132f-c252]
Logical Plan:
~WriteToMicroBatchDataSourceV1 ForeachBatchSink, Append
+- ~Aggregate [window#21-T120000ms, user#9], [count(1) AS failures#14L]
"""
UDF = OUTER + """  File "/home/u/proj/jobs.py", line 12, in boom
    raise ValueError(f"bytes too large: {b}")
pyspark.errors.exceptions.captured.PythonException: An exception was thrown from the Python worker:
Traceback (most recent call last):
  File "/home/u/proj/jobs.py", line 12, in boom
    raise ValueError(f"bytes too large: {b}")
ValueError: bytes too large: 120
 SQLSTATE: 39000 SQLSTATE: XXKST""" + PLAN
JVM = OUTER + """pyspark.errors.exceptions.captured.SparkRuntimeException: [USER_RAISED_EXCEPTION] \
custom jvm failure SQLSTATE: P0001
 SQLSTATE: 39000 SQLSTATE: XXKST""" + PLAN
DIVIDE = OUTER + """pyspark.errors.exceptions.captured.ArithmeticException: [DIVIDE_BY_ZERO] \
Division by zero. Use `try_divide` to tolerate divisor being 0 and return NULL instead. SQLSTATE: 22012
== DataFrame ==
"__truediv__" was called from
/home/u/proj/jobs.py:30

 SQLSTATE: 39000 SQLSTATE: XXKST""" + PLAN
PY4J = """An error occurred while calling o123.start.
: java.lang.IllegalStateException: cannot start
\tat org.apache.spark.sql.streaming.DataStreamWriter.start(DataStreamWriter.scala:251)
Caused by: java.io.IOException: No space left on device
\tat java.base/java.io.FileOutputStream.writeBytes(Native Method)
"""
KAFKA = OUTER + """pyspark.errors.exceptions.captured.PythonException: An exception was thrown \
from the Python worker:
Traceback (most recent call last):
  File "{site}/windtunnel/spark_impl/jobs/kafka_python.py", line 240, in _partitions
    raise EngineUnavailable(
windtunnel.oracle.model.errors.EngineUnavailable: cannot reach the Kafka cluster of \
kafka.bootstrap.servers within 30 s; check the address and that the cluster runs
""".replace("{site}", SITE) + PLAN


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        (UDF, Cause("ValueError: bytes too large: 120", "/home/u/proj/jobs.py:12, in boom")),
        (JVM, Cause("SparkRuntimeException: [USER_RAISED_EXCEPTION] custom jvm failure")),
        (DIVIDE, Cause("ArithmeticException: [DIVIDE_BY_ZERO] Division by zero. Use "
                       "`try_divide` to tolerate divisor being 0 and return NULL instead.",
                       "/home/u/proj/jobs.py:30")),
        (PY4J, Cause("java.io.IOException: No space left on device")),
        (KAFKA, Cause("EngineUnavailable: cannot reach the Kafka cluster of "
                      "kafka.bootstrap.servers within 30 s; check the address and that the "
                      "cluster runs")),
    ],
    ids=["python-udf", "jvm", "dataframe-call-site", "py4j-caused-by", "windtunnel-in-worker"],
)
def test_the_innermost_exception_and_the_users_line(text: str, cause: Cause) -> None:
    assert root_cause(text) == cause


def test_one_line_without_the_plan_or_the_wrappers() -> None:
    line = cause_line(UDF)
    assert line == "ValueError: bytes too large: 120 (at /home/u/proj/jobs.py:12, in boom)"
    for noise in ("STREAM_FAILED", "Traceback", "SQLSTATE", "Aggregate", "\n"):
        assert noise not in line


def _raises_in_user_code() -> None:
    raise KeyError("user_id")


def test_a_python_exception_names_its_own_frame() -> None:
    with pytest.raises(KeyError) as caught:
        _raises_in_user_code()
    line = cause_line(caught.value)
    assert line.startswith("KeyError: 'user_id' (at ")
    assert "test_errors.py:" in line and "in _raises_in_user_code" in line


class StreamingQueryException(Exception):
    """Stands for pyspark's (only its module and name matter)."""


StreamingQueryException.__module__ = "pyspark.errors.exceptions.captured"


def test_a_wrapper_without_an_inner_exception_keeps_its_first_line() -> None:
    error = StreamingQueryException("[STREAM_FAILED] Query terminated: boom\n  at org.apache...")
    assert cause_line(error) == "[STREAM_FAILED] Query terminated: boom"


def test_long_causes_are_cut() -> None:
    line = cause_line("ValueError: " + "x" * 1000)
    assert len(line) == 300 and line.endswith("...")


class _Plan:
    def __init__(self, text: str) -> None:
        self.text = text

    def queryExecution(self) -> Any:
        return self

    def analyzed(self) -> Any:
        return self

    def toString(self) -> str:
        return self.text


class _Frame:
    """A DataFrame as far as the hint reads it: its JVM plan's text."""

    def __init__(self, plan: str) -> None:
        self._jdf = _Plan(plan)


AGGREGATE = "Aggregate [window#21, user#9], [count(1) AS n#14L]\n+- Project [ts#8, user#9]\n"


@pytest.mark.parametrize(
    ("plan", "words"),
    [
        (AGGREGATE, 'the job sets no watermark: call withWatermark("ts", "2 minutes") before'),
        (AGGREGATE + "   +- EventTimeWatermark 0c1d2e3f-aaaa-bbbb-cccc-0123456789ab, ts2#12: "
         "timestamp, 2 minutes\n",
         "the job's watermark is on `ts2`, but the spec's window is on `ts`"),
        (AGGREGATE + "   +- EventTimeWatermark ts#8: timestamp, 2 minutes\n",
         "the job's watermark is on `ts`, but its aggregation does not group by an event-time "
         'window of it: group by window("ts", ...)'),
    ],
    ids=["none", "another-column", "not-grouped-by-a-window"],
)
def test_the_append_mode_hint_matches_the_jobs_watermark(plan: str, words: str) -> None:
    assert words in append_mode_fix(_Frame(plan), "ts", 120_000)


def test_a_plan_that_cannot_be_read_gets_the_general_hint() -> None:
    assert watermark_columns(object()) is None
    assert 'window("ts", ...) after withWatermark("ts", "2 minutes")' in append_mode_fix(
        object(), "ts", 120_000
    )


@pytest.mark.parametrize(
    ("ms", "text"),
    [(120_000, "2 minutes"), (90_000, "90 seconds"), (250, "250 milliseconds"),
     (0, "0 milliseconds"), (86_400_000, "1 days")],
)
def test_spark_durations(ms: int, text: str) -> None:
    assert spark_duration(ms) == text


_MISSED = ("[STREAM_FAILED] Query [id = 1] terminated with exception: "
           "Python worker failed to connect back.")


@pytest.mark.parametrize(
    ("failures", "expected_runs", "raised"),
    [
        ([], 1, None),  # no failure: one run
        ([RuntimeError(_MISSED)], 2, None),  # missed start: once more, its result
        ([RuntimeError(_MISSED)] * 2, 2, "connect back"),  # twice: the second is raised
        ([ValueError("bytes too large")], 1, "bytes too large"),  # other errors: at once
    ],
)
def test_a_run_whose_python_process_missed_its_start_runs_once_more(
    failures: list[Exception], expected_runs: int, raised: str | None
) -> None:
    runs: list[int] = []
    notes: list[str] = []

    def run() -> str:
        runs.append(1)
        if len(runs) <= len(failures):
            raise failures[len(runs) - 1]
        return "result"

    if raised is None:
        assert once_more_if_missed_start(run, notes.append) == "result"
    else:
        with pytest.raises(Exception, match=raised):
            once_more_if_missed_start(run, notes.append)
    assert len(runs) == expected_runs
    assert len(notes) == min(expected_runs - 1, 1)
    assert all("did not connect back in time" in n for n in notes)
    assert missed_start(_MISSED) and not missed_start("bytes too large")
