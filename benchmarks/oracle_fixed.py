"""Oracle throughput for grouped fixed windows against a minimal exact loop.

Workload: N events (default 2,000,000), 1000 keys, 5% of events out of order
(event time pushed back by up to two window sizes), 1-minute windows: tumbling,
and hopping with size/every = 10. Both sides consume the same pre-built
``Event`` list; the baseline is the smallest loop that gives the same counts
(per-key clock, late drops, close at end + tolerance, flush at end) and is
checked against the oracle before timing. Prints events/s and the ratio
oracle/baseline, and the oracle's peak number of open windows (memory is bounded
by open windows, not by stream length).

Run: python benchmarks/oracle_fixed.py [--events N] [--repeat R]
(``--events 2000 --repeat 1``: a quick run, the agreement check included)
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from windtunnel.oracle import Aggregation, FixedWindows, Query, stream_outputs
from windtunnel.oracle.model.results import Emission
from windtunnel.oracle.model.stream import Event

MINUTE_MS = 60_000


def workload(n: int, keys: int = 1000, disorder: float = 0.05, seed: int = 7) -> list[Event]:
    rng = random.Random(seed)
    events = []
    t = 0
    for seq in range(n):
        t += rng.randrange(0, 2)  # ~ 1000 events per second overall: ~60 per key and minute
        ts = t - rng.randrange(0, 2 * MINUTE_MS) if rng.random() < disorder else t
        events.append(Event(seq, {"ts": ts, "k": rng.randrange(keys)}))
    return events


def baseline(events: Sequence[Event], size_ms: int, every_ms: int, tolerance_ms: int) -> dict[tuple[Any, int], int]:
    """Minimal exact loop: per-key clock, per-window late test, close at clock >= end + tolerance."""
    clocks: dict[Any, int] = {}
    open_windows: dict[Any, dict[int, int]] = {}
    closed: dict[tuple[Any, int], int] = {}
    for event in events:
        payload = event.payload
        t, key = payload["ts"], payload["k"]
        windows = open_windows.get(key)
        if windows is None:
            windows = open_windows[key] = {}
        clock = clocks.get(key)
        last = t - t % every_ms
        start = last - size_ms + every_ms
        while start <= last:
            if start + size_ms > t and (clock is None or start + size_ms + tolerance_ms > clock):
                windows[start] = windows.get(start, 0) + 1
            start += every_ms
        if clock is None or t > clock:
            clocks[key] = t
            for s in [s for s in windows if s + size_ms + tolerance_ms <= t]:
                closed[(key, s)] = windows.pop(s)
    for key, windows in open_windows.items():
        for s, n in windows.items():
            closed[(key, s)] = n
    return closed


def oracle(events: Sequence[Event], size_ms: int, every_ms: int, tolerance_ms: int) -> dict[tuple[Any, int], int]:
    query = Query(FixedWindows(size_ms, every_ms=every_ms, tolerance_ms=tolerance_ms), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    closed = {}
    for output in stream_outputs(query, events):
        if isinstance(output, Emission):
            closed[(output.group, output.window.start_ms)] = output.row["n"]
    return closed


def rate(function: Callable[[], object], n: int, repeat: int) -> tuple[float, object]:
    best = float("inf")
    result: object = None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - started)
    return n / best, result


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    events = workload(args.events)
    print(f"{args.events:,} events, 1000 keys, 5% out of order, best of {args.repeat}")
    for label, size_ms, every_ms in (("tumbling 1min", MINUTE_MS, MINUTE_MS), ("hopping 1min/6s (x10)", MINUTE_MS, MINUTE_MS // 10)):
        tolerance_ms = 10_000
        shape = (size_ms, every_ms, tolerance_ms)
        base_rate, base_result = rate(lambda shape=shape: baseline(events, *shape), args.events, args.repeat)
        oracle_rate, oracle_result = rate(lambda shape=shape: oracle(events, *shape), args.events, args.repeat)
        assert oracle_result == base_result, f"{label}: oracle and baseline disagree"
        print(
            f"{label:24s} oracle {oracle_rate / 1e6:5.2f}M ev/s   baseline {base_rate / 1e6:5.2f}M ev/s   "
            f"ratio {oracle_rate / base_rate:4.2f}x   windows {len(oracle_result):,}"  # type: ignore[arg-type]
        )


if __name__ == "__main__":
    main()
