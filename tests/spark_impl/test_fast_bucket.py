"""The vectorised bucket step (spark_impl/fast.py) against the reference bucket step.

Pure pandas, no Spark: random fixed-window queries and streams go through :func:`feed`,
are split into buckets and random micro-batches, every micro-batch is shuffled, and both
steps (state pickled between micro-batches) must give the same output rows, every column
included. One Spark test runs the streaming operator with the fast step against the oracle.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.oracle.engine import DEFAULT_RULES
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Aggregation, FixedWindows, Query
from windtunnel.oracle.model.stream import Batch, Event, Item
from windtunnel.oracle.scenario import load_yaml, parse_scenario
from windtunnel.simulator.strategies import streams
from windtunnel.spark_impl.fast import (
    FastStep,
    dump_state,
    eligible,
    load_state,
)
from windtunnel.spark_impl.fast_frames import TYPED_TIME, TYPED_TIME_NULL, typed_key
from windtunnel.spark_impl.feed import feed
from windtunnel.spark_impl.processor import BucketStep, dump_driver, end_records, load_driver
from windtunnel.spark_impl.schema import END, INPUT_COLUMNS, OUTPUT_COLUMNS

from .local_run import spread

AGGREGATES = {
    "count": (Aggregation("n", "count"),),
    "bounds": (Aggregation("n", "count"), Aggregation("ws", "window_start"), Aggregation("we", "window_end")),
    "numbers": (
        Aggregation("n", "count"),
        Aggregation("c", "count", "value"),
        Aggregation("total", "sum", "value"),
        Aggregation("lo", "min", "value"),
        Aggregation("hi", "max", "value"),
        Aggregation("mean", "avg", "value"),
    ),
    "others": (Aggregation("firsts", "first", "value"), Aggregation("d", "distinct", "value")),
}


@st.composite
def fast_queries(draw: st.DrawFn) -> tuple[Query, Rules]:
    """Eligible fixed-window queries and rules; shrinks towards one large tumbling window,
    no tolerance, ungrouped count(), default rules."""
    size = draw(st.integers(1, 60_000).map(lambda k: 60_001 - k))
    every = draw(st.none() | st.integers(max(1, size // 8), size))
    tolerance = draw(st.integers(0, 10_000))
    window = FixedWindows(size, on="ts", every_ms=every, tolerance_ms=tolerance)
    group_by = draw(st.sampled_from([(), ("key",)]))
    aggregate = AGGREGATES[draw(st.sampled_from(list(AGGREGATES)))]
    rules = Rules(
        close_at=draw(st.sampled_from(["reaches", "passes", "max_timestamp"])),
        end_of_input=draw(st.sampled_from(["flush", "discard"])),
    )
    query = Query(window, group_by=group_by, aggregate=aggregate)
    assert eligible(query, rules)
    return query, rules


ODD_VALUES = [None, 2.5, -1.0, True, "x", [1], 1e300, 7]
ODD_TIMES = [None, "not a time", "1970-01-01T00:00:05Z", 3.0, True]


@st.composite
def mixed_streams(draw: st.DrawFn, *, odd: bool) -> tuple[Item, ...]:
    """Streams with disorder, nulls, batches and advances; with ``odd``, some values and
    times of other types (floats, strings, booleans). Shrinks towards streams() simplest."""
    items = draw(
        streams(
            max_events=30,
            keys=3,
            max_step_ms=20_000,
            max_disorder_ms=40_000,
            allow_null_times=True,
            with_batches=True,
            with_advances=True,
        )
    )
    if not odd:
        return items
    changes = draw(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 4), st.booleans()), max_size=30))

    def change(event: Event, index: int) -> Event:
        if index >= len(changes):
            return event
        value, time, touch_time = changes[index]
        payload = dict(event.payload)
        payload["value"] = ODD_VALUES[value]
        if touch_time:
            payload["ts"] = ODD_TIMES[time]
        return Event(event.seq, payload, event.at_ms)

    out: list[Item] = []
    for item in items:
        if isinstance(item, Event):
            out.append(change(item, item.seq))
        elif isinstance(item, Batch):
            out.append(Batch(tuple(change(e, e.seq) for e in item.events)))
        else:
            out.append(item)
    return tuple(out)


def frames_of(fed: Any, buckets: int, seed: int, *, typed: bool, drop_end: bool) -> list[dict[int, pd.DataFrame]]:
    """Each micro-batch's shuffled input frame per bucket (typed: the fast columns, no payload)."""
    rng = random.Random(seed)
    out = []
    for by in spread(fed, buckets):
        frames = {}
        for bucket, rows in by.items():
            rows = [r for r in rows if not (drop_end and r[1] == END)]
            rng.shuffle(rows)
            frame = pd.DataFrame(rows, columns=list(INPUT_COLUMNS))
            for name in ("seq", "arrival_ms", "after_seq"):
                frame[name] = frame[name].astype("Int64")
            if typed:
                add_typed(frame)
            frames[bucket] = frame
        out.append(frames)
    return out


