"""Beyond one machine: a standalone master and worker, and a Spark Connect server, started
from the pip wheel on 127.0.0.1, each running a scenario replay (compared with the oracle
by ``--engine both``) and a ``windtunnel run`` job (compared with the oracle here).

On the standalone cluster the executors run a Python that has pyspark but not windtunnel
(``foreign_python``), as on workers where only the driver's machine has windtunnel: they
import windtunnel, its subpackages included, only from the zip the driver ships.

The commands run in subprocesses, as a user would run them: the test run's own local
session stays untouched. Every process a fixture starts is stopped by its PID.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from windtunnel.oracle.engine import run
from windtunnel.oracle.model.results import to_jsonl_line
from windtunnel.oracle.model.stream import Event

from .foreign_python import imports, python_without_windtunnel

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SPEC = """
name: cluster-job
window: {size: 200ms, on: ts, idle_timeout: 150ms}
group_by: user_id
aggregate: {txns: count(), amount: sum(amount_paise)}
"""

if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Java is not installed: Spark cannot start", allow_module_level=True)


def spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Any, what: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what}: exited early ({log.read_text()[-2000:]})")
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{what}: not ready after 90 s ({log.read_text()[-2000:]})")


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def environment(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        SPARK_LOG_DIR=str(tmp / "logs"),
        SPARK_PID_DIR=str(tmp / "pids"),
        SPARK_WORKER_DIR=str(tmp / "work"),
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
    )
    return env


def start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """A process in its own process group (so stopping it also stops its JVM child)."""
    handle = log.open("wb")
    return subprocess.Popen(
        command, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a process this module started, by its PID (its process group)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


EXECUTOR_SIDE = "WINDTUNNEL_TEST_EXECUTOR_SIDE"
"""Set in the worker's environment (its executors inherit it): ``two_machines_python`` then
runs ``foreign_python``."""


@pytest.fixture(scope="module")
def foreign_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python with pyspark, pandas and pyarrow but no windtunnel (checked here)."""
    python = python_without_windtunnel(tmp_path_factory.mktemp("foreign") / "venv")
    assert imports(python, "pyspark.sql.streaming.stateful_processor")
    assert not imports(python, "windtunnel.oracle")
    return python


