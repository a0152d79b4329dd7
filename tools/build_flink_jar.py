"""Build conformance/flink/windtunnel-flink.jar from the Java sources beside it.

The jar ships in the wheel, so users of ``--target flink`` need a Java runtime but no
compiler. It is compiled with ``javac --release 17`` against Flink's jars from the installed
``apache-flink-libraries`` (the ``[flink]`` extra) and written with fixed timestamps by
tools/build_jar.py's writer, so the same sources and javac give the same bytes. It holds
``windtunnel/flink/SOURCE.sha256`` (tests/conformance/test_flink_jar.py fails when a source
changed without a rebuild) and ``windtunnel/flink/JAVAC``.

Run: python tools/build_flink_jar.py [--out PATH]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import build_jar

ROOT = Path(__file__).resolve().parent.parent
FLINK_DIR = ROOT / "conformance" / "flink"
JAR_NAME = "windtunnel-flink.jar"
DIGEST_ENTRY = "windtunnel/flink/SOURCE.sha256"
JAVAC_ENTRY = "windtunnel/flink/JAVAC"


def classpath() -> str:
    """Flink's jars (``pyflink/lib`` of apache-flink-libraries)."""
    from windtunnel.conformance.flink.runtime import flink_lib

    lib = flink_lib()
    if lib is None:
        raise SystemExit('Flink\'s jars are missing: pip install -e ".[flink]"')
    return ":".join(str(jar) for jar in sorted(lib.glob("*.jar")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=FLINK_DIR / JAR_NAME)
    args = parser.parse_args()
    build_jar.build(
        args.out, directory=FLINK_DIR, cp=classpath(), digest_entry=DIGEST_ENTRY,
        javac_entry=JAVAC_ENTRY,
    )
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
