"""A vectorised bucket step for the common fixed-window case, beside the reference step.

The reference (:class:`windtunnel.spark_impl.processor.BucketStep`) feeds a bucket's rows
one by one to a pickled oracle driver. For :func:`eligible` queries this module computes the
same output rows for a whole micro-batch of a bucket (all of its keys at once) with numpy:

- per-key clocks: the running maximum of event time per key in seq order (``cummax``);
- the late test per target window against the key's clock before the event;
- deliveries counted per (key, window start); other aggregations folded by the oracle's own
  :class:`~windtunnel.oracle.model.aggregates.Aggregator`, in seq order;
- closing: a window ``[s, s + size)`` closes at the first event of its key whose running
  clock reaches ``s + size + offset`` (rule ``close_at``); that event gives ``after_seq``,
  ``wall_ms`` and the output step;
- end of input: what stays open flushes in (end, start, group first seq) order.

State between micro-batches is compact arrays (:class:`~windtunnel.spark_impl.fast_state.FastState`): per key its lookup
value, group JSON text, first seq and clock; per open window its key, start and count (or
aggregator state). tests/spark_impl/test_fast_bucket.py checks that the output rows equal
the reference step's on random streams cut into random micro-batches.

Reading a micro-batch's rows into arrays and building the output rows live in
:mod:`windtunnel.spark_impl.fast_frames`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.fields import getter
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import FixedWindows, Query
from windtunnel.oracle.windows.fixed import close_offset_ms
from windtunnel.oracle.windows.fixed_fast import eligible as oracle_fast_path_eligible
from windtunnel.spark_impl.fast_frames import (
    NONE,
    TIME_LIMIT_MS,
    Events,
    drop_frame,
    emission_frame,
    empty_frame,
    late_frame,
    nullable_ints,
    read_events,
)
from windtunnel.spark_impl.fast_state import FastState, dump_state, load_state
from windtunnel.spark_impl.schema import END, EVENT, control_step

MAX_WINDOWS_PER_EVENT = 64
"""Hopping windows with more target windows per event than this use the reference step."""


def eligible(query: Query, rules: Rules, profile: str = "tenzir") -> bool:
    """True when :class:`FastStep` gives exactly the reference step's rows for this query.

    Fixed windows on an event field (not ``now()``), no ``idle_timeout``, an aggregate
    without ``aggregate_by``, per-key clocks moving per event and the default rules for
    clock floor, late test, close order, empty windows and alignment; ``close_at`` and
    ``end_of_input`` may take any value; at most :data:`MAX_WINDOWS_PER_EVENT` windows hold
    any one event.
    """
    window = query.window
    return (
        oracle_fast_path_eligible(query, rules, profile)  # the oracle's own fast-path test
        and isinstance(window, FixedWindows)
        and not query.aggregate_by
        and -(-window.size_ms // window.hop_ms) <= MAX_WINDOWS_PER_EVENT
        and window.size_ms + window.tolerance_ms < TIME_LIMIT_MS
    )


class FastStep:
    """The vectorised step for one bucket: same interface as the reference ``BucketStep``."""

    def __init__(
        self,
        query: Query,
        rules: Rules,
        *,
        time_unit_ms: int = 1,
        start_wall_ms: int = 0,
        profile: str = "tenzir",
    ) -> None:
        if not eligible(query, rules, profile):
            raise ValueError("query not eligible for the fast step")  # a programming error
        window = query.window
        assert isinstance(window, FixedWindows) and query.aggregate is not None
        self.query = query
        self.rules = rules
        self.time_unit_ms = time_unit_ms
        self.aggregations = query.aggregate
        self.start_wall_ms = start_wall_ms
        self.size_ms = window.size_ms
        self.hop_ms = window.hop_ms
        self.span_ms = window.size_ms + close_offset_ms(rules.close_at, window.tolerance_ms)
        self.offset_ms = self.span_ms - self.size_ms
        self.flush = rules.end_of_input == "flush"
        self.aggregator = Aggregator(query.aggregate, query.aggregate_by)
        self.count_only = self.aggregator.count_only
        self._time_of = getter(window.on)
        self._key_getters = [getter(p) for p in query.group_by]

    def new_state(self) -> FastState:
        return FastState(self.start_wall_ms)

    # --- one micro-batch
    def run(self, state: FastState, frames: Iterable[pd.DataFrame]) -> pd.DataFrame | None:
        """The output rows (schema.OUTPUT_COLUMNS) of one micro-batch of this bucket, or None.

        ``frames`` hold the input columns in any row order; ``state`` is updated in place.
        """
        parts = [f for f in frames if len(f)]
        if state.ended or not parts:
            return None
        typed = [c for c in parts[0].columns if c.startswith("fast_")]
        needed = ["kind", "seq", "after_seq", "arrival_ms"]
        needed += typed if typed and self.count_only else ["payload"]
        frame = (
            parts[0][needed]
            if len(parts) == 1
            else pd.concat([p[needed] for p in parts], ignore_index=True)
        )
        kinds = frame["kind"].to_numpy(dtype=object)
        is_event = kinds == EVENT
        is_end = kinds == END
        seq, _ = nullable_ints(frame["seq"])
        after, no_after = nullable_ints(frame["after_seq"])
        arrival, no_arrival = nullable_ints(frame["arrival_ms"])
        steps = np.where(is_event, 2 * seq + 1, np.where(no_after, 0, 2 * (after + 1)))
        keep = np.ones(len(frame), bool)
        end_row: int | None = None
        if is_end.any():
            ends = np.flatnonzero(is_end)
            first_end = steps[ends].min()
            at_step = ends[steps[ends] == first_end]
            timed = at_step[~no_arrival[at_step]]
            end_row = int(timed[np.argmin(arrival[timed])]) if len(timed) else int(at_step[0])
            keep = (steps < first_end) | ((steps == first_end) & ~is_end)
            keep[end_row] = True
        # wall clock at each row: the largest arrival so far (rows in stream order)
        order = np.argsort(steps)  # ties: control rows at one step, in any order
        order = order[keep[order]]
        walls = np.where(no_arrival, NONE, arrival)[order]
        running = np.maximum(np.maximum.accumulate(walls), state.wall_ms) if len(walls) else walls
        wall_at = np.empty(len(frame), np.int64)
        wall_at[order] = running
        if len(order):
            state.wall_ms = int(running[-1])
            last = order[-1]  # rows sharing the last step are control rows with one after_seq
            state.after_seq = (
                int(seq[last]) if is_event[last] else (None if no_after[last] else int(after[last]))
            )
        picked = order[is_event[order]]  # events in seq order (their steps are 2 * seq + 1)
        events_frame = frame[needed[4:]].iloc[picked]
        ev_seq = seq[picked]
        ev_wall = wall_at[picked]
        outputs: list[pd.DataFrame] = []
        if len(picked):
            events = read_events(
                state,
                events_frame.reset_index(drop=True),
                ev_seq,
                on=self.query.window.on,
                time_of=self._time_of,
                key_getters=self._key_getters,
                time_unit_ms=self.time_unit_ms,
                count_only=self.count_only,
            )
            outputs += self._process(state, events, ev_seq, ev_wall)
        if end_row is not None:
            end_after = None if no_after[end_row] else int(after[end_row])
            state.after_seq = end_after
            outputs.append(self._flush(state, end_after))
        outputs = [o for o in outputs if len(o)]
        if not outputs:
            return None
        return outputs[0] if len(outputs) == 1 else pd.concat(outputs, ignore_index=True)

    def finish(self, state: FastState) -> pd.DataFrame | None:
        """End of input after the last row (batch DataFrames): flush what is open."""
        if state.ended:
            return None
        out = self._flush(state, state.after_seq)
        return out if len(out) else None

    def tick(self, state: FastState, now_ms: int) -> None:
        """The system clock moved to ``now_ms`` (no idle timeout: nothing closes)."""
        if not state.ended:
            state.wall_ms = max(state.wall_ms, now_ms)

    @staticmethod
    def ended(state: FastState) -> bool:
        return state.ended

    dump = staticmethod(dump_state)
    load = staticmethod(load_state)

    def _process(
        self, state: FastState, events: Events, seqs: np.ndarray, walls: np.ndarray
    ) -> list[pd.DataFrame]:
        out: list[pd.DataFrame] = []
        if events.drops:
            rows = sorted(events.drops, key=lambda row: events.drops[row].seq)
            out.append(
                drop_frame(
                    [events.drops[row] for row in rows],
                    [state.groups[int(events.code[row])] for row in rows],
                )
            )
        usable = np.flatnonzero(events.usable)
        if not len(usable):
            return out
        code = events.code[usable]
        t = events.t[usable]
        # events by key, in seq order inside a key: the running clock per key
        by_key = _order_by(code, seqs[usable])
        code_k = code[by_key]
        t_k = t[by_key]
        clock0 = state.clock[code_k]
        running = pd.Series(t_k).groupby(code_k, sort=False).cummax().to_numpy()
        running = np.maximum(running, clock0)
        starts_seg = np.ones(len(code_k), bool)
        starts_seg[1:] = code_k[1:] != code_k[:-1]
        before = np.empty_like(running)
        before[1:] = running[:-1]
        before[starts_seg] = clock0[starts_seg]
        prev = np.empty_like(before)
        prev[by_key] = before  # the key's clock before each event (seq order)
        # target windows, ascending starts; late test per window
        size, hop, span = self.size_ms, self.hop_ms, self.span_ms
        per_event = -(-size // hop)
        last = t - np.mod(t, hop)
        first = t - size + 1
        first = first + np.mod(-first, hop)
        starts = last[:, None] - hop * np.arange(per_event - 1, -1, -1, dtype=np.int64)[None, :]
        valid = starts >= first[:, None]
        open_ = valid & ((prev == NONE)[:, None] | (starts + span > prev[:, None]))
        delivered = open_.any(axis=1)
        late = np.flatnonzero(~delivered)
        if len(late):
            out.append(
                late_frame(
                    seqs[usable[late]], t[late], starts[late], valid[late], prev[late],
                    np.asarray(state.groups, dtype=object)[code[late]],
                    size_ms=size, offset_ms=self.offset_ms,
                )
            )
        cell_event, cell_col = np.nonzero(open_)
        cell_start = starts[cell_event, cell_col]
        cell_key = code[cell_event]
        # open windows: the carried ones and those this batch delivers to
        all_starts = np.concatenate([state.win_start, cell_start])
        start_values, start_rank = _ranks(all_starts, hop)
        width = len(start_values)
        ids = np.concatenate([state.win_key, cell_key]) * width + start_rank
        window_ids, window_of = _ranks(ids, 1)
        carried = len(state.win_key)
        win_key = window_ids // width
        win_start = start_values[window_ids % width]
        if self.count_only:
            win_count = np.zeros(len(window_ids), np.int64)
            win_count[window_of[:carried]] = state.win_count
            win_count += np.bincount(window_of[carried:], minlength=len(window_ids))
            win_states: list[Any] | None = None
        else:
            win_count = np.zeros(len(window_ids), np.int64)
            win_states = [None] * len(window_ids)
            assert state.win_states is not None or carried == 0
            for index, value in zip(window_of[:carried].tolist(), state.win_states or [], strict=True):
                win_states[index] = value
            new = self.aggregator.new
            add = self.aggregator.add
            payloads = events.payloads
            assert payloads is not None
            cell_windows = window_of[carried:]
            for event_index, window in zip(usable[cell_event].tolist(), cell_windows.tolist(), strict=True):
                value = win_states[window]
                if value is None:
                    value = win_states[window] = new()
                add(value, payloads[event_index])
        # closing: the first event of the key whose running clock reaches start + span
        thresholds = win_start + span
        levels, level_rank = _ranks(np.concatenate([running, thresholds]), 1)
        scale = len(levels) + 1
        event_rank = code_k * scale + level_rank[: len(running)]
        query_rank = win_key * scale + level_rank[len(running) :]
        position = np.searchsorted(event_rank, query_rank, side="left")
        segment_end = np.searchsorted(code_k, win_key, side="right")
        closes = position < segment_end
        closing = np.flatnonzero(closes)
        if len(closing):
            event_index = by_key[position[closing]]  # index into usable
            close_seq = seqs[usable[event_index]]
            close_wall = walls[usable[event_index]]
            order = np.lexsort((win_start[closing], close_seq))
            closing, close_seq, close_wall = closing[order], close_seq[order], close_wall[order]
            emit_index = emit_indexes(close_seq)
            out.append(
                emission_frame(
                    state, win_key[closing], win_start[closing],
                    win_count[closing], None if win_states is None else [win_states[i] for i in closing],
                    "close", close_seq, close_wall, 2 * close_seq + 1, emit_index, partial=False,
                    size_ms=size, aggregator=self.aggregator, aggregations=self.aggregations,
                )
            )
        # carry: the keys' clocks, the windows left open
        seg_last = np.ones(len(code_k), bool)
        seg_last[:-1] = code_k[1:] != code_k[:-1]
        state.clock[code_k[seg_last]] = running[seg_last]
        remain = ~closes
        state.win_key = win_key[remain]
        state.win_start = win_start[remain]
        state.win_count = win_count[remain]
        state.win_states = None if win_states is None else [
            s for s, r in zip(win_states, remain.tolist(), strict=True) if r
        ]
        return out

    def _flush(self, state: FastState, after_seq: int | None) -> pd.DataFrame:
        """End of input: every open window in (end, start, group first seq) order."""
        state.ended = True
        n = len(state.win_key)
        if not self.flush or n == 0:
            state.win_key = state.win_start = state.win_count = np.zeros(0, np.int64)
            state.win_states = None if state.win_states is None else []
            return empty_frame()
        order = np.lexsort((state.first_seq[state.win_key], state.win_start))
        frame = emission_frame(
            state,
            state.win_key[order],
            state.win_start[order],
            state.win_count[order],
            None if state.win_states is None else [state.win_states[i] for i in order],
            "end_of_input",
            np.full(n, NONE if after_seq is None else after_seq, np.int64),
            np.full(n, state.wall_ms, np.int64),
            np.full(n, control_step(after_seq), np.int64),
            np.arange(n, dtype=np.int64),
            partial=True,
            size_ms=self.size_ms,
            aggregator=self.aggregator,
            aggregations=self.aggregations,
        )
        state.win_key = state.win_start = state.win_count = np.zeros(0, np.int64)
        state.win_states = None if state.win_states is None else []
        return frame

def _order_by(major: np.ndarray, minor: np.ndarray) -> np.ndarray:
    """Indices sorting by (major, minor), both non-negative... or any ints; (major, minor)
    pairs are distinct. One argsort of a combined key when it fits in int64."""
    if len(major) == 0:
        return np.zeros(0, np.int64)
    low = int(minor.min())
    spread = int(minor.max()) - low + 1
    if spread * (int(major.max()) - int(major.min()) + 1) < 2**62:
        return np.argsort((major - major.min()) * spread + (minor - low))
    return np.lexsort((minor, major))


def emit_indexes(close_seq: np.ndarray) -> np.ndarray:
    """Each emission's index among those its closing event writes (``close_seq`` sorted:
    0, 1, ... within each run of equal seqs)."""
    group_start = np.ones(len(close_seq), bool)
    group_start[1:] = close_seq[1:] != close_seq[:-1]
    positions = np.arange(len(close_seq))
    indexes: np.ndarray = positions - np.maximum.accumulate(np.where(group_start, positions, 0))
    return indexes


def _ranks(values: np.ndarray, step: int) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct values ascending, each value's index among them), like
    ``np.unique(values, return_inverse=True)``; values a multiple of ``step`` apart from the
    smallest are ranked by arithmetic when their spread is small enough (no sort)."""
    if len(values) == 0:
        return values, np.zeros(0, np.int64)
    low = int(values.min())
    spread = (int(values.max()) - low) // step + 1
    if spread <= 4 * len(values) + 1024:
        offsets = (values - low) // step
        present = np.zeros(spread, bool)
        present[offsets] = True
        rank_of = np.cumsum(present) - 1
        distinct = low + step * np.flatnonzero(present).astype(np.int64)
        return distinct, rank_of[offsets].astype(np.int64)
    distinct, inverse = np.unique(values, return_inverse=True)
    return distinct, inverse.astype(np.int64)
