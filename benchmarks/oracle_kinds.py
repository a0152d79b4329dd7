"""Oracle throughput for session and count windows against minimal exact loops.

Workload (as ``oracle_fixed.py``): N events (default 1,000,000), 1000 keys, 5% of events
out of order (event time pushed back by up to 4 s), about one event per key and second.
Session windows: gap 2 s, tolerance 1 s, the default (tenzir) rules (a per-key reorder
buffer, one open session per key), and the same under the flink profile's rules with a
per-key clock (so the baseline stays a per-key loop). Count windows: tumbling 50 and
hopping 50/10 per key. The baseline is the smallest loop giving the same rows (checked
against the oracle before timing): for count windows both a per-window loop (any
aggregate) and the offsets-only loop a bare count allows. The oracle's count and session
fast paths (oracle/fast/) read the events in runs as numpy columns; unlike the baselines
they also check the stream (types, seqs, arrival times) and build Emission and Drop
values, the consumer here turning them back into the baselines' rows. Prints events/s and
the ratio oracle/baseline.

The flink baseline follows the flink profile's rules (docs/semantics.md, "The flink
profile", S3, S4): the watermark is ``max - tolerance - 1 ms`` (``watermark_formula:
bounded_out_of_orderness``) and a session ``[first, last + gap)`` fires when the watermark
reaches its max timestamp ``last + gap - 1`` (``session_close_at: max_timestamp``), so it is
final once the clock reaches ``last + gap + tolerance``; an element is late only if the
session it forms after merging is final (``session_late: merged``: "An element is late
only if every window it belongs to after session merging satisfies maxTimestamp +
allowedLateness <= watermark"), and one overlapping a session already fired starts a new
session (``closed_session: new_session``).

Run: python benchmarks/oracle_kinds.py [--events N] [--repeat R] [--only session|count]
(``--events 2000 --repeat 1``: a quick run, the agreement checks included)
"""

from __future__ import annotations

import argparse
import gc
import random
import time
from bisect import insort
from collections.abc import Callable, Sequence
from typing import Any

from windtunnel.oracle import Aggregation, CountWindows, Query, SessionWindows, stream_outputs
from windtunnel.oracle.model.results import Emission
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.profiles import profile_named

COUNT = (Aggregation("n", "count"),)


def workload(n: int, keys: int = 1000, disorder: float = 0.05, seed: int = 7) -> list[Event]:
    rng = random.Random(seed)
    events = []
    t = 0
    for seq in range(n):
        t += rng.randrange(0, 3)  # ~1 event per ms overall: ~1 per key and second
        ts = t - rng.randrange(0, 4_000) if rng.random() < disorder else t
        events.append(Event(seq, {"ts": ts, "k": rng.randrange(keys)}))
    return events


def session_baseline(events: Sequence[Event], gap: int, tol: int, merged_late: bool) -> list[tuple[Any, int, int, int]]:
    """Merging sessions, final once the clock reaches ``last + gap + close_offset``. Per key:
    clock, open sessions [first, last, n], emitted spans (own-late: emitted sessions stay
    late, final past last + gap + tol) or none (flink: merged-late, new sessions, final at
    last + gap + tol; see the module docstring)."""
    close_offset = tol if merged_late else tol + 1
    keys: dict[Any, list[Any]] = {}
    out = []
    for event in events:
        t, k = event.payload["ts"], event.payload["k"]
        state = keys.get(k)
        if state is None:
            state = keys[k] = [None, [], []]
        clock, sessions, done = state
        touched = [s for s in sessions if s[0] - gap <= t <= s[1] + gap]
        last = max([t] + [s[1] for s in touched]) if merged_late else t
        late = clock is not None and clock >= last + gap + close_offset
        if not late and not merged_late:
            late = any(d0 - gap <= t <= d1 + gap for d0, d1 in done)
        if not late:
            if touched:
                keep = touched[0]
                for s in touched[1:]:
                    keep[0], keep[1], keep[2] = min(keep[0], s[0]), max(keep[1], s[1]), keep[2] + s[2]
                    sessions.remove(s)
                keep[0], keep[1], keep[2] = min(keep[0], t), max(keep[1], t), keep[2] + 1
            else:
                sessions.append([t, t, 1])
        if clock is None or t > clock:
            state[0] = clock = t
            for s in [s for s in sessions if clock >= s[1] + gap + close_offset]:
                sessions.remove(s)
                out.append((k, s[0], s[1], s[2]))
                if not merged_late:
                    done.append((s[0], s[1]))
            if done:
                state[2] = [d for d in done if d[1] + gap >= clock - gap - close_offset]
    for k, (_, sessions, _) in keys.items():
        out += [(k, s[0], s[1], s[2]) for s in sessions]
    return sorted(out)


