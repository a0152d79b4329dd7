"""SparkSessions for windtunnel: local by default, a standalone master, or Spark Connect.

Settings every session gets: UTC session time zone, the RocksDB state store (needed by
``transformWithStateInPandas``), no UI and no console progress bar, and the current
interpreter for Python workers. ``ship_package`` sends the ``windtunnel`` modules to
executors (``addPyFile``) or to a Connect server (``addArtifacts``).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from windtunnel.oracle.model.errors import EngineUnavailable

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
) -> Any:
    """A SparkSession: ``remote`` (``sc://host:port``) for Spark Connect, else ``master``
    (default ``local[2]``; ``spark://host:port`` for a standalone cluster). The package's
    modules are shipped for cluster and Connect sessions. Raises EngineUnavailable when
    the session cannot start."""
    _python_env()
    from pyspark.sql import SparkSession

    try:
        if remote:
            spark = SparkSession.builder.remote(remote).appName(app_name).getOrCreate()
            ship_package(spark)
            return spark
        builder = SparkSession.builder.master(master or "local[2]").appName(app_name)
        settings = dict(BASE_CONF)
        settings["spark.sql.shuffle.partitions"] = str(shuffle_partitions)
        if master and master.startswith("spark://"):
            settings.setdefault("spark.driver.host", "127.0.0.1")
        settings.update(conf or {})
        for key, value in settings.items():
            builder = builder.config(key, value)
        with _jvm_stderr_to_log():
            spark = builder.getOrCreate()
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


def package_zip(directory: str | None = None) -> Path:
    """A zip of the installed ``windtunnel`` namespace (``windtunnel/<part>/*.py``)."""
    import windtunnel.cli
    import windtunnel.oracle
    import windtunnel.spark_impl

    parts = {"oracle": windtunnel.oracle, "spark_impl": windtunnel.spark_impl}
    try:
        import windtunnel.simulator

        parts["simulator"] = windtunnel.simulator
    except ImportError:  # pragma: no cover - simulator not installed
        pass
    out = Path(directory or tempfile.mkdtemp(prefix="windtunnel-ship-")) / "windtunnel.zip"
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("windtunnel/__init__.py", "")
        for name, module in parts.items():
            root = Path(module.__file__ or "").parent
            for path in sorted(root.glob("*.py")):
                archive.write(path, f"windtunnel/{name}/{path.name}")
    return out


def ship_package(spark: Any) -> None:
    """Make ``windtunnel`` importable on executors (cluster) or on the Connect server."""
    path = package_zip()
    if hasattr(spark, "addArtifacts"):
        try:
            spark.addArtifacts(str(path), pyfile=True)
            return
        except Exception as exc:  # the classic session has addArtifacts too but not everywhere
            if not hasattr(spark, "sparkContext"):
                raise EngineUnavailable(f"cannot ship windtunnel to the server: {exc}") from exc
    spark.sparkContext.addPyFile(str(path))
