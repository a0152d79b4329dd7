"""Simulator throughput and memory.

Measures, in one run:
1. the bare stream: labelled records (``Simulation.chunks()``) of the ``bare`` workload with
   disorder, 5% late events, nulls and duplicates: events/s (target >= 1M/s);
2. the stream with Faker payloads: the ``auth`` workload's records rendered as JSON
   payloads (pools drawn from Faker once, then sampled): events/s (target >= 300k/s);
   the same for ``payments`` and ``nexmark`` (Nexmark's persons, auctions and bids, whose
   text is drawn per record) at their default knobs, side by side;
3. the baseline: a naive loop calling Faker for every field of every event and building
   the same payload dict; the ratio payload-stream / naive loop is printed;
4. peak traced memory (tracemalloc) for 1M versus 10M bare events: flat when the stream
   is generated lazily.

Before timing, the payload stream and the naive loop must agree on the record's shape (the
same fields, each of the same JSON type).

Run: python benchmarks/simulator.py [--events N] [--naive N] [--memory-events N N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import os
import time
import tracemalloc
from collections.abc import Callable

from faker import Faker

from windtunnel.simulator.payloads import payload_json
from windtunnel.simulator.workloads import simulate

KNOBS = {
    "delay": "exponential",
    "delay_mean": "500",
    "late_fraction": 0.05,
    "null_fraction": 0.01,
    "duplicate_fraction": 0.01,
}


def bare_stream(events: int) -> int:
    count = 0
    for table in simulate("bare", events=events, seed=1, **KNOBS).chunks():
        count += len(table["seq"])
    return count


def payload_stream(events: int, workload: str = "auth", **knobs: object) -> int:
    sim = simulate(workload, events=events, seed=1, **(KNOBS if workload == "auth" else knobs))
    count = 0
    for table in sim.chunks():
        count += len(payload_json(sim.workload, table))
    return count


def workload_stream(workload: str) -> Callable[[int], int]:
    """The payload stream of ``workload`` at its default knobs."""
    return lambda events: payload_stream(events, workload)


def naive_faker(events: int) -> int:
    """A per-event Faker loop producing the same auth payload (the usual way)."""
    return len(naive_lines(events))


def naive_lines(events: int) -> list[str]:
    """The naive loop's JSON payloads."""
    fake = Faker()
    fake.seed_instance(1)
    ts = 1_767_225_600_000
    lines = []
    for i in range(events):
        failed = fake.random.random() < 0.01
        payload = {
            "ts": ts + i * 10,
            "user": fake.user_name(),
            "src_ip": fake.ipv4_private(),
            "host": fake.hostname(),
            "action": "login",
            "outcome": "failure" if failed else "success",
            "failed": int(failed),
        }
        lines.append(json.dumps(payload, separators=(",", ":")))
    return lines


def payload_lines(events: int) -> list[str]:
    """The payload stream's JSON payloads (``auth`` with :data:`KNOBS`)."""
    sim = simulate("auth", events=events, seed=1, **KNOBS)
    return [line for table in sim.chunks() for line in payload_json(sim.workload, table)]


def fields(lines: list[str]) -> dict[str, set[str]]:
    """Each field of the JSON payloads and the JSON types of its values (nulls left out)."""
    found: dict[str, set[str]] = {}
    for line in lines:
        for name, value in json.loads(line).items():
            types = found.setdefault(name, set())
            if value is not None:
                types.add(type(value).__name__)
    return found


def check_same_shape(events: int) -> None:
    """Raise AssertionError unless the payload stream's records have the naive loop's fields,
    each with values of the same types."""
    naive, stream = fields(naive_lines(events)), fields(payload_lines(events))
    assert naive == stream, f"the payload stream's fields {stream} differ from the naive loop's {naive}"
    print(f"check: the payload stream's records have the naive loop's {len(naive)} fields "
          "and types", flush=True)


def rate(run: Callable[[int], int], events: int, repeat: int = 3) -> tuple[float, float]:
    """Best-of-``repeat`` events per second of wall time and per second of CPU time (the
    CPU figure depends less on other processes sharing the machine)."""
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        produced = run(events)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
        assert produced == events, (produced, events)
    return events / best_wall, events / best_cpu


def peak_memory_mb(events: int) -> float:
    tracemalloc.start()
    bare_stream(events)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--naive", type=int, default=20_000, help="events for the naive loop")
    parser.add_argument("--memory-events", type=int, nargs=2, default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=3, help="best of R runs per rate")
    args = parser.parse_args(argv)

    check_same_shape(min(args.naive, 1000))
    print(f"load average before the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    bare, bare_cpu = rate(bare_stream, args.events, args.repeat)
    print(
        f"bare stream:          {bare:>12,.0f} events/s wall, {bare_cpu:>12,.0f} per CPU-s"
        "  (target >= 1,000,000)"
    )
    payloads, payloads_cpu = rate(payload_stream, args.events, args.repeat)
    print(
        f"with Faker payloads:  {payloads:>12,.0f} events/s wall, {payloads_cpu:>12,.0f} per CPU-s"
        "  (target >=   300,000)"
    )
    for workload in ("payments", "nexmark"):
        wall, cpu = rate(workload_stream(workload), args.events, args.repeat)
        print(f"{workload + ' payloads:':22s}{wall:>12,.0f} events/s wall, {cpu:>12,.0f} per CPU-s")
    naive, naive_cpu = rate(naive_faker, args.naive, repeat=1)
    print(
        f"naive Faker loop:     {naive:>12,.0f} events/s wall, {naive_cpu:>12,.0f} per CPU-s"
        f"  (baseline, {args.naive:,} events)"
    )
    print(
        f"ratio payload stream / naive loop: {payloads / naive:,.1f}x wall, "
        f"{payloads_cpu / naive_cpu:,.1f}x CPU"
    )
    small, large = args.memory_events
    small_mb, large_mb = peak_memory_mb(small), peak_memory_mb(large)
    print(
        f"peak traced memory: {small:,} events {small_mb:,.1f} MiB; {large:,} events {large_mb:,.1f} MiB"
    )
    print(f"memory ratio {large:,} / {small:,} events: {large_mb / small_mb:.2f}")


if __name__ == "__main__":
    main()
