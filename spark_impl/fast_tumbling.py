"""The fast step's specialised path for typed tumbling counts, beside the general step.

:class:`~windtunnel.spark_impl.fast.FastStep` reads a micro-batch as a pandas frame and
handles hopping windows, aggregator states, nulls and control rows. The most common query
needs none of that: tumbling windows (``every`` = ``size``) counting events per one
integer key on an integer event-time column, events only, no nulls. For it,
:func:`tumbling_counts` runs the same rules on plain int64 arrays (one O(n) pass per
step where the general step sorts or groups through pandas):

- events in seq order; the wall clock is the running maximum of arrival times;
- per key, the clock before each event is the running maximum of event times (a
  segmented ``maximum.accumulate``) on top of the key's carried clock;
- an event is late when its window ``[s, s + size)`` closed: ``s + size + offset <= clock``
  before it (``offset``: the rule ``close_at``'s); late events become drop rows;
- a window closes at the first event of its key whose running clock reaches
  ``s + size + offset``; that event gives ``after_seq``, ``wall_ms`` and the output step.

It writes the same output rows in the same order as the general step (the drops in seq
order, then the emissions by closing event and start; built as an Arrow table by
:mod:`~windtunnel.spark_impl.arrow_rows`), and leaves the same
:class:`~windtunnel.spark_impl.fast_state.FastState` behind, so micro-batches may switch
between the two paths. tests/spark_impl/test_fast_tumbling.py checks both on random
streams cut into random micro-batches.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from windtunnel.spark_impl import arrow_rows
from windtunnel.spark_impl.fast import _ranks, emit_indexes
from windtunnel.spark_impl.fast_frames import NONE, TIME_LIMIT_MS, _key_code, _out_of_range
from windtunnel.spark_impl.fast_state import FastState

_PACKED_LIMIT = 2**62
"""Segment-packed values (segment index times spread plus value) must stay below this."""


def covers(step: Any) -> bool:
    """True when :func:`tumbling_counts` runs ``step``'s query: tumbling windows, a
    count-only aggregate and at most one group_by field."""
    return bool(step.count_only and step.hop_ms == step.size_ms and len(step.query.group_by) <= 1)


def tumbling_counts(
    step: Any,
    state: FastState,
    seq: np.ndarray,
    arrival: np.ndarray | None,
    times: np.ndarray,
    keys: np.ndarray | None,
) -> pa.Table | None:
    """The output rows (:data:`arrow_rows.OUTPUT_ARROW_SCHEMA`) of one micro-batch of
    events, or None.

    ``seq``, ``arrival`` (wall clock, epoch ms; None when the stream has none), ``times``
    (event time in the query's unit) and ``keys`` (the group_by field; None without one)
    are int64 arrays without nulls, one entry per event, in any row order. ``step`` is a
    :class:`~windtunnel.spark_impl.fast.FastStep` that :func:`covers` accepts; ``state``
    is updated in place. Raises InvalidStream for an event time beyond +-2^61 ms.
    """
    if state.ended or not len(seq):
        return None
    if len(seq) > 1 and not bool(np.all(seq[1:] > seq[:-1])):
        order = np.argsort(seq, kind="stable")
        seq, times = seq[order], times[order]
        arrival = None if arrival is None else arrival[order]
        keys = None if keys is None else keys[order]
    unit = step.time_unit_ms
    if np.any(np.abs(times) >= TIME_LIMIT_MS // unit):
        _out_of_range(step.query.window.on, unit, times)
    t = times * unit if unit != 1 else times
    # the wall clock at each event: the largest arrival so far
    if arrival is None:
        walls = np.full(len(seq), state.wall_ms, np.int64)
    else:
        walls = np.maximum(np.maximum.accumulate(arrival), state.wall_ms)
    state.wall_ms = int(walls[-1])
    state.after_seq = int(seq[-1])
    code = _codes(step, state, seq, keys)
    # events by key (stable: seq order inside a key), the running clock per key
    by_key = np.argsort(code.astype(np.int16) if len(state.keys) < 2**15 else code, kind="stable")
    code_k = code[by_key]
    t_k = t[by_key]
    starts_seg = np.ones(len(code_k), bool)
    starts_seg[1:] = code_k[1:] != code_k[:-1]
    segment = np.cumsum(starts_seg) - 1
    clock0 = state.clock[code_k]
    running = np.maximum(_segmented_cummax(t_k, segment), clock0)
    before = np.empty_like(running)
    before[1:] = running[:-1]
    before[starts_seg] = clock0[starts_seg]
    prev = np.empty_like(before)
    prev[by_key] = before  # the key's clock before each event, seq order
    size, span = step.size_ms, step.span_ms
    start = t - np.mod(t, size)
    late = (prev != NONE) & (start + span <= prev)
    out: list[pa.Table] = []
    group_texts = arrow_rows.group_texts(state.groups)
    if late.any():
        rows = np.flatnonzero(late)
        out.append(
            arrow_rows.late_table(
                seq[rows], t[rows], start[rows], prev[rows], group_texts.take(code[rows]),
                size_ms=size, offset_ms=step.offset_ms,
            )
        )
    kept = ~late
    # open windows: the carried ones and those this micro-batch delivers to
    win_key = np.concatenate([state.win_key, code[kept]])
    win_start = np.concatenate([state.win_start, start[kept]])
    carried = len(state.win_key)
    ids, window_of = _window_ids(win_key, win_start, size)
    counts = np.zeros(len(ids), np.int64)
    counts[window_of[:carried]] = state.win_count
    counts += np.bincount(window_of[carried:], minlength=len(ids))
    first_of = np.full(len(ids), len(win_key), np.int64)
    np.minimum.at(first_of, window_of, np.arange(len(win_key)))
    key_of = win_key[first_of]
    start_of = win_start[first_of]
    # closing: the first event of the key whose running clock reaches start + span
    seg_first = np.flatnonzero(starts_seg)
    seg_of_code = np.full(len(state.keys), -1, np.int64)
    seg_of_code[code_k[seg_first]] = np.arange(len(seg_first))
    window_seg = seg_of_code[key_of]
    position = _first_reaching(running, segment, seg_first, window_seg, start_of + span)
    closes = position >= 0
    if closes.any():
        closing = np.flatnonzero(closes)
        event = by_key[position[closing]]  # index into the seq-ordered arrays
        close_seq = seq[event]
        close_wall = walls[event]
        order = np.lexsort((start_of[closing], close_seq))
        closing, close_seq, close_wall = closing[order], close_seq[order], close_wall[order]
        emit_index = emit_indexes(close_seq)
        keys = key_of[closing]
        out.append(
            arrow_rows.count_emission_table(
                group_texts.take(keys), state.first_seq[keys], start_of[closing], counts[closing],
                close_seq, close_wall, emit_index, size_ms=size, aggregations=step.aggregations,
            )
        )
    # carry: the keys' clocks, the windows left open (in the general step's order)
    seg_last = np.ones(len(code_k), bool)
    seg_last[:-1] = starts_seg[1:]
    state.clock[code_k[seg_last]] = running[seg_last]
    remain = ~closes
    state.win_key = key_of[remain]
    state.win_start = start_of[remain]
    state.win_count = counts[remain]
    state.win_states = None
    if not out:
        return None
    return out[0] if len(out) == 1 else pa.concat_tables(out)


def _codes(step: Any, state: FastState, seq: np.ndarray, keys: np.ndarray | None) -> np.ndarray:
    """Each event's key code; keys new to ``state`` are added in order of first appearance."""
    n = len(seq)
    if keys is None:
        values, inverse, first = np.zeros(1, np.int64), np.zeros(n, np.int64), np.zeros(1, np.int64)
    else:
        values, inverse = _ranks(keys, 1)
        first = np.full(len(values), n, np.int64)
        np.minimum.at(first, inverse, np.arange(n))
    lookup = _lookup(step, state)
    local = np.empty(len(values), np.int64)
    new_first: list[int] = []
    for u in np.argsort(first, kind="stable").tolist():  # first appearance order
        key = () if keys is None else (int(values[u]),)
        code = lookup.get(key)
        if code is None:
            code = _key_code(state, lookup, key, int(seq[first[u]]), new_first)
        local[u] = code
    if new_first:
        state.first_seq = np.concatenate([state.first_seq, np.array(new_first, np.int64)])
        state.clock = np.concatenate([state.clock, np.full(len(new_first), NONE, np.int64)])
    step._lookup = (state, lookup)
    return local[inverse.reshape(-1)]


def _lookup(step: Any, state: FastState) -> dict[Any, int]:
    """Key lookup tuple -> code of ``state`` (kept on the step while the state is the same)."""
    cached = getattr(step, "_lookup", None)
    if cached is not None and cached[0] is state and len(cached[1]) == len(state.keys):
        lookup: dict[Any, int] = cached[1]
        return lookup
    return {key: code for code, key in enumerate(state.keys)}


def _segmented_cummax(values: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """Running maximum of ``values`` restarting at each new ``segment`` (non-decreasing ids)."""
    if not len(values):
        return values
    low = int(values.min())
    spread = int(values.max()) - low + 1
    if spread * (int(segment[-1]) + 1) < _PACKED_LIMIT:
        base = segment * spread
        packed: np.ndarray = np.maximum.accumulate((values - low) + base) - base + low
        return packed
    grouped: np.ndarray = pd.Series(values).groupby(segment, sort=False).cummax().to_numpy()
    return grouped


def _window_ids(keys: np.ndarray, starts: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (key, start) pairs as ids and each pair's index among them."""
    if not len(keys):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    low = int(starts.min())
    width = (int(starts.max()) - low) // size + 1
    if width * (int(keys.max()) + 1) < _PACKED_LIMIT:
        packed = keys * width + (starts - low) // size
    else:
        packed = np.unique(np.stack([keys, starts], axis=1), axis=0, return_inverse=True)[1].reshape(-1)
    return _ranks(packed, 1)


def _first_reaching(
    running: np.ndarray,
    segment: np.ndarray,
    seg_first: np.ndarray,
    window_seg: np.ndarray,
    thresholds: np.ndarray,
) -> np.ndarray:
    """Per window, the index (into the key-ordered arrays) of the first event of its
    segment whose running clock reaches its threshold, or -1 (no such event, or no
    segment: ``window_seg`` -1)."""
    result = np.full(len(thresholds), -1, np.int64)
    has = window_seg >= 0
    if not has.any() or not len(running):
        return result
    low = int(running.min())
    spread = int(running.max()) - low + 2  # one more level: "beyond every event"
    seg_end = np.append(seg_first[1:], len(running))
    which = window_seg[has]
    level = np.clip(thresholds[has], low, low + spread - 1) - low
    if spread * (int(segment[-1]) + 1) < _PACKED_LIMIT:
        packed = segment * spread + (running - low)
        position = np.searchsorted(packed, which * spread + level, side="left")
    else:
        position = np.array(
            [
                seg_first[s] + np.searchsorted(running[seg_first[s] : seg_end[s]], thr, side="left")
                for s, thr in zip(which.tolist(), thresholds[has].tolist(), strict=True)
            ],
            dtype=np.int64,
        )
    found = position < seg_end[which]
    result[np.flatnonzero(has)[found]] = position[found]
    return result