def reorder_session_baseline(events: Sequence[Event], gap: int, tol: int) -> list[tuple[Any, int, int, int]]:
    """Tenzir's sessions (rule session_order: reorder): per key a clock, a sorted reorder
    buffer of times, the last released time and one open session [first, last, n]."""
    keys: dict[Any, list[Any]] = {}
    out = []
    for event in events:
        t, k = event.payload["ts"], event.payload["k"]
        state = keys.get(k)
        if state is None:
            state = keys[k] = [t, [], None, None]
        elif t < state[0] - tol or (state[2] is not None and t < state[2]):
            continue  # late: before the watermark or before a released event
        elif t > state[0]:
            state[0] = t
        buffer = state[1]
        insort(buffer, t)
        cutoff = state[0] - tol
        while buffer and buffer[0] <= cutoff:
            u = buffer.pop(0)
            state[2] = u
            s = state[3]
            if s is not None and u > s[1] + gap:
                out.append((k, s[0], s[1], s[2]))
                s = None
            if s is None:
                state[3] = [u, u, 1]
            else:
                s[1], s[2] = u, s[2] + 1
        s = state[3]
        if s is not None and cutoff > s[1] + gap:
            out.append((k, s[0], s[1], s[2]))
            state[3] = None
    for k, (_, buffer, _, s) in keys.items():
        for u in buffer:
            if s is not None and u > s[1] + gap:
                out.append((k, s[0], s[1], s[2]))
                s = None
            if s is None:
                s = [u, u, 0]
            s[1], s[2] = u, s[2] + 1
        if s is not None:
            out.append((k, s[0], s[1], s[2]))
    return sorted(out)


def count_baseline(events: Sequence[Event], count: int, every: int) -> list[tuple[Any, int, int]]:
    offsets: dict[Any, int] = {}
    windows: dict[Any, dict[int, int]] = {}
    out = []
    for event in events:
        k = event.payload["k"]
        o = offsets.get(k, 0)
        offsets[k] = o + 1
        open_windows = windows.setdefault(k, {})
        start = max(0, o - count + 1)
        start += (-start) % every
        while start <= o:
            open_windows[start] = open_windows.get(start, 0) + 1
            if o == start + count - 1:
                out.append((k, start, open_windows.pop(start)))
            start += every
    for k, open_windows in windows.items():
        out += [(k, s, n) for s, n in open_windows.items()]
    return sorted(out)


def count_offsets_baseline(events: Sequence[Event], count: int, every: int) -> list[tuple[Any, int, int]]:
    """The smallest loop for count-only windows with ``every <= count``: offsets per key, no
    window state (a window [s, s + count) is complete at offset s + count - 1)."""
    offsets: dict[Any, int] = {}
    out = []
    for event in events:
        k = event.payload["k"]
        o = offsets.get(k, 0)
        offsets[k] = o + 1
        s = o - count + 1
        if s >= 0 and s % every == 0:
            out.append((k, s, count))
    for k, n in offsets.items():
        first = max(0, n - count + 1)
        first += -first % every
        out += [(k, s, n - s) for s in range(first, n, every)]
    return sorted(out)


