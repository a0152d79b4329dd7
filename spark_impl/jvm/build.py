"""Building windtunnel's jar from its Java sources against the installed Spark.

The sources live in ``spark_impl/jvm/src``. :func:`jar_for_spark` gives the jar a session
loads: one compiled here from the sources with ``javac --release 17`` against the installed
PySpark's jars, kept in a cache folder named by the sources' digest and the Spark version
(``$WINDTUNNEL_CACHE``, else ``$XDG_CACHE_HOME/windtunnel``, else ``~/.cache/windtunnel``), so
it is built once per machine and Spark version (a few seconds); without ``javac`` (a Java
runtime only), the jar shipped in the wheel (:data:`SHIPPED`, built by ``tools/build_jar.py``
from the same sources). Every jar carries its sources' digest and the Spark version it was
compiled against (:data:`DIGEST_ENTRY`, :data:`SPARK_ENTRY`); entries are written with fixed
timestamps, so the same sources, javac and Spark give the same bytes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "src"
SHIPPED = HERE / "windtunnel.jar"
DIGEST_ENTRY = "windtunnel/SOURCE.sha256"
SPARK_ENTRY = "windtunnel/SPARK_VERSION"
JAVAC_ENTRY = "windtunnel/JAVAC"
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
CACHE_ENV = "WINDTUNNEL_CACHE"


class BuildFailed(Exception):
    """javac failed; the message holds its first error line."""


def sources(root: Path = SOURCES) -> list[Path]:
    """The Java sources, sorted by path."""
    return sorted(root.rglob("*.java"))


def source_digest(root: Path = SOURCES) -> str:
    """sha256 over the sources' relative paths and bytes."""
    digest = hashlib.sha256()
    for path in sources(root):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def spark_jars() -> list[Path]:
    """The installed PySpark's jars (the compile classpath)."""
    import pyspark

    return sorted((Path(pyspark.__file__).parent / "jars").glob("*.jar"))


def spark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


def javac() -> str | None:
    """The ``javac`` beside ``$JAVA_HOME/bin/java``, else on PATH, else None."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "javac").is_file():
        return str(Path(home) / "bin" / "javac")
    return shutil.which("javac")


def cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "windtunnel"


def compile_jar(
    out: Path,
    *,
    root: Path = SOURCES,
    classpath: list[Path] | None = None,
    compiler: str | None = None,
) -> Path:
    """Compile ``root``'s sources into the jar ``out`` (written atomically); raises
    BuildFailed with javac's first error line, FileNotFoundError without a javac."""
    compiler = compiler or javac()
    if compiler is None:
        raise FileNotFoundError("javac not found (set JAVA_HOME to a JDK 17 or 21)")
    jars = spark_jars() if classpath is None else classpath
    with tempfile.TemporaryDirectory(prefix="windtunnel-javac-") as tmp:
        classes = Path(tmp) / "classes"
        done = subprocess.run(
            [compiler, "--release", "17", "-nowarn", "-encoding", "UTF-8", "-d", str(classes),
             "-cp", os.pathsep.join(map(str, jars)), *map(str, sources(root))],
            capture_output=True, text=True, check=False,
        )
        if done.returncode != 0:
            errors = [line for line in done.stderr.splitlines() if "error" in line]
            raise BuildFailed((errors or done.stderr.splitlines() or ["javac failed"])[0])
        version = subprocess.run([compiler, "-version"], capture_output=True, text=True)
        entries = {
            str(p.relative_to(classes)): p.read_bytes() for p in sorted(classes.rglob("*.class"))
        }
        entries[DIGEST_ENTRY] = (source_digest(root) + "\n").encode()
        entries[SPARK_ENTRY] = (spark_version() + "\n").encode()
        entries[JAVAC_ENTRY] = ((version.stdout or version.stderr).strip() + "\n").encode()
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr(zipfile.ZipInfo("META-INF/MANIFEST.MF", FIXED_TIME),
                         "Manifest-Version: 1.0\r\n\r\n")
            for name in sorted(entries):
                jar.writestr(zipfile.ZipInfo(name, FIXED_TIME), entries[name], zipfile.ZIP_DEFLATED)
        partial.replace(out)
    return out


@dataclass(frozen=True, slots=True)
class JarInfo:
    """A jar and what it says about itself."""

    path: Path
    digest: str
    spark: str

    @property
    def current(self) -> bool:
        """Built from the sources as they are, against the installed Spark."""
        return self.digest == source_digest() and self.spark == spark_version()


def jar_info(path: Path) -> JarInfo | None:
    """The digest and Spark version recorded in ``path``, or None for a missing or foreign jar."""
    try:
        with zipfile.ZipFile(path) as jar:
            digest = jar.read(DIGEST_ENTRY).decode().strip()
            spark = jar.read(SPARK_ENTRY).decode().strip()
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    return JarInfo(path, digest, spark)


def jar_for_spark() -> tuple[Path, str]:
    """The jar to load and how it was found (``cached``, ``built``, ``shipped``).

    Built from source into the cache when a ``javac`` exists; raises BuildFailed when that
    build fails; FileNotFoundError when there is neither a javac nor a shipped jar."""
    digest = source_digest()
    cached = cache_dir() / "jvm" / f"windtunnel-{digest[:16]}-spark{spark_version()}.jar"
    if cached.is_file():
        return cached, "cached"
    if javac() is not None:
        return compile_jar(cached), "built"
    if SHIPPED.is_file():
        return SHIPPED, "shipped"
    raise FileNotFoundError(f"no javac to build windtunnel's jar and no {SHIPPED.name} shipped")