def add_typed(frame: pd.DataFrame) -> None:
    """The typed columns prepare() adds for integer times and a string key."""
    import json

    payloads = [json.loads(p) if isinstance(p, str) else {} for p in frame["payload"]]
    times = [p.get("ts") for p in payloads]
    frame[TYPED_TIME] = [t if isinstance(t, int) else 0 for t in times]
    frame[TYPED_TIME_NULL] = [t is None for t in times]
    frame[typed_key(0)] = [p.get("key") for p in payloads]


def rows_of(records: list[dict[str, Any]] | pd.DataFrame | None) -> Counter[tuple[Any, ...]]:
    if records is None:
        return Counter()
    if isinstance(records, pd.DataFrame):
        records = [
            {k: (None if v is pd.NA or v is None else v) for k, v in r.items()}
            for r in records.astype(object).to_dict("records")
        ]
    return Counter(tuple(r[c] for c in OUTPUT_COLUMNS) for r in records)


def run_both(query: Query, rules: Rules, items: Any, buckets: int, micro_batch: int, seed: int, *, typed: bool = False, drop_end: bool = False) -> tuple[Counter[Any], Counter[Any]]:
    used = buckets if query.group_by else 1
    fed = feed(items, query.group_by, buckets=used, micro_batch=micro_batch)
    reference = BucketStep(query, rules)
    fast = FastStep(query, rules)
    ref_state: dict[int, bytes] = {}
    fast_state: dict[int, bytes] = {}
    want: Counter[Any] = Counter()
    got: Counter[Any] = Counter()
    for frames in frames_of(fed, used, seed, typed=typed, drop_end=drop_end):
        for bucket, frame in frames.items():
            driver = load_driver(ref_state[bucket]) if bucket in ref_state else reference.new_driver()
            want += rows_of(reference.run(driver, [frame.copy()]))
            ref_state[bucket] = dump_driver(driver)
            state = load_state(fast_state[bucket]) if bucket in fast_state else fast.new_state()
            got += rows_of(fast.run(state, [frame.assign(payload=None) if typed else frame]))
            fast_state[bucket] = dump_state(state)
    if drop_end:  # a bounded batch input: end after the last row
        for bucket in ref_state:
            driver = load_driver(ref_state[bucket])
            want += rows_of(end_records(driver))
            got += rows_of(fast.finish(load_state(fast_state[bucket])))
    return want, got


@settings(max_examples=40, deadline=None)
@given(
    spec=fast_queries(),
    items=mixed_streams(odd=False),
    buckets=st.integers(1, 4),
    micro_batch=st.integers(1, 8),
    seed=st.integers(0, 1000),
    drop_end=st.booleans(),
)
def test_fast_step_equals_the_reference_step(spec, items, buckets, micro_batch, seed, drop_end) -> None:
    query, rules = spec
    want, got = run_both(query, rules, items, buckets, micro_batch, seed, drop_end=drop_end)
    assert got == want


@settings(max_examples=20, deadline=None)
@given(
    spec=fast_queries(),
    items=mixed_streams(odd=True),
    buckets=st.integers(1, 3),
    micro_batch=st.integers(1, 8),
    seed=st.integers(0, 1000),
)
def test_fast_step_equals_the_reference_on_odd_values_and_times(spec, items, buckets, micro_batch, seed) -> None:
    query, rules = spec
    want, got = run_both(query, rules, items, buckets, micro_batch, seed)
    assert got == want


@settings(max_examples=20, deadline=None)
@given(
    spec=fast_queries().filter(lambda s: s[0].aggregate == AGGREGATES["count"]),
    items=mixed_streams(odd=False),
    buckets=st.integers(1, 4),
    micro_batch=st.integers(1, 8),
    seed=st.integers(0, 1000),
)
def test_typed_columns_give_the_same_rows(spec, items, buckets, micro_batch, seed) -> None:
    query, rules = spec
    query = Query(query.window, group_by=("key",), aggregate=query.aggregate)
    want, got = run_both(query, rules, items, buckets, micro_batch, seed, typed=True)
    assert got == want


@pytest.mark.parametrize(
    ("query", "rules"),
    [
        (Query(FixedWindows(10, on="ts", idle_timeout_ms=5), aggregate=AGGREGATES["count"]), DEFAULT_RULES),
        (Query(FixedWindows(10, on="now()"), aggregate=AGGREGATES["count"]), DEFAULT_RULES),
        (Query(FixedWindows(10, on="ts")), DEFAULT_RULES),
        (Query(FixedWindows(10, on="ts"), aggregate=AGGREGATES["count"], aggregate_by=("x",)), DEFAULT_RULES),
        (Query(FixedWindows(10, on="ts"), aggregate=AGGREGATES["count"]), Rules(clock_scope="stream")),
        (Query(FixedWindows(1000, on="ts", every_ms=1), aggregate=AGGREGATES["count"]), DEFAULT_RULES),
    ],
    ids=["idle_timeout", "now", "passthrough", "aggregate_by", "stream_clock", "many_hops"],
)
def test_queries_the_fast_step_does_not_cover_are_not_eligible(query, rules) -> None:
    assert not eligible(query, rules)


