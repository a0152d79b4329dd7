"""Hypothesis properties per profile, where they hold.

- per-event clocks (tenzir, flink): the result does not depend on how events are batched;
- tenzir/flink: every event is counted in exactly one session or dropped (nothing lost);
- tenzir: for streams in time order, sessions are the article's offline sessions;
- count windows: each group's offsets chunked by ``count``;
- spark: equal to a direct model of the measured Spark formulas (per-batch watermark from the
  previous batches, late test against the previous batch's watermark, append-mode emission,
  one final no-data batch), for the drawn batches and for one event per batch.
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.oracle import Aggregation, Batch, FixedWindows, Query, run
from windtunnel.oracle.model.results import Emission, Result
from windtunnel.oracle.model.spec import CountWindows, SessionWindows, TrailingWindows
from windtunnel.oracle.model.stream import Event, Item, events_of
from windtunnel.oracle.profiles import profile_named
from windtunnel.simulator.strategies import streams

SETTINGS = settings(max_examples=120, deadline=None)
COUNT = (Aggregation("n", "count"), Aggregation("total", "sum", "value"))

disordered = streams(max_events=25, keys=2, max_step_ms=6, max_disorder_ms=20, allow_null_times=True)
batched = streams(max_events=25, keys=2, max_step_ms=6, max_disorder_ms=20, with_batches=True)
in_order = streams(max_events=25, keys=2, max_step_ms=8)

sessions_specs = st.builds(
    SessionWindows,
    gap_ms=st.integers(1, 10),
    tolerance_ms=st.integers(0, 6),
    max_events=st.none() | st.integers(1, 4),
    max_duration_ms=st.none() | st.integers(1, 20),
)
flink_sessions = st.builds(SessionWindows, gap_ms=st.integers(1, 10), tolerance_ms=st.integers(0, 6))
counts = st.integers(1, 5).flatmap(
    lambda n: st.builds(CountWindows, count=st.just(n), every=st.none() | st.integers(1, n))
)
trailings = st.builds(TrailingWindows, size_ms=st.integers(1, 20), every_ms=st.none() | st.integers(1, 10))
fixeds = st.builds(FixedWindows, size_ms=st.integers(1, 20), tolerance_ms=st.integers(0, 6)).flatmap(
    lambda w: st.sampled_from([w, FixedWindows(w.size_ms, every_ms=max(1, w.size_ms // 2), tolerance_ms=w.tolerance_ms)])
)


def rebatched(events: list[Event], cuts: list[int]) -> tuple[Item, ...]:
    bounds = sorted({0, len(events), *(c for c in cuts if c <= len(events))})
    return tuple(Batch(tuple(events[a:b])) for a, b in pairwise(bounds))


def profile_run(profile: str, query: Query, items: tuple[Item, ...]) -> Result:
    return run(query, items, rules=profile_named(profile).rules, profile=profile)


# --- per-event clocks: batching does not matter ----------------------------------------------


@SETTINGS
@given(
    profile=st.sampled_from(["tenzir", "flink"]),
    window=st.one_of(sessions_specs, counts, trailings, fixeds),
    items=disordered,
    cuts=st.lists(st.integers(0, 25), max_size=6),
)
def test_per_event_profiles_do_not_depend_on_batching(profile: str, window: Any, items: tuple[Item, ...], cuts: list[int]) -> None:
    if profile == "flink" and (isinstance(window, CountWindows | TrailingWindows) or getattr(window, "max_events", None) or getattr(window, "max_duration_ms", None)):
        window = SessionWindows(getattr(window, "gap_ms", 5))
    query = Query(window, group_by=("key",), aggregate=COUNT)
    events = list(events_of(items))
    assert profile_run(profile, query, tuple(events)).outputs == profile_run(profile, query, rebatched(events, cuts)).outputs


@SETTINGS
@given(profile=st.sampled_from(["tenzir", "flink"]), items=disordered, data=st.data())
def test_every_event_is_in_exactly_one_session_or_dropped(profile: str, items: tuple[Item, ...], data: st.DataObject) -> None:
    window = data.draw(sessions_specs if profile == "tenzir" else flink_sessions)
    result = profile_run(profile, Query(window, group_by=("key",), aggregate=COUNT), items)
    events = list(events_of(items))
    assert sum(e.row["n"] for e in result.emissions) + len(result.drops) == len(events)
    assert len({d.seq for d in result.drops}) == len(result.drops)


@SETTINGS
@given(gap_ms=st.integers(1, 10), items=in_order)
def test_in_order_sessions_are_the_articles_offline_sessions(gap_ms: int, items: tuple[Item, ...]) -> None:
    # the article's session(): sorted by (user, ts), extend while e.ts - last <= gap
    events = list(events_of(items))
    expected: list[tuple[Any, int, int, int]] = []
    open_by_key: dict[Any, int] = {}
    for event in sorted(events, key=lambda e: (str(e.payload["key"]), e.payload["ts"])):
        key, ts = event.payload["key"], event.payload["ts"]
        index = open_by_key.get(key)
        if index is not None and ts - expected[index][2] <= gap_ms:
            k, first, _, n = expected[index]
            expected[index] = (k, first, ts, n + 1)
        else:
            open_by_key[key] = len(expected)
            expected.append((key, ts, ts, 1))
    result = run(Query(SessionWindows(gap_ms), group_by=("key",), aggregate=COUNT), items)
    got = [(e.group, e.window.start_ms, e.window.end_ms, e.row["n"]) for e in result.emissions]
    assert sorted(got, key=str) == sorted(expected, key=str)
    assert result.drops == []


@SETTINGS
@given(window=counts, items=disordered)
def test_count_windows_chunk_each_groups_offsets(window: CountWindows, items: tuple[Item, ...]) -> None:
    result = run(Query(window, group_by=("key",), aggregate=COUNT), items)
    per_key = Counter(e.payload["key"] for e in events_of(items))
    expected = []
    for key, n in per_key.items():
        for start in range(0, n, window.hop):
            # a partial last window keeps its nominal range [start, start + count) (C1) and
            # holds the events up to the key's last offset
            expected.append((key, start, start + window.count, min(start + window.count, n) - start))
    got = [(e.group, e.window.start_offset, e.window.end_offset, e.row["n"]) for e in result.emissions]
    assert sorted(got, key=str) == sorted(expected, key=str)


# --- spark: a direct model of measured Spark -----------------------------------------------------


def micro_batches(items: tuple[Item, ...]) -> list[list[Event]]:
    """Scenario batches are micro-batches; a lone event is its own."""
    out: list[list[Event]] = []
    for item in items:
        if isinstance(item, Batch):
            out.append(list(item.events))
        elif isinstance(item, Event):
            out.append([item])
    return out


def spark_model(batches: list[list[Event]], window: Any, delay_ms: int) -> tuple[Counter[Any], set[int]]:
    """wm_N = max(wm_{N-1}, max(batches 0..N-1) - delay), starting at 0; a row is dropped for
    a window iff end <= wm_{N-1}; a window is emitted in batch N iff end <= wm_N; a final
    no-data batch; sessions end at last + gap, gap equality inclusive, evicted ones gone."""
    wm, seen = 0, None
    state: dict[Any, Any] = {}
    emitted: Counter[Any] = Counter()
    dropped: set[int] = set()
    for batch in [*batches, []]:
        late_wm = wm
        wm = max(wm, seen - delay_ms) if seen is not None else wm
        for event in batch:
            key, ts = event.payload["key"], event.payload["ts"]
            if isinstance(window, FixedWindows):
                hop = window.hop_ms
                starts = [s for s in range(ts - ts % hop - window.size_ms, ts + 1, hop) if s <= ts < s + window.size_ms]
                kept = [s for s in starts if s + window.size_ms > late_wm]
                for s in kept:
                    state[(key, s, s + window.size_ms)] = state.get((key, s, s + window.size_ms), 0) + 1
            else:
                kept = [ts] if ts + window.gap_ms > late_wm else []
                if kept:
                    sessions = state.setdefault(key, [])
                    sessions.append([ts, ts, 1])
                    sessions.sort()
                    merged = [sessions[0]]
                    for s in sessions[1:]:
                        if s[0] - merged[-1][1] <= window.gap_ms:
                            merged[-1] = [merged[-1][0], max(merged[-1][1], s[1]), merged[-1][2] + s[2]]
                        else:
                            merged.append(s)
                    state[key] = merged
            if not kept:
                dropped.add(event.seq)
        if isinstance(window, FixedWindows):
            for ident in [i for i in state if i[2] <= wm]:
                emitted[(ident[0], ident[1], ident[2], state.pop(ident))] += 1
        else:
            for key, sessions in state.items():
                for s in [s for s in sessions if s[1] + window.gap_ms <= wm]:
                    emitted[(key, s[0], s[1] + window.gap_ms, s[2])] += 1
                    sessions.remove(s)
        batch_max = max((e.payload["ts"] for e in batch), default=None)
        if batch_max is not None:
            seen = batch_max if seen is None else max(seen, batch_max)
    return emitted, dropped


@SETTINGS
@given(
    window=st.one_of(
        st.builds(FixedWindows, size_ms=st.integers(1, 20), tolerance_ms=st.integers(0, 8)),
        st.builds(lambda s, d: FixedWindows(s * 2, every_ms=s, tolerance_ms=d), st.integers(1, 10), st.integers(0, 8)),
        st.builds(SessionWindows, gap_ms=st.integers(1, 10), tolerance_ms=st.integers(0, 8)),
    ),
    items=batched,
    one_per_batch=st.booleans(),
)
def test_spark_profile_is_the_model_of_spark_md(window: Any, items: tuple[Item, ...], one_per_batch: bool) -> None:
    if one_per_batch:
        items = tuple(events_of(items))
    result = profile_run("spark", Query(window, group_by=("key",), aggregate=COUNT), items)
    got: Counter[Any] = Counter(
        (e.group, e.window.start_ms, e.window.end_ms, e.row["n"]) for e in result.emissions if isinstance(e, Emission)
    )
    expected, dropped = spark_model(micro_batches(items), window, window.tolerance_ms)
    assert got == expected
    assert {d.seq for d in result.drops} == dropped
    assert all(d.reason == "late" for d in result.drops)
