"""``windtunnel generate WORKLOAD`` end to end (simulate, render, write) against a naive Faker loop.

Runs the ``generate`` command in this process (``--quiet``, so no progress bar) for
``--format jsonl``, ``parquet`` and ``spark-dir`` (``--batch-size 1000``) and each workload
(``auth`` by default; ``--workloads auth payments nexmark`` compares them), writing to a
temporary directory, and the naive per-event Faker loop of ``benchmarks/simulator.py`` (one
Faker call per field per event, one ``json.dumps`` per event). Prints events/s of wall time
and of CPU time for each, and each format's ratio to the naive loop (same run). A
format's rate is printed only when its file holds every event, and ``auth`` payloads have the
naive loop's fields and types.

Run: python benchmarks/generate_e2e.py [--events N] [--naive N] [--repeat R] [--formats F ...]
     [--workloads W ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from windtunnel.cli.generate import generate_command

sys.path.insert(0, str(Path(__file__).parent))
from simulator import fields, naive_faker, naive_lines  # the baseline lives beside this script

FORMATS = {"jsonl": (), "parquet": (), "spark-dir": ("--batch-size", "1000")}


def generate(fmt: str, events: int, out: Path, workload: str = "auth") -> None:
    """``windtunnel generate WORKLOAD --events N --format FMT --out OUT -q``, in process."""
    args = [workload, "--events", str(events), "--format", fmt, "--out", str(out), "-q", *FORMATS[fmt]]
    generate_command.main(args, standalone_mode=False)


def payloads(fmt: str, out: Path) -> list[str]:
    """The JSON payloads (each record's ``value``) of a file ``generate`` wrote."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return [v.decode() for v in pq.read_table(out, columns=["value"]).column("value").to_pylist()]
    files = sorted(out.glob("batch-*.jsonl")) if fmt == "spark-dir" else [out]
    return [json.loads(line)["value"] for f in files for line in f.read_text().splitlines()]


def check_output(fmt: str, events: int, out: Path, workload: str, naive: dict[str, set[str]]) -> None:
    """Raise AssertionError unless ``out`` holds ``events`` records in ``fmt`` and, for
    ``auth``, their payloads have the naive loop's fields and types (``naive``)."""
    written = payloads(fmt, out)
    assert len(written) == events, f"{fmt}: {len(written)} records written of {events}"
    if workload == "auth":
        assert fields(written) == naive, f"{fmt}: fields {fields(written)}, naive loop {naive}"
    print(f"check: {workload} {fmt} holds {events:,} records"
          + (", the naive loop's fields and types" if workload == "auth" else ""), flush=True)


def best_of(repeat: int, run: object, *args: object) -> tuple[float, float]:
    """Best wall and CPU seconds of ``repeat`` calls of ``run(*args)``."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        started, cpu_started = time.perf_counter(), time.process_time()
        run(*args)  # type: ignore[operator]
        wall = min(wall, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - cpu_started)
    return wall, cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--naive", type=int, default=20_000, help="events for the naive loop")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--formats", nargs="+", default=list(FORMATS), choices=list(FORMATS))
    parser.add_argument("--workloads", nargs="+", default=["auth"])
    args = parser.parse_args(argv)
    print(f"load average before the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    naive_wall, naive_cpu = best_of(args.repeat, naive_faker, args.naive)
    naive_rate, naive_cpu_rate = args.naive / naive_wall, args.naive / naive_cpu
    print(
        f"naive Faker loop   {naive_rate:>12,.0f} ev/s wall {naive_cpu_rate:>12,.0f} ev/s CPU"
        f"   ({args.naive:,} events, baseline)"
    )
    naive = fields(naive_lines(20))
    with tempfile.TemporaryDirectory() as scratch:
        for workload in args.workloads:
            for fmt in args.formats:
                out = Path(scratch) / f"out-{fmt}"

                def once(fmt: str = fmt, out: Path = out, workload: str = workload) -> None:
                    if out.is_dir():
                        shutil.rmtree(out)
                    elif out.exists():
                        out.unlink()
                    generate(fmt, args.events, out, workload)

                wall, cpu = best_of(args.repeat, once)
                check_output(fmt, args.events, out, workload, naive)
                rate, cpu_rate = args.events / wall, args.events / cpu
                print(
                    f"generate {workload:8s} {fmt:9s} {rate:>12,.0f} ev/s wall {cpu_rate:>12,.0f} "
                    f"ev/s CPU   ratio to naive {rate / naive_rate:6.1f}x wall "
                    f"{cpu_rate / naive_cpu_rate:6.1f}x CPU"
                )


if __name__ == "__main__":
    main()