@pytest.fixture(scope="module")
def two_machines_python(tmp_path_factory: pytest.TempPathFactory, foreign_python: Path) -> Path:
    """One ``PYSPARK_PYTHON`` path, as on a real cluster, naming a different install per
    machine: this interpreter (windtunnel installed) where the driver runs, and
    ``foreign_python`` (no windtunnel) in executors. The driver's own Python workers (they
    plan windtunnel's Python data sources) need windtunnel as the user's machine has it."""
    script = tmp_path_factory.mktemp("two-machines") / "python"
    script.write_text(
        "#!/bin/sh\n"
        f'if [ -n "${EXECUTOR_SIDE}" ]; then exec {foreign_python} "$@"; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    script.chmod(0o755)
    return script


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``spark://127.0.0.1:PORT`` of a master with one worker (2 cores), both from the wheel."""
    tmp = tmp_path_factory.mktemp("standalone")
    env = environment(tmp) | {EXECUTOR_SIDE: "1"}
    spark_class = str(spark_home() / "bin" / "spark-class")
    port, ui, worker_ui = free_port(), free_port(), free_port()
    master = start(
        [
            spark_class,
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(ui),
        ],
        env,
        tmp / "master.log",
    )
    processes = [master]
    try:
        wait_until(lambda: port_open(port), "standalone master", master, tmp / "master.log")
        url = f"spark://127.0.0.1:{port}"
        worker = start(
            [
                spark_class,
                "org.apache.spark.deploy.worker.Worker",
                url,
                "--host",
                "127.0.0.1",
                "--cores",
                "2",
                "--memory",
                "4g",
                "--webui-port",
                str(worker_ui),
            ],
            env,
            tmp / "worker.log",
        )
        processes.append(worker)

        def worker_alive() -> bool:
            # the master's log, not its web UI: when another process took the UI port in the
            # meantime, Spark moves the UI to the next port and the JSON answer is not its own
            log = tmp / "master.log"
            return log.exists() and "Registering worker" in log.read_text(errors="replace")

        wait_until(worker_alive, "standalone worker", worker, tmp / "worker.log")
        yield url
    finally:
        for process in reversed(processes):
            stop(process)


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``sc://127.0.0.1:PORT`` of a Spark Connect server (local[2]) started from the wheel."""
    tmp = tmp_path_factory.mktemp("connect")
    env = environment(tmp)
    port = free_port()
    server = start(
        [
            str(spark_home() / "sbin" / "start-connect-server.sh"),
            "--wait",
            "--master",
            "local[2]",
            "--conf",
            f"spark.connect.grpc.binding.port={port}",
            "--conf",
            "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf",
            "spark.driver.host=127.0.0.1",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.sql.shuffle.partitions=2",
            "--conf",
            "spark.sql.session.timeZone=UTC",
            "--conf",
            "spark.sql.streaming.stateStore.providerClass="
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
        ],
        env,
        tmp / "connect.log",
    )
    try:
        wait_until(lambda: port_open(port), "spark connect server", server, tmp / "connect.log")
        yield f"sc://127.0.0.1:{port}"
    finally:
        stop(server)


def windtunnel(
    *args: str, tmp: Path, executor_python: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``windtunnel ARGS`` in a fresh interpreter (its own Spark driver or Connect client);
    ``executor_python`` (default: this interpreter) is its ``PYSPARK_PYTHON``."""
    env = environment(tmp)
    if executor_python is not None:
        env["PYSPARK_PYTHON"] = str(executor_python)
    env["WINDTUNNEL_SPARK_LOG"] = str(tmp / "spark-client.log")
    return subprocess.run(
        [sys.executable, "-c", "from windtunnel.cli.main import main; main()", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )


def records_dir(tmp: Path) -> Path:
    """A small payments stream as a spark-dir (three files, one micro-batch each)."""
    from windtunnel.simulator.outputs import write_spark_dir
    from windtunnel.simulator.workloads import simulate

    out = tmp / "stream"
    write_spark_dir(
        simulate("payments", events=240, seed=4, batch_size=80, late_fraction=0.05), out
    )
    return out


def verdict(stderr: str) -> list[str]:
    """A replay's stderr without its progress lines (``micro-batch 1/3: ...``)."""
    return [line for line in stderr.splitlines() if not line.startswith("micro-batch ")]


def oracle_lines(stream: Path) -> list[str]:
    from windtunnel.oracle.scenario import load_yaml, parse_scenario

    query = parse_scenario(load_yaml(SPEC) | {"input": []}).query
    records = [
        json.loads(line)
        for path in sorted(stream.glob("batch-*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    items = [Event(r["seq"], json.loads(r["value"]), r["arrival_ms"]) for r in records]
    return sorted(to_jsonl_line(o) for o in run(query, items))


def job_lines(out: Path) -> list[str]:
    """The job's JSON lines sink files (Spark's file sink layout) as contract lines."""
    from windtunnel.spark_impl.schema import OUTPUT_COLUMNS, output_of

    rows = [
        json.loads(line)
        for path in sorted(out.glob("part-*.json"))
        for line in path.read_text().splitlines()
    ]
    return sorted(to_jsonl_line(output_of({c: r.get(c) for c in OUTPUT_COLUMNS})) for r in rows)


@pytest.mark.parametrize("where", ["standalone", "connect"])
def test_replay_and_run_beyond_one_machine(
    where: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    address = request.getfixturevalue("standalone" if where == "standalone" else "connect_server")
    flag = "--master" if where == "standalone" else "--remote"
    # on the cluster the worker's Python cannot import windtunnel: the general operator's
    # modules (windtunnel.oracle.model, windtunnel.oracle.windows, ...) come from the
    # shipped zip, the production operator's classes from the shipped jar
    executors = request.getfixturevalue("two_machines_python") if where == "standalone" else None
    replayed = windtunnel(
        "replay",
        str(EXAMPLES / "brute-force.yaml"),
        "--engine",
        "both",
        "--micro-batch",
        "2",
        "--format",
        "jsonl",
        flag,
        address,
        tmp=tmp_path,
        executor_python=executors,
    )
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    # stderr holds windtunnel's own lines only (progress, then the verdict): Spark's log
    # went to WINDTUNNEL_SPARK_LOG
    assert verdict(replayed.stderr) == [
        "spark matches the oracle (23 outputs, 3 micro-batches)",
        "expectations held (brute-force)",
    ]
    if where == "standalone":
        assert "log4j" in (tmp_path / "spark-client.log").read_text()

    (tmp_path / "spec.yaml").write_text(SPEC)
    stream = records_dir(tmp_path)
    out = tmp_path / "out"
    ran = windtunnel(
        "run",
        str(tmp_path / "spec.yaml"),
        str(stream),
        "--out",
        str(out),
        flag,
        address,
        tmp=tmp_path,
        executor_python=executors,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "cluster-job: 3 micro-batches, 241 rows in" in ran.stderr
    assert job_lines(out) == oracle_lines(stream)