def oracle_rows(query: Query, events: Sequence[Event], rules: Rules, profile: str) -> list[tuple[Any, ...]]:
    """The oracle's emissions as the baselines' rows (drops skipped), sorted."""
    rows = []
    # a session reported as [first, last + gap) (rule session_ends: gap) ends at last
    gap = 0 if rules.session_ends == "events" else getattr(query.window, "gap_ms", 0)
    for output in stream_outputs(query, events, rules=rules, profile=profile):
        if type(output) is Emission:
            w = output.window
            if w.start_offset is not None:
                rows.append((output.group, w.start_offset, output.row["n"]))
            else:
                rows.append((output.group, w.start_ms, w.end_ms - gap, output.row["n"]))  # type: ignore[operator]
    return sorted(rows)


def rate(function: Callable[[], object], n: int, repeat: int) -> tuple[float, object]:
    """Events per second of the best run. Each run starts from a full garbage collection
    (the previous run's result dropped first), so a collection over the million input
    events that the previous run left due does not land in the next one's time; the
    collector stays on while timing (both sides pay for what they allocate)."""
    best = float("inf")
    result: object = None
    for _ in range(repeat):
        result = None
        gc.collect()
        started = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - started)
    return n / best, result


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="run only the cases whose label contains this")
    args = parser.parse_args(argv)
    events = workload(args.events)
    print(f"{args.events:,} events, 1000 keys, 5% out of order, best of {args.repeat}")
    flink = profile_named("flink").rules
    cases: list[tuple[str, Callable[[], object], Callable[[], object]]] = [
        (
            "session gap 2s (tenzir)",
            lambda: reorder_session_baseline(events, 2_000, 1_000),
            lambda: oracle_rows(Query(SessionWindows(2_000, tolerance_ms=1_000), ("k",), COUNT), events, Rules(), "tenzir"),
        ),
        (
            "session 2s (flink, key clk)",
            lambda: session_baseline(events, 2_000, 1_000, merged_late=True),
            lambda: oracle_rows(Query(SessionWindows(2_000, tolerance_ms=1_000), ("k",), COUNT), events, flink.with_overrides({"clock_scope": "key"}), "flink"),
        ),
        (
            "count 50 (tumbling)",
            lambda: count_baseline(events, 50, 50),
            lambda: oracle_rows(Query(CountWindows(50), ("k",), COUNT), events, Rules(), "tenzir"),
        ),
        (
            "count 50 every 10",
            lambda: count_baseline(events, 50, 10),
            lambda: oracle_rows(Query(CountWindows(50, every=10), ("k",), COUNT), events, Rules(), "tenzir"),
        ),
        (
            "count 50 (offsets loop)",
            lambda: count_offsets_baseline(events, 50, 50),
            lambda: oracle_rows(Query(CountWindows(50), ("k",), COUNT), events, Rules(), "tenzir"),
        ),
        (
            "count 50/10 (offsets loop)",
            lambda: count_offsets_baseline(events, 50, 10),
            lambda: oracle_rows(Query(CountWindows(50, every=10), ("k",), COUNT), events, Rules(), "tenzir"),
        ),
    ]
    for label, base, oracle in cases:
        if args.only not in label:
            continue
        base_rate, base_result = rate(base, args.events, args.repeat)
        oracle_rate, oracle_result = rate(oracle, args.events, args.repeat)
        assert oracle_result == base_result, f"{label}: oracle and baseline disagree"
        print(
            f"{label:26s} oracle {oracle_rate / 1e6:5.2f}M ev/s   baseline {base_rate / 1e6:5.2f}M ev/s   "
            f"ratio {oracle_rate / base_rate:4.2f}x   windows {len(oracle_result):,}"  # type: ignore[arg-type]
        )


if __name__ == "__main__":
    main()
