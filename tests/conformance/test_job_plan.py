"""The cause named from a job's plan, one test per parameter: each job differs from its spec
in one thing, and the plan Spark analyzes names it in the spec's units (a classic session;
over Spark Connect too). The columns a job reads come from the same plan."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from windtunnel.conformance.cause import cause_lines, plan_reading
from windtunnel.conformance.targets.spark import job_target
from windtunnel.oracle.scenario import Scenario, parse_scenario

pytestmark = pytest.mark.spark

SPEC = {"name": "logins", "profile": "spark",
        "window": {"kind": "fixed", "size": "1min", "on": "ts", "tolerance": "1min"},
        "group_by": ["user_id"], "aggregate": {"logins": "count()", "bytes": "sum(bytes)"},
        "input": [{"ts": 1000, "user_id": "u1", "bytes": 3, "country": "de"}]}


def spec(**changes: Any) -> Scenario:
    return parse_scenario({**SPEC, **changes})


def logins(delay: str = "1 minute", size: str = "1 minute", slide: str | None = None,
           on: str = "ts", keys: tuple[str, ...] = ("user_id",), total: str = "sum",
           ) -> Callable[[DataFrame], DataFrame]:
    def job(events: DataFrame) -> DataFrame:
        window = F.window(on, size, slide) if slide else F.window(on, size)
        timed = events if on == "ts" else events.withColumn(
            on, F.col("ts") - F.expr("INTERVAL 1 HOUR"))  # local time: another column
        return (timed.withWatermark(on, delay).groupBy(window, *keys)
                .agg(F.count(F.lit(1)).alias("logins"),
                     getattr(F, total)("bytes").alias("bytes")))
    return job


def sessions(events: DataFrame) -> DataFrame:
    return (events.withWatermark("ts", "1 minute")
            .groupBy(F.session_window("ts", "20 seconds"), "user_id")
            .agg(F.count(F.lit(1)).alias("logins"), F.sum("bytes").alias("bytes")))


def deduplicated(events: DataFrame) -> DataFrame:
    return (events.withWatermark("ts", "1 minute").dropDuplicatesWithinWatermark(["country"])
            .groupBy(F.window("ts", "1 minute"), "user_id")
            .agg(F.count(F.lit(1)).alias("logins"), F.sum("bytes").alias("bytes")))


def no_watermark(events: DataFrame) -> DataFrame:
    return (events.groupBy(F.window("ts", "1 minute"), "user_id")
            .agg(F.count(F.lit(1)).alias("logins"), F.sum("bytes").alias("bytes")))


def filtered(events: DataFrame) -> DataFrame:
    return logins()(events.where(F.col("country") != "fr"))


PARAMETERS: dict[str, tuple[Callable[[DataFrame], DataFrame], Scenario, str]] = {
    "watermark delay": (logins(delay="10 seconds"), spec(),
                        "the job's watermark on ts is 10s; the spec's tolerance is 1min"),
    "window size": (logins(size="5 minutes"), spec(),
                    "the job's window size is 5min; the spec's size is 1min"),
    "window slide": (logins(size="10 minutes", slide="5 minutes"),
                     spec(window={**SPEC["window"], "size": "10min", "every": "2min"}),
                     "the job's window slides every 5min; the spec's every is 2min"),
    "watermark column": (logins(on="local_ts"), spec(),
                         "the job's watermark is on local_ts; the spec's event time is ts"),
    "window column": (logins(on="local_ts"), spec(),
                      "the job's window is on local_ts; the spec's is on ts"),
    "session gap": (sessions, spec(window={"kind": "session", "gap": "30s", "on": "ts",
                                           "tolerance": "1min"}),
                    "the job's session gap is 20s; the spec's gap is 30s"),
    "grouping keys": (logins(keys=("user_id", "country")), spec(),
                      "the job groups by user_id, country (beside the window); the spec "
                      "groups by user_id"),
    "aggregate": (logins(total="max"), spec(),
                  "the job's bytes is max(bytes); the spec's is sum(bytes)"),
    "deduplication": (deduplicated, spec(),
                      "the job deduplicates on country; the spec has no deduplicate stage"),
    "output mode": (no_watermark, spec(output_mode="update"),
                    "the job has no watermark (so in update mode it never drops a late row "
                    "nor forgets a window); the spec's tolerance is 1min"),
    "filter": (filtered, spec(),
               "the job filters rows (NOT (country = fr)); the spec has no where"),
    "data path": (filtered, spec(where='country != "fr"'),
                  "the job's plan matches the spec (watermark, window, keys, aggregates, "
                  "stages): the difference is in the data path: filter NOT (country = fr)"),
}


@pytest.mark.parametrize("parameter", list(PARAMETERS))
def test_the_report_names_the_parameter_that_differs(parameter: str) -> None:
    job, scenario, line = PARAMETERS[parameter]
    plan = job_target(job).plan(scenario)
    assert line in cause_lines(plan, scenario)


def test_the_columns_a_job_reads_come_from_its_plan() -> None:
    assert job_target(logins()).plan(spec()).reads == {"ts", "user_id", "bytes"}
    assert job_target(filtered).plan(spec()).reads == {"ts", "user_id", "bytes", "country"}
    assert job_target(deduplicated).plan(spec()).reads == {"ts", "user_id", "bytes", "country"}


def test_the_spec_as_the_plan_reads_it_is_the_oracles_stand_in() -> None:
    job, scenario, _ = PARAMETERS["watermark delay"]
    reading = plan_reading(job_target(job).plan(scenario), scenario)
    assert reading is not None and reading[0] == "the job's plan: tolerance 10s"
    assert reading[1](scenario).query.window.tolerance_ms == 10_000  # type: ignore[attr-defined]


# --- Spark Connect ------------------------------------------------------------------------


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


CONNECT_MODE = "SPARK_CONNECT_MODE_ENABLED"


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Spark Connect session on a server (local[2]) started from the wheel, stopped by
    its process group after the module."""
    from pyspark.find_spark_home import _find_spark_home
    from pyspark.sql import SparkSession

    tmp = tmp_path_factory.mktemp("connect")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    env = {**os.environ, "SPARK_LOG_DIR": str(tmp / "logs"), "SPARK_PID_DIR": str(tmp / "pids"),
           "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    command = [str(Path(_find_spark_home()) / "sbin" / "start-connect-server.sh"), "--wait",
               "--master", "local[2]", "--conf", f"spark.connect.grpc.binding.port={port}",
               "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
               "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.ui.enabled=false",
               "--conf", "spark.sql.session.timeZone=UTC"]
    with (tmp / "server.log").open("wb") as log:
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while not _port_open(port):
            assert server.poll() is None, (tmp / "server.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "Spark Connect not listening after 180 s"
            time.sleep(0.2)  # polling the port, not waiting a fixed time
        # the builder sets SPARK_CONNECT_MODE_ENABLED for the process: a classic session
        # started later in this worker (or a child process) must not see it
        connect_mode = os.environ.get(CONNECT_MODE)
        session = SparkSession.builder.remote(f"sc://127.0.0.1:{port}").create()
        try:
            yield session
        finally:
            session.stop()
            if connect_mode is None:
                os.environ.pop(CONNECT_MODE, None)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)


@pytest.mark.cluster
@pytest.mark.parametrize("parameter", ["watermark delay", "window slide", "session gap"])
def test_over_spark_connect_the_plan_names_it_too(connect: Any, parameter: str) -> None:
    job, scenario, line = PARAMETERS[parameter]
    plan = job_target(job, connect).plan(scenario)
    assert line in cause_lines(plan, scenario)
    assert plan.reads == {"ts", "user_id", "bytes"}
