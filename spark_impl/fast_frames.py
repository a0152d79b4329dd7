"""The DataFrame edge of the vectorised bucket step (:mod:`windtunnel.spark_impl.fast`).

Reading: a micro-batch's event rows (JSON payloads, or the typed columns named by
:data:`TYPED_TIME` and :func:`typed_key`) become arrays of key codes and event times in ms,
with unusable-time drops; new keys are added to the bucket's state. Writing: emissions,
late drops and other drops become output rows (``schema.OUTPUT_COLUMNS``) with the texts
the reference step gives. Windows are half-open ``[start_ms, end_ms)``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.errors import InvalidStream
from windtunnel.oracle.model.fields import hashable
from windtunnel.oracle.model.spec import Aggregation
from windtunnel.oracle.model.timeparse import NotATime, timestamp_ms
from windtunnel.oracle.windows.driver import group_value, unusable_time_drop
from windtunnel.spark_impl.fast_state import FastState
from windtunnel.spark_impl.schema import INT_OUTPUT_COLUMNS, OUTPUT_COLUMNS, to_json_text

NONE = np.iinfo(np.int64).min
"""Missing int64 value: the clock of a key without a usable event yet; no ``after_seq``."""
TIME_LIMIT_MS = 2**61
"""Event times (after ``time_unit``) must lie in ``(-TIME_LIMIT_MS, TIME_LIMIT_MS)``."""

TYPED_TIME = "fast_time"
TYPED_TIME_NULL = "fast_time_null"
"""Typed input columns (see :func:`typed_columns`): the ``on`` field as a long, and its nullness."""


def typed_key(index: int) -> str:
    """Name of the typed input column of the ``index``-th group_by field."""
    return f"fast_key{index}"


def typed_key_null(index: int) -> str:
    return f"fast_key{index}_null"


def nullable_ints(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """A nullable integer column as (int64 values with 0 for null, null mask)."""
    missing = column.isna().to_numpy()
    values = column.fillna(0).to_numpy().astype(np.int64) if len(column) else np.zeros(0, np.int64)
    return values, missing


class Events:
    """The usable and unusable events of one micro-batch, in seq order."""

    def __init__(self, n: int) -> None:
        self.code = np.zeros(n, np.int64)
        self.t = np.zeros(n, np.int64)
        self.usable = np.ones(n, bool)
        self.drops: dict[int, Any] = {}
        self.payloads: list[Any] | None = None


# --- reading rows
def read_events(
    state: FastState,
    frame: pd.DataFrame,
    seqs: np.ndarray,
    *,
    on: str,
    time_of: Callable[[Any], Any],
    key_getters: Sequence[Callable[[Any], Any]],
    time_unit_ms: int,
    count_only: bool,
) -> Events:
    """Key codes (new keys added to ``state``), times in ms and unusable-time drops.

    Raises InvalidStream for an event time outside ``(-TIME_LIMIT_MS, TIME_LIMIT_MS)``.
    """
    n = len(frame)
    events = Events(n)
    typed = TYPED_TIME in frame.columns and count_only
    lookup = {key: code for code, key in enumerate(state.keys)}
    new_first: list[int] = []
    if typed:
        key_values = _typed_keys(frame, len(key_getters))
        raw_t, null_t = nullable_ints(frame[TYPED_TIME])
        if TYPED_TIME_NULL in frame.columns:
            null_t = null_t | frame[TYPED_TIME_NULL].to_numpy(dtype=bool)
        unit = time_unit_ms
        if np.any(np.abs(raw_t[~null_t]) >= TIME_LIMIT_MS // unit):
            _out_of_range(on, time_unit_ms, raw_t[~null_t])
        events.t = raw_t * unit
        events.usable = ~null_t
        for row in np.flatnonzero(null_t).tolist():
            events.drops[row] = unusable_time_drop(int(seqs[row]), on, None, None)
        codes, uniques = key_values
        local = np.empty(len(uniques), np.int64)
        first_index = np.full(len(uniques), n, np.int64)
        np.minimum.at(first_index, codes, np.arange(n))
        for u, values in enumerate(uniques):
            local[u] = _key_code(state, lookup, values, int(seqs[first_index[u]]), new_first)
        events.code = local[codes] if n else events.code
    else:
        payloads = [
            json.loads(p) if isinstance(p, str) else {} for p in frame["payload"].tolist()
        ]
        events.payloads = payloads
        times = np.zeros(n, np.int64)
        unit = time_unit_ms
        for index, payload in enumerate(payloads):
            values = tuple(g(payload) for g in key_getters)
            events.code[index] = _key_code(state, lookup, values, int(seqs[index]), new_first)
            raw = time_of(payload)
            seq = int(seqs[index])
            if type(raw) is int:
                t: int | None = raw * unit
            else:
                try:
                    t = timestamp_ms(raw, unit)
                except NotATime as exc:
                    events.drops[index] = unusable_time_drop(seq, on, raw, exc)
                    events.usable[index] = False
                    continue
            if t is None:
                events.drops[index] = unusable_time_drop(seq, on, None, None)
                events.usable[index] = False
                continue
            if not -TIME_LIMIT_MS < t < TIME_LIMIT_MS:
                _out_of_range(on, time_unit_ms, np.array([0]), raw)
            times[index] = t
        events.t = times
    if new_first:
        state.first_seq = np.concatenate([state.first_seq, np.array(new_first, np.int64)])
        state.clock = np.concatenate(
            [state.clock, np.full(len(new_first), NONE, np.int64)]
        )
    return events


def _out_of_range(on: str, time_unit_ms: int, raw: np.ndarray, value: Any = None) -> None:
    shown = value if value is not None else int(raw[np.argmax(np.abs(raw))])
    raise InvalidStream(
        on,
        shown,
        f"event times must lie within +-2^61 ms for the vectorised Spark step "
        f"(time_unit {time_unit_ms} ms)",
        "fix the event time or use --engine oracle",
    )


def _typed_keys(frame: pd.DataFrame, key_count: int) -> tuple[np.ndarray, list[tuple[Any, ...]]]:
    """Per row a code into the unique group_by value tuples (first-appearance order)."""
    n = len(frame)
    if not key_count:
        return np.zeros(n, np.int64), [()]
    columns = []
    for index in range(key_count):
        column = frame[typed_key(index)]
        null_name = typed_key_null(index)
        if null_name in frame.columns:
            values, missing = nullable_ints(column)
            missing |= frame[null_name].to_numpy(dtype=bool)
            if not missing.any() and key_count == 1:
                codes, uniques = pd.factorize(values)
                return codes.astype(np.int64), [(v,) for v in uniques.tolist()]
            objects = np.array([*values.tolist(), None], dtype=object)[:-1]
            objects[missing] = None
            columns.append(objects)
        else:
            columns.append(column.to_numpy(dtype=object))
    if any(pd.isna(c).any() for c in columns):
        # pandas factorizes None as NaN (a key that equals nothing, itself included, once
        # pickled): codes by first appearance through a dict instead, None kept as None
        first: dict[tuple[Any, ...], int] = {}
        codes = np.fromiter(
            (first.setdefault(values, len(first)) for values in zip(*(c.tolist() for c in columns), strict=True)),
            np.int64,
            n,
        )
        return codes, list(first)
    if len(columns) == 1:
        codes, uniques = pd.factorize(columns[0], use_na_sentinel=False)
        return codes.astype(np.int64), [(v,) for v in uniques]
    combined = pd.MultiIndex.from_arrays(columns)
    codes, uniques = pd.factorize(combined)
    return codes.astype(np.int64), [tuple(u) for u in uniques]


def _key_code(
    state: FastState,
    lookup: dict[Any, int],
    values: tuple[Any, ...],
    seq: int,
    new_first: list[int],
) -> int:
    """The key code of ``values`` (as the oracle's driver looks up groups), made if new."""
    try:
        code = lookup.get(values)
        key: tuple[Any, ...] = values
    except TypeError:
        key = tuple(hashable(v) for v in values)
        code = lookup.get(key)
    if code is None:
        code = lookup[key] = len(state.keys)
        state.keys.append(key)
        state.groups.append(to_json_text(group_value(values)))
        new_first.append(seq)
    return code


# --- writing rows
def emission_frame(
    state: FastState,
    keys: np.ndarray,
    starts: np.ndarray,
    counts: np.ndarray,
    agg_states: Sequence[Any] | None,
    reason: str,
    after_seq: np.ndarray,
    wall_ms: np.ndarray,
    steps: np.ndarray,
    emit_index: np.ndarray,
    *,
    partial: bool,
    size_ms: int,
    aggregator: Aggregator,
    aggregations: Sequence[Aggregation],
) -> pd.DataFrame:
    """Emissions of windows ``[start, start + size_ms)`` of key codes ``keys`` as output rows;
    ``counts`` (count-only) or ``agg_states`` give the rows, ``after_seq`` :data:`NONE` is null."""
    size = size_ms
    rows = aggregator.rows
    if agg_states is None:
        texts = count_texts(aggregations, counts, starts, size_ms)
    else:
        texts = [
            to_json_text(rows(a, s, s + size)[0])
            for a, s in zip(agg_states, starts.tolist(), strict=True)
        ]
    n = len(keys)
    groups = np.array(state.groups, dtype=object)
    frame = _empty_columns(n)
    frame["type"] = np.full(n, "emit", dtype=object)
    frame["start_ms"] = pd.array(starts, dtype="Int64")
    frame["end_ms"] = pd.array(starts + size, dtype="Int64")
    frame["group"] = groups[keys] if n else np.zeros(0, object)
    frame["row"] = np.array(texts, dtype=object)
    frame["reason"] = np.full(n, reason, dtype=object)
    no_after = after_seq == NONE
    frame["after_seq"] = pd.arrays.IntegerArray(np.where(no_after, 0, after_seq), no_after)
    frame["wall_ms"] = pd.array(wall_ms, dtype="Int64")
    frame["partial"] = pd.array(np.full(n, partial), dtype="boolean")
    frame["step"] = pd.array(steps, dtype="Int64")
    frame["group_first_seq"] = pd.array(state.first_seq[keys], dtype="Int64")
    frame["emit_index"] = pd.array(emit_index, dtype="Int64")
    return pd.DataFrame(frame, columns=list(OUTPUT_COLUMNS))


def count_texts(
    aggregations: Sequence[Aggregation], counts: np.ndarray, starts: np.ndarray, size_ms: int
) -> list[str]:
    """Count-only rows as JSON text (what ``to_json_text(aggregator.rows(...)[0])`` gives:
    integer values, names JSON-quoted)."""
    template = "{{" + ", ".join(
        json.dumps(a.name).replace("{", "{{").replace("}", "}}") + ": {" + str(i) + "}"
        for i, a in enumerate(aggregations)
    ) + "}}"
    functions = [a.function for a in aggregations]
    size = size_ms
    if functions == ["count"]:
        return [template.format(n) for n in counts.tolist()]
    return [
        template.format(
            *(n if f == "count" else (s if f == "window_start" else s + size) for f in functions)
        )
        for n, s in zip(counts.tolist(), starts.tolist(), strict=True)
    ]


def late_frame(
    seqs: np.ndarray,
    times: np.ndarray,
    starts: np.ndarray,
    valid: np.ndarray,
    clocks: np.ndarray,
    groups: np.ndarray,
    *,
    size_ms: int,
    offset_ms: int,
) -> pd.DataFrame:
    """Late drops: the texts of oracle.fixed.late_drop, built column-wise (``groups``: each
    event's group as JSON text)."""
    size, offset = size_ms, offset_ms
    single = valid.sum(axis=1) == 1
    first = np.where(valid, starts, np.iinfo(np.int64).max).min(axis=1)
    windows: list[str] = []
    messages: list[str] = []
    for seq_t_first_clock, one, row, ok in zip(
        zip(times.tolist(), first.tolist(), clocks.tolist(), strict=True),
        single.tolist(),
        starts,
        valid,
        strict=True,
    ):
        t, s, clock = seq_t_first_clock
        if one:
            windows.append(f'[{{"start_ms": {s}, "end_ms": {s + size}}}]')
            span = "window"
        else:
            missed = row[ok].tolist()
            windows.append(
                "["
                + ", ".join(f'{{"start_ms": {m}, "end_ms": {m + size}}}' for m in missed)
                + "]"
            )
            span = f"all {len(missed)} target windows"
        messages.append(
            f"event time {t} is late for {span} (first [{s}, {s + size})): "
            f"it closed when the clock reached {s + size + offset}; the clock is at {clock}"
        )
    n = len(seqs)
    frame = _empty_columns(n)
    frame["type"] = np.full(n, "drop", dtype=object)
    frame["start_ms"] = pd.array(first, dtype="Int64")
    frame["end_ms"] = pd.array(first + size, dtype="Int64")
    frame["group"] = np.asarray(groups, dtype=object)
    frame["reason"] = np.full(n, "late", dtype=object)
    frame["seq"] = pd.array(seqs, dtype="Int64")
    frame["windows"] = np.array(windows, dtype=object)
    frame["message"] = np.array(messages, dtype=object)
    frame["step"] = pd.array(2 * seqs + 1, dtype="Int64")
    frame["emit_index"] = pd.array(np.zeros(n, np.int64), dtype="Int64")
    return pd.DataFrame(frame, columns=list(OUTPUT_COLUMNS))


def _empty_columns(n: int) -> dict[str, Any]:
    """Every output column, all null, for ``n`` rows."""
    none = np.full(n, None, dtype=object)
    ints = pd.arrays.IntegerArray(np.zeros(n, np.int64), np.ones(n, bool))
    frame: dict[str, Any] = {}
    for name in OUTPUT_COLUMNS:
        frame[name] = ints if name in INT_OUTPUT_COLUMNS else none
    frame["partial"] = pd.arrays.BooleanArray(np.zeros(n, bool), np.ones(n, bool))
    return frame




def empty_frame() -> pd.DataFrame:
    """No output rows."""
    return pd.DataFrame(_empty_columns(0), columns=list(OUTPUT_COLUMNS))


def drop_frame(drops: Sequence[Any], groups: Sequence[str]) -> pd.DataFrame:
    """Drops as output rows: step of their event, emit index 0 (an event's only output);
    ``groups``: each drop's group as JSON text."""
    n = len(drops)
    frame = _empty_columns(n)
    seqs = np.array([d.seq for d in drops], dtype=np.int64)
    firsts = [d.windows[0] if d.windows else None for d in drops]
    frame["type"] = np.full(n, "drop", dtype=object)
    frame["start_ms"] = pd.array([w.start_ms if w else None for w in firsts], dtype="Int64")
    frame["end_ms"] = pd.array([w.end_ms if w else None for w in firsts], dtype="Int64")
    frame["group"] = np.array(list(groups), dtype=object)
    frame["reason"] = np.array([d.reason for d in drops], dtype=object)
    frame["seq"] = pd.array(seqs, dtype="Int64")
    frame["windows"] = np.array(
        [to_json_text([w.to_json() for w in d.windows]) for d in drops], dtype=object
    )
    frame["message"] = np.array([d.message for d in drops], dtype=object)
    frame["step"] = pd.array(2 * seqs + 1, dtype="Int64")
    frame["emit_index"] = pd.array(np.zeros(n, np.int64), dtype="Int64")
    return pd.DataFrame(frame, columns=list(OUTPUT_COLUMNS))
