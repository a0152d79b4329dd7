"""Build spark_impl/jvm/windtunnel.jar, the production operator's jar shipped in the wheel.

A session builds the jar from the sources itself when a ``javac`` is found
(``windtunnel.spark_impl.jvm.build``: against the installed Spark, cached); the shipped jar
serves machines with a Java runtime only. It is compiled with ``javac --release 17``
against the installed PySpark's jars and written with fixed timestamps, so the same sources
and javac give the same bytes; it records the sources' digest (tests/spark_impl/jvm fails
when a source changed without a rebuild) and the Spark version. ``build()`` below is the
generic reproducible writer tools/build_flink_jar.py uses for the Flink harness.

Run: python tools/build_jar.py [--out PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JVM_DIR = ROOT / "spark_impl" / "jvm"
DIGEST_ENTRY = "windtunnel/jvm/SOURCE.sha256"
JAVAC_ENTRY = "windtunnel/jvm/JAVAC"
FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def sources(directory: Path = JVM_DIR) -> list[Path]:
    """The Java sources, sorted by name."""
    return sorted(directory.glob("*.java"))


def source_digest(directory: Path = JVM_DIR) -> str:
    """sha256 over the sources' names and bytes."""
    digest = hashlib.sha256()
    for path in sources(directory):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def javac_version() -> str:
    result = subprocess.run(["javac", "-version"], capture_output=True, text=True, check=True)
    return (result.stdout or result.stderr).strip()


def classpath() -> str:
    import pyspark

    jars = sorted((Path(pyspark.__file__).parent / "jars").glob("*.jar"))
    return ":".join(str(jar) for jar in jars)


def build(
    out: Path,
    *,
    directory: Path = JVM_DIR,
    cp: str | None = None,
    digest_entry: str = DIGEST_ENTRY,
    javac_entry: str = JAVAC_ENTRY,
) -> None:
    """Compile the sources in ``directory`` against ``cp`` (default: PySpark's jars) and
    write the jar to ``out`` (tools/build_flink_jar.py passes Flink's)."""
    with tempfile.TemporaryDirectory() as tmp:
        classes = Path(tmp)
        compiled = subprocess.run(
            ["javac", "--release", "17", "-nowarn", "-d", str(classes), "-cp",
             cp if cp is not None else classpath(), *map(str, sources(directory))],
            check=False,
        )
        if compiled.returncode != 0:
            raise SystemExit(f"javac failed (exit {compiled.returncode}); the jar was not written")
        # sorted: rglob's order depends on the file system, the jar's bytes must not
        entries = {
            str(p.relative_to(classes)): p.read_bytes() for p in sorted(classes.rglob("*.class"))
        }
        entries[digest_entry] = (source_digest(directory) + "\n").encode()
        entries[javac_entry] = (javac_version() + "\n").encode()
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as jar:
            manifest = zipfile.ZipInfo("META-INF/MANIFEST.MF", FIXED_TIME)
            jar.writestr(manifest, "Manifest-Version: 1.0\r\n\r\n")
            for name in sorted(entries):
                jar.writestr(zipfile.ZipInfo(name, FIXED_TIME), entries[name], zipfile.ZIP_DEFLATED)


def main() -> int:
    from windtunnel.spark_impl.jvm.build import SHIPPED, compile_jar

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=SHIPPED)
    args = parser.parse_args()
    compile_jar(args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
