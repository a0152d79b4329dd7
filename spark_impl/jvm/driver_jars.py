"""Classes of windtunnel's jar that go into the driver JVM itself, for its check sessions.

The operator's classes load through windtunnel's own class loader (``binding.py``). Two parts
must instead be in the JVM from its start, so each is cut from the jar into a small jar of its
own in windtunnel's cache (named by the jar's digest; never beside a shipped jar, whose folder
may be read-only and outlives upgrades) and named in the session's settings:

- :data:`NIO_LOCAL_FILES` on the driver's class path, as Hadoop's ``file:`` file system;
- :data:`CLOSURE_CHECKS` as a Java agent (``-javaagent``), so Spark's closure cleaner checks
  each lambda class once.

Both only when the jar was built against the running Spark (``jar_info``); without such a jar
(no ``javac`` and no matching shipped jar) the session keeps Spark's and Hadoop's own.
docs/conformance.md ("Check settings") gives their effect.
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

NIO_LOCAL_FILES = "windtunnel.spark.NioLocalFileSystem"
"""Hadoop's local file system with permissions set in-process (``NioLocalFileSystem.java``):
Hadoop without its native library (PySpark ships none) runs ``chmod`` as a child process for
every new file and directory, and a streaming query writes several files per micro-batch
(offsets, commits, state)."""

CLOSURE_CHECKS = "windtunnel.spark.ClosureChecks"
"""The Java agent (``ClosureChecks.java``, ``CleanerRewrite.java``): Spark's
``SparkClosureCleaner.clean`` runs in full for the first closure of each lambda class and
lets later closures of a class that passed through unchanged. Spark reads and parses the
declaring class's file and serializes the closure on every call, and a check runs the same
few lambda sites in thousands of small micro-batches."""

AGENT_CLASSES = ("windtunnel/spark/ClosureChecks", "windtunnel/spark/CleanerRewrite")


def tasks_in_the_driver(master: str | None) -> bool:
    """True for ``local`` and ``local[N]`` (the default master): the tasks run in the driver's
    JVM and share its heap and class path (not ``local-cluster``, nor any cluster)."""
    return (master or "local").split("[")[0] == "local"


def part_jar(jar: Path, name: str, prefixes: tuple[str, ...], manifest: str | None = None) -> Path:
    """A jar of ``jar``'s classes whose paths start with one of ``prefixes`` (and the
    ``manifest`` text, if given), made once in windtunnel's cache as ``NAME-DIGEST.jar``.
    Raises OSError when the cache cannot be written."""
    from windtunnel.spark_impl.jvm.build import cache_dir

    digest = hashlib.sha256(jar.read_bytes()).hexdigest()[:16]
    small: Path = cache_dir() / "jvm" / f"{name}-{digest}.jar"
    if small.is_file():
        return small
    small.parent.mkdir(parents=True, exist_ok=True)
    tmp = small.with_name(f".{small.name}.{os.getpid()}.tmp")
    with zipfile.ZipFile(jar) as whole, zipfile.ZipFile(tmp, "w") as part:
        if manifest is not None:
            part.writestr("META-INF/MANIFEST.MF", manifest)
        for item in whole.infolist():
            if item.filename.startswith(prefixes):
                part.writestr(item, whole.read(item))
    os.replace(tmp, small)
    return small


def local_files_jar(jar: Path) -> Path:
    """A jar of ``jar``'s :data:`NIO_LOCAL_FILES` classes alone (a class of the operator's on
    the application class path would shadow the one windtunnel's loader must load)."""
    return part_jar(jar, "localfs", (NIO_LOCAL_FILES.replace(".", "/"),))


def closure_checks_jar(jar: Path) -> Path:
    """A Java agent jar of ``jar``'s :data:`CLOSURE_CHECKS` classes (``Premain-Class``)."""
    manifest = f"Manifest-Version: 1.0\r\nPremain-Class: {CLOSURE_CHECKS}\r\n\r\n"
    return part_jar(jar, "closure-checks", AGENT_CLASSES, manifest)


def _cut_from_matching_jar(cut: Callable[[Path], Path]) -> Path | None:
    """``cut`` of windtunnel's jar when that jar was built against the running Spark; None
    without such a jar (no javac and no matching shipped jar) or a writable cache."""
    from windtunnel.spark_impl.jvm.build import jar_for_spark, jar_info, spark_version

    try:
        path, _ = jar_for_spark()
    except Exception:  # no javac and no shipped jar, or javac failed
        return None
    info = jar_info(path)
    if info is None or info.spark != spark_version():
        return None
    try:
        return cut(path)
    except OSError:  # no writable cache
        return None


def local_files_conf(master: str | None, conf: dict[str, str]) -> dict[str, str]:
    """The settings that give a local session :data:`NIO_LOCAL_FILES` for ``file:`` paths:
    its jar on the driver's class path (local mode: the tasks run in the driver) and
    ``fs.file.impl``. Empty for a cluster master, when ``conf`` already chooses a file
    system for ``file:``, or without a jar built for this Spark (Hadoop's own then)."""
    if not tasks_in_the_driver(master) or "spark.hadoop.fs.file.impl" in conf:
        return {}
    small = _cut_from_matching_jar(local_files_jar)
    if small is None:
        return {}
    class_path = os.pathsep.join(p for p in (conf.get("spark.driver.extraClassPath"), str(small)) if p)
    return {"spark.driver.extraClassPath": class_path, "spark.hadoop.fs.file.impl": NIO_LOCAL_FILES}


def closure_checks_conf(conf: dict[str, str]) -> dict[str, str]:
    """``spark.driver.extraJavaOptions`` of ``conf`` with the :data:`CLOSURE_CHECKS` agent
    added (the closures are cleaned in the driver, whatever the master). Empty without a jar
    built for this Spark or a writable cache (Spark's own cleaner then)."""
    agent = _cut_from_matching_jar(closure_checks_jar)
    if agent is None:
        return {}
    options = " ".join(o for o in (conf.get("spark.driver.extraJavaOptions"), f"-javaagent:{agent}") if o)
    return {"spark.driver.extraJavaOptions": options}
