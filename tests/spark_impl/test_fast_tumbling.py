"""The typed tumbling-count path (spark_impl/fast_tumbling.py) against the general fast step.

Pure numpy and pandas, no Spark. Random tumbling count queries over integer-keyed
streams with disorder are cut into random micro-batches, each shuffled; the general step
(:class:`FastStep` on the typed frame the fast path collects) and :func:`tumbling_counts`
(on plain arrays) must write the same rows in the same order and leave the same state, also
when micro-batches switch between the two paths.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.oracle.model.errors import InvalidStream
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Aggregation, FixedWindows, Query
from windtunnel.spark_impl.arrow_rows import OUTPUT_ARROW_SCHEMA
from windtunnel.spark_impl.batch_exact import ExactBatches
from windtunnel.spark_impl.fast import FastStep
from windtunnel.spark_impl.fast_frames import TYPED_TIME, TYPED_TIME_NULL, typed_key, typed_key_null
from windtunnel.spark_impl.fast_state import FastState, dump_state, load_state
from windtunnel.spark_impl.fast_tumbling import covers, tumbling_counts

Stream = list[tuple[int, int, int, int]]
"""(seq, arrival_ms, ts, k) per event, in seq order."""


@st.composite
def tumbling_queries(draw: st.DrawFn) -> tuple[Query, Rules]:
    """Tumbling count queries the typed path covers; shrinks towards a 1 s window, no
    tolerance, one key field, one count."""
    size = draw(st.sampled_from([1_000, 2_000, 10_000]) | st.integers(1, 5_000))
    tolerance = draw(st.sampled_from([0, 500, 1_000]) | st.integers(0, 3_000))
    group_by = draw(st.sampled_from([("k",), ()]))
    counts = draw(
        st.sampled_from(
            [
                (Aggregation("n", "count"),),
                (Aggregation("n", "count"), Aggregation("m", "count")),
                (Aggregation("ws", "window_start"), Aggregation("n", "count"), Aggregation("we", "window_end")),
            ]
        )
    )
    rules = Rules(close_at=draw(st.sampled_from(["reaches", "passes", "max_timestamp"])))
    query = Query(FixedWindows(size, on="ts", tolerance_ms=tolerance), group_by=group_by, aggregate=counts)
    return query, rules


@st.composite
def int_streams(draw: st.DrawFn) -> Stream:
    """Events with integer keys and times, some pushed back in time; shrinks towards few
    events, in order, one key, small times."""
    n = draw(st.integers(1, 60))
    rng = random.Random(draw(st.integers(0, 2**32)))
    keys = draw(st.integers(1, 4))
    disorder = draw(st.sampled_from([0.0, 0.2, 0.5]))
    # times on a grid of ``grain`` ms hit window bounds and close points exactly
    grain = draw(st.sampled_from([500, 1_000, 1]))
    steps = draw(st.integers(1, 6))
    base = draw(st.sampled_from([0, -7_000]) | st.integers(-10**12, 10**12)) // grain * grain
    out: Stream = []
    t = base
    at = 0
    for seq in range(n):
        t += grain * rng.randrange(steps + 1)
        at += rng.randrange(3)
        ts = t - grain * rng.randrange(10 * steps + 1) if rng.random() < disorder else t
        out.append((seq, at, ts, rng.randrange(-2, keys)))
    return out


def general_frame(rows: Stream) -> pd.DataFrame:
    """The typed, events-only frame the general step reads (as ExactBatches.rows makes it)."""
    frame = pd.DataFrame(
        {
            "seq": np.array([r[0] for r in rows], np.int64),
            "arrival_ms": np.array([r[1] for r in rows], np.int64),
            TYPED_TIME: np.array([r[2] for r in rows], np.int64),
            TYPED_TIME_NULL: np.zeros(len(rows), bool),
            typed_key(0): np.array([r[3] for r in rows], np.int64),
            typed_key_null(0): np.zeros(len(rows), bool),
        }
    )
    return ExactBatches.complete(frame, True)


def typed_run(step: FastStep, state: FastState, rows: Stream) -> pd.DataFrame | None:
    columns = np.array(rows, np.int64).reshape(-1, 4)
    keys = columns[:, 3] if step.query.group_by else None
    return tumbling_counts(step, state, columns[:, 0], columns[:, 1], columns[:, 2], keys)


def micro_batches(stream: Stream, cuts: list[int], seed: int) -> list[Stream]:
    """The stream cut at ``cuts``, each micro-batch shuffled (Spark keeps no row order)."""
    rng = random.Random(seed)
    bounds = sorted({0, len(stream), *(c % (len(stream) + 1) for c in cuts)})
    out = []
    for low, high in itertools.pairwise(bounds):
        part = list(stream[low:high])
        rng.shuffle(part)
        out.append(part)
    return out


def records(rows: pd.DataFrame | pa.Table) -> list[dict[str, Any]]:
    """Output rows as dicts, nulls as None (the general step writes pandas, the typed
    steps Arrow)."""
    if isinstance(rows, pa.Table):
        assert rows.schema == OUTPUT_ARROW_SCHEMA
        return rows.to_pylist()
    return [
        {k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()}
        for r in rows.astype(object).where(rows.notna(), None).to_dict("records")
    ]


def same_rows(a: pd.DataFrame | pa.Table | None, b: pd.DataFrame | pa.Table | None) -> None:
    if a is None or b is None:
        assert a is None and b is None, (a, b)
        return
    left, right = records(a), records(b)
    assert [sorted(r.items()) for r in left] == [sorted(r.items()) for r in right]
    assert [[type(v) for _, v in sorted(r.items())] for r in left] == [
        [type(v) for _, v in sorted(r.items())] for r in right
    ]


def state_of(state: FastState) -> dict[str, Any]:
    data = state.__getstate__()
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in data.items()}


@settings(max_examples=150, deadline=None)
@given(tumbling_queries(), int_streams(), st.lists(st.integers(0, 60), max_size=5), st.integers(0, 9), st.lists(st.booleans(), min_size=8, max_size=8))
def test_typed_path_writes_the_general_steps_rows(query_rules: tuple[Query, Rules], stream: Stream, cuts: list[int], seed: int, typed_turns: list[bool]) -> None:
    query, rules = query_rules
    step = FastStep(query, rules)
    assert covers(step)
    general = step.new_state()
    typed = step.new_state()
    mixed = step.new_state()
    for index, batch in enumerate(micro_batches(stream, cuts, seed)):
        want = step.run(general, [general_frame(batch)])
        same_rows(want, typed_run(step, typed, batch))
        assert state_of(typed) == state_of(general)
        # the mixed run switches paths between micro-batches, its state pickled in between
        mixed = load_state(dump_state(mixed))
        if typed_turns[index % len(typed_turns)]:
            got = typed_run(step, mixed, batch)
        else:
            got = step.run(mixed, [general_frame(batch)])
        same_rows(want, got)
        assert state_of(mixed) == state_of(general)
    ended = step.finish(general)
    same_rows(ended, step.finish(typed))
    same_rows(ended, step.finish(mixed))


def test_late_event_and_closing_across_micro_batches() -> None:
    # key 1, tumbling 10 s, tolerance 0:
    #   mb0: seq0 t=1s  -> [0,10s) open
    #   mb1: seq1 t=12s -> clock 12s: [0,10s) closes here (after_seq 1), [10s,20s) opens
    #        seq2 t=5s  -> late: [0,10s) closed at 10s, the clock is at 12s
    query = Query(FixedWindows(10_000, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    step = FastStep(query, Rules())
    state = step.new_state()
    assert typed_run(step, state, [(0, 100, 1_000, 1)]) is None
    out = typed_run(step, state, [(2, 300, 5_000, 1), (1, 200, 12_000, 1)])
    assert out is not None
    rows = records(out)
    assert [(r["type"], r["seq"], r["after_seq"], r["wall_ms"]) for r in rows] == [
        ("drop", 2, None, None),
        ("emit", None, 1, 200),
    ]
    assert rows[0]["message"] == (
        "event time 5000 is late for window (first [0, 10000)): "
        "it closed when the clock reached 10000; the clock is at 12000"
    )
    assert rows[1]["row"] == '{"n": 1}' and rows[1]["group"] == "1"


def test_event_time_out_of_range_is_refused() -> None:
    query = Query(FixedWindows(1_000, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    step = FastStep(query, Rules())
    with pytest.raises(InvalidStream, match="2\\^61"):
        typed_run(step, step.new_state(), [(0, 0, 2**62, 1)])


@pytest.mark.parametrize(
    "window, aggregate, group_by",
    [
        (FixedWindows(10_000, on="ts", every_ms=5_000), (Aggregation("n", "count"),), ("k",)),
        (FixedWindows(10_000, on="ts"), (Aggregation("s", "sum", "v"),), ("k",)),
        (FixedWindows(10_000, on="ts"), (Aggregation("n", "count"),), ("k", "j")),
    ],
)
def test_hopping_other_aggregates_and_two_keys_stay_on_the_general_step(window: FixedWindows, aggregate: Any, group_by: Any) -> None:
    assert not covers(FastStep(Query(window, group_by=group_by, aggregate=aggregate), Rules()))


def test_times_spread_over_the_whole_range_take_the_unpacked_way() -> None:
    # times 2^60 apart on three keys: segment-packed values would overflow int64, so the
    # running clocks, window ids and closing searches take their unpacked way
    far = 2**60
    stream: Stream = [
        (0, 0, -far, 0), (1, 1, far, 1), (2, 2, -far + 5, 2), (3, 3, far + 10_000, 1),
        (4, 4, far - 3, 1), (5, 5, -far + 20_000, 0), (6, 6, 7, 2), (7, 7, -far, 2),
    ]
    query = Query(FixedWindows(10_000, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    step = FastStep(query, Rules())
    general, typed = step.new_state(), step.new_state()
    for batch in (stream[:3], stream[3:]):
        same_rows(step.run(general, [general_frame(batch)]), typed_run(step, typed, batch))
        assert state_of(typed) == state_of(general)
    # open at the end: key 0's window of -far+20000, key 1's of far+10000, key 2's [0, 10000)
    assert general.win_key.tolist() == [0, 1, 2]
