"""Where the time of ``windtunnel run`` on a small spark-dir input goes, and its wall time.

Writes ``--events`` events (``windtunnel generate bare --format spark-dir``, ``--batch-size``
per file), then:

- ``end to end``: ``windtunnel run SPEC DIR --out ...`` as a new process, wall time, best of
  ``--repeat``, with the driver JVM's class archive (``spark_impl.jvm.class_archive``; built
  first if missing) and without it (``WINDTUNNEL_CLASS_ARCHIVE=off``), and their ratio;
- the breakdown, in this process, the steps ``run`` takes: importing the CLI, starting the
  session (``spark_session``), the source (``records_source``: the JVM's file source for
  windtunnel's own JSON lines, or the Python data source with ``--python-source``), then
  ``run_job`` until its first micro-batch ends and until the last.

Run: python benchmarks/run_startup.py [--events 2000] [--batch-size 500] [--repeat 2]
     [--python-source]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = """name: startup
window: {kind: fixed, size: 10s, on: ts}
group_by: key
aggregate: {n: count()}
"""


def generate(events: int, batch_size: int, out: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "windtunnel.cli", "generate", "bare", "--events", str(events),
         "--batch-size", str(batch_size), "--format", "spark-dir", "--out", str(out), "-q"],
        check=True,
    )


def end_to_end(spec: Path, source: Path, root: Path, repeat: int, archive: bool) -> float:
    best = float("inf")
    env = {**os.environ, "WINDTUNNEL_CLASS_ARCHIVE": "on" if archive else "off"}
    for attempt in range(repeat):
        began = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "windtunnel.cli", "run", str(spec), str(source), "--out",
             str(root / f"out-{archive}-{attempt}"), "-q"],
            check=True, env=env,
        )
        best = min(best, time.perf_counter() - began)
    return best


def ensure_archive() -> bool:
    """Build the driver JVM's class archive now (in the foreground) unless it is there;
    whether it is there afterwards."""
    from windtunnel.spark_impl.jvm.build import cache_dir
    from windtunnel.spark_impl.jvm.class_archive import build_now
    from windtunnel.spark_impl.jvm.java import ensure_java
    from windtunnel.spark_impl.session import BASE_CONF

    return build_now(ensure_java(), cache_dir() / "cds", BASE_CONF) is not None


def breakdown(spec: Path, source: Path, root: Path, python_source: bool) -> list[tuple[str, float]]:
    marks: list[tuple[str, float]] = []
    began = last = time.perf_counter()

    def mark(label: str) -> None:
        nonlocal last
        now = time.perf_counter()
        marks.append((label, now - last))
        last = now

    import windtunnel.cli.run  # noqa: F401
    from windtunnel.spark_impl.job import Sink, load_job_spec, records_source, run_job
    from windtunnel.spark_impl.session import spark_session

    mark("imports")
    job = load_job_spec(str(spec))
    spark = spark_session()
    spark.sparkContext.setLogLevel("ERROR")
    mark("session start")
    rows = records_source(spark, source, **({"reader": "python"} if python_source else {}))
    mark("source (records_source)")
    first: list[float] = []

    def on_batch(_batch: object) -> None:
        if not first:
            first.append(time.perf_counter())

    run_job(job, rows, Sink("json", path=str(root / "breakdown-out")), on_batch=on_batch)
    end = time.perf_counter()
    marks.append(("run_job to the first micro-batch's end", first[0] - last))
    marks.append(("the other micro-batches and the end", end - first[0]))
    marks.append(("total", end - began))
    return marks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--python-source", action="store_true",
                        help="the breakdown with the Python data source")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    spec, source = root / "spec.yaml", root / "events"
    spec.write_text(SPEC, encoding="utf-8")
    generate(args.events, args.batch_size, source)
    ready = ensure_archive()
    without = end_to_end(spec, source, root, args.repeat, archive=False)
    print(f"end to end: windtunnel run, {args.events} events, no class archive: {without:.1f} s",
          flush=True)
    if ready:
        seconds = end_to_end(spec, source, root, args.repeat, archive=True)
        print(f"end to end: windtunnel run, {args.events} events, class archive: {seconds:.1f} s "
              f"({without / seconds:.2f}x faster)", flush=True)
    else:
        print("end to end with the class archive: not measured (this Java cannot archive, or "
              "WINDTUNNEL_CLASS_ARCHIVE=off)", flush=True)
    for label, took in breakdown(spec, source, root, args.python_source):
        print(f"  {label:40s} {took:6.2f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
