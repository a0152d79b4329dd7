"""Throughput of the Java window engine (``windtunnel.engine``) on one core.

Compiles the benchmark's own ``Bench`` main class (``benchmarks/jvm/windtunnel/engine/Bench.java``:
not part of the product's jar; ``javac --release 17``) against windtunnel's jar (built from the
engine's sources once per machine, ``spark_impl/jvm/build.py``) into a temporary folder and
runs it; it times one slice by the thread's CPU time (a busy machine does not
skew it) against a baseline run in the same JVM: per-(key, window) counters in a HashMap doing
the least the shape needs (no clocks, late test, idle timers or output rows).

Shapes: ``realistic`` (string user ids over 20,000 users, 10-minute windows every minute,
tolerance 2 minutes, count + sum + avg of a double, 5% of events up to 2 minutes out of
order, one event every 7 ms on average) and ``tumbling`` (1000 long keys, 1-minute tumbling
count()); ``idle`` is the realistic shape with a 5-minute idle timeout, ``sessions`` its stream
in 5-minute-gap sessions (tolerance 2 minutes, Tenzir's reorder buffer; no baseline). Prints events/s, window deliveries/s, the state size and the ratio engine/baseline.
Before timing, each shape's state must decode to its keys and, on ``tumbling``, the engine's
outputs must be the baseline's (key, window) pairs (``Bench`` throws otherwise: exit 1).

Run: python benchmarks/engine_java.py [--shape all|realistic|idle|sessions|tumbling] [--events N] [--rounds R]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent / "jvm" / "windtunnel" / "engine" / "Bench.java"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="all", choices=("all", "realistic", "idle", "sessions", "tumbling"))
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=5, help="the first warms up; the median of the rest")
    args = parser.parse_args(argv)
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        print("javac and java (JDK 17 or later) are needed on PATH", file=sys.stderr)
        return 2
    from windtunnel.spark_impl.jvm.build import jar_for_spark

    jar, _ = jar_for_spark()
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run([javac, "--release", "17", "-cp", str(jar), "-d", classes, str(BENCH)], check=True)
        done = subprocess.run(
            [java, "-cp", os.pathsep.join([classes, str(jar)]), "windtunnel.engine.Bench", args.shape,
             str(args.events), str(args.rounds)],
            check=False,
        )
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