# One key, 10 ms tumbling windows, micro-batches of 2 events:
#
#   seq:    0      1      2    | 3      4
#   ts:     1      12     3    | 25     14
#   window: [0,10) [10,20) late| closes [10,20) at seq 3; 14 is late then
#
# The window [0, 10) closes at seq 1 (after_seq 1); seq 2 is late; [10, 20) closes in the
# next micro-batch at seq 3; [20, 30) flushes at the end.
ACROSS_BATCHES = """
window: {size: 10, on: ts}
group_by: k
aggregate: {n: count()}
input:
  - {event: {ts: 1, k: a}, at: 0}
  - {event: {ts: 12, k: a}, at: 1}
  - {event: {ts: 3, k: a}, at: 2}
  - {event: {ts: 25, k: a}, at: 3}
  - {event: {ts: 14, k: a}, at: 4}
"""


def test_windows_close_at_the_event_that_moves_the_clock_across_micro_batches() -> None:
    scenario = parse_scenario(load_yaml(ACROSS_BATCHES))
    fed = feed(scenario.items, ("k",), buckets=1, micro_batch=2)
    step = FastStep(scenario.query, scenario.rules)
    state = step.new_state()
    rows = []
    for batch in fed.batches:
        frame = pd.DataFrame(list(batch), columns=list(INPUT_COLUMNS))
        for name in ("seq", "arrival_ms", "after_seq"):
            frame[name] = frame[name].astype("Int64")
        out = step.run(state, [frame])
        if out is not None:
            rows += out.astype(object).to_dict("records")
    emits = [(r["start_ms"], r["reason"], r["after_seq"]) for r in rows if r["type"] == "emit"]
    drops = [r["seq"] for r in rows if r["type"] == "drop"]
    assert emits == [(0, "close", 1), (10, "close", 3), (20, "end_of_input", 4)]
    assert drops == [2, 4]



def generated_events(n: int, keys: int, seed: int) -> pd.DataFrame:
    """seq, arrival_ms, ts (about 1 event per 10 ms, 10% pulled back by up to 30 s, 2% null)
    and k (integer key) of ``n`` events."""
    rng = random.Random(seed)
    rows = []
    t = 0
    for seq in range(n):
        t += rng.randrange(0, 20)
        ts: int | None = t - rng.randrange(0, 30_000) if rng.random() < 0.1 else t
        if rng.random() < 0.02:
            ts = None
        rows.append((seq, t, ts, rng.randrange(keys)))
    frame = pd.DataFrame(rows, columns=["seq", "arrival_ms", "ts", "k"])
    frame["ts"] = frame["ts"].astype("Int64")
    return frame


@pytest.mark.spark
def test_streaming_operator_with_the_fast_step_equals_the_oracle(spark, tmp_path) -> None:
    """Parquet files read one per micro-batch (typed columns), hopping windows, 3 buckets."""
    import os

    from windtunnel.oracle.engine import operator_for
    from windtunnel.oracle.windows.driver import Driver
    from windtunnel.spark_impl.operator import apply_window
    from windtunnel.spark_impl.processor import make_steps
    from windtunnel.spark_impl.replay import collect_stream
    from windtunnel.spark_impl.runs import divergences
    from windtunnel.spark_impl.schema import outputs_in_order

    query = Query(
        FixedWindows(10_000, on="ts", every_ms=5_000, tolerance_ms=2_000),
        group_by=("k",),
        aggregate=AGGREGATES["bounds"],
    )
    assert isinstance(make_steps(query, DEFAULT_RULES), FastStep)
    events = generated_events(3000, keys=25, seed=5)
    for index, start in enumerate(range(0, len(events), 750)):
        path = tmp_path / f"part-{index}.parquet"
        events.iloc[start : start + 750].to_parquet(path)
        os.utime(path, (1_700_000_000 + index, 1_700_000_000 + index))
    stream = (
        spark.readStream.schema("seq long, arrival_ms long, ts long, k long")
        .option("maxFilesPerTrigger", 1)
        .parquet(str(tmp_path))
    )
    rows = collect_stream(spark, apply_window(stream, query, buckets=3))
    driver = Driver(query, lambda q, c: operator_for(q, c, "tenzir"), DEFAULT_RULES)
    expected: list[Any] = []
    for seq, at, ts, k in events.astype(object).itertuples(index=False):
        payload = {"k": k} if ts is pd.NA else {"ts": ts, "k": k}
        driver.feed(Event(seq, payload, at), expected)
    assert len(expected) > 100
    assert divergences(expected, outputs_in_order(rows)) == []
