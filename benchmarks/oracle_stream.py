"""100M events through the oracle from a file, with memory flat in the stream's length.

Events come from a plain JSON-lines file (one payload per line, ``{"ts": ..., "k": ...}``;
no scenario loader: each line becomes ``Event(seq, <the line's JSON object>)`` as it is read) and
go through :func:`windtunnel.oracle.stream_outputs`; outputs are counted, never kept. Each
size runs in a fresh child process, which reports its peak resident set size (``VmHWM``)
and its rate; the parent prints the ratio of each
peak to the smallest size's peak (flat: about 1.0x).

The file is written once (vectorised, about 28 bytes per event) and reused: 1000 keys,
about one event per ms, 5% of events pushed back by up to 4 s.
Query: ``--query fixed`` tumbling 1 min windows per key with a count (the fixed-window
fast path), ``count`` count windows of 50 per key, ``session`` sessions with a 2 s gap.

Before timing, the outputs of the smallest size are checked, one by one as they stream,
against the reference operators' (``windtunnel.oracle.engine.reference_outputs``, which
never takes a fast path).

Run: python benchmarks/oracle_stream.py [--events 1000000 10000000 100000000]
     [--file PATH] [--query fixed|count|session]
(``--events 1000 2000 --file /tmp/small.jsonl``: a quick run, the check included)
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from itertools import zip_longest
from pathlib import Path

import numpy as np

from windtunnel.oracle import (
    Aggregation,
    CountWindows,
    FixedWindows,
    Query,
    SessionWindows,
    stream_outputs,
)
from windtunnel.oracle.engine import reference_outputs
from windtunnel.oracle.model.stream import Event

QUERIES = {
    "fixed": Query(FixedWindows(60_000), ("k",), (Aggregation("n", "count"),)),
    "count": Query(CountWindows(50), ("k",), (Aggregation("n", "count"),)),
    "session": Query(SessionWindows(2_000), ("k",), (Aggregation("n", "count"),)),
}
CHUNK = 1_000_000


def write_events(path: Path, events: int, seed: int = 7) -> None:
    """``events`` JSON lines, written a chunk at a time (memory stays bounded)."""
    rng = np.random.default_rng(seed)
    t0 = 0
    with path.open("w", encoding="ascii") as out:
        for first in range(0, events, CHUNK):
            n = min(CHUNK, events - first)
            ts = t0 + np.cumsum(rng.integers(0, 3, n))
            t0 = int(ts[-1])
            late = rng.random(n) < 0.05
            ts = np.where(late, ts - rng.integers(0, 4_000, n), ts)
            keys = rng.integers(0, 1000, n)
            out.writelines(
                f'{{"ts": {t}, "k": {k}}}\n' for t, k in zip(ts.tolist(), keys.tolist(), strict=True)
            )


def events_from(path: Path, limit: int) -> Iterator[Event]:
    """The file's first ``limit`` lines as events numbered 0, 1, 2, ..., read lazily."""
    scan = json.JSONDecoder().scan_once  # json.loads without its whitespace handling
    with path.open(encoding="ascii") as lines:
        for seq, line in enumerate(lines):
            if seq == limit:
                return
            yield Event(seq, scan(line, 0)[0])


def child(path: Path, events: int, query: str) -> None:
    """Run one size; print ``events outputs seconds peak_rss_kib`` as one line."""
    started = time.perf_counter()
    outputs = 0
    for _ in stream_outputs(QUERIES[query], events_from(path, events)):
        outputs += 1
    elapsed = time.perf_counter() - started
    print(events, outputs, f"{elapsed:.3f}", peak_rss_kib())


def check(path: Path, events: int, query: str) -> int:
    """The outputs of the file's first ``events`` lines, compared with the reference's as
    both stream (memory stays flat); the number of outputs. Raises AssertionError."""
    outputs = 0
    fast = stream_outputs(QUERIES[query], events_from(path, events))
    reference = reference_outputs(QUERIES[query], events_from(path, events))
    for outputs, (mine, theirs) in enumerate(zip_longest(fast, reference), 1):
        assert mine == theirs, f"output {outputs}: the oracle gives {mine}, the reference {theirs}"
    return outputs


def peak_rss_kib() -> int:
    """This process's peak resident set size in KiB: ``VmHWM`` (Linux), which starts afresh
    at exec, unlike ``ru_maxrss``, which keeps the forking parent's peak."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, nargs="+", default=[1_000_000, 10_000_000, 100_000_000])
    parser.add_argument("--file", type=Path, default=Path("/tmp/windtunnel-oracle-stream.jsonl"))
    parser.add_argument("--query", choices=sorted(QUERIES), default="fixed")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        child(args.file, args.child, args.query)
        return
    needed = max(args.events)
    lines = 0
    if args.file.exists():
        with args.file.open("rb") as existing:
            lines = sum(block.count(b"\n") for block in iter(lambda: existing.read(1 << 24), b""))
    if lines < needed:
        print(f"writing {needed:,} events to {args.file} ...", flush=True)
        write_events(args.file, needed)
    print(f"query {args.query}: {QUERIES[args.query].window}")
    checked = check(args.file, min(args.events), args.query)
    print(f"{min(args.events):,} events: {checked:,} outputs, equal to the reference's", flush=True)
    baseline_kib: int | None = None
    for events in sorted(args.events):
        command = [sys.executable, __file__, "--file", str(args.file), "--query", args.query]
        report = subprocess.run(
            [*command, "--child", str(events)], capture_output=True, text=True, check=True
        ).stdout.split()
        outputs, seconds, peak_kib = int(report[1]), float(report[2]), int(report[3])
        baseline_kib = baseline_kib or peak_kib
        print(
            f"{events:>13,} events  {outputs:>12,} outputs  {events / seconds / 1e6:5.2f}M ev/s  "
            f"peak RSS {peak_kib / 1024:7.1f} MiB  ratio to {min(args.events):,}: "
            f"{peak_kib / baseline_kib:.2f}x",
            flush=True,
        )


if __name__ == "__main__":
    main()
