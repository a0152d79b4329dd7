"""The fast path of session windows under rule ``session_order: reorder`` (the default);
the reference is ``oracle/windows/session_reorder.py``, and tests/oracle/fast/test_session.py
holds the two equal.

It takes sessions on a plain event field (not ``now()``) with a count-only aggregate (counts
and window bounds), one plain group field or none, and no ``max_duration``, ``max_events``,
``idle_timeout`` or ``allowed_lateness``; rules ``end_of_input`` and ``session_gap`` may take
any value, every other rule its default. The stream is read in runs of events
(:mod:`.stream`) with integer times; a watermark, end of input, a run too short, with other
times or an unhashable key hands the stream to the reference.

A run goes through the columns of :mod:`.session_columns`, which says why they equal the
reference.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any

import numpy as np

from windtunnel.oracle.fast.columns import CHUNK, KeyTable
from windtunnel.oracle.fast.session_columns import SessionKey, count_rows, session_run
from windtunnel.oracle.fast.stream import Cursor, Run, fast_outputs, group_values, hand_over
from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.results import Output
from windtunnel.oracle.model.rules import Rules, close_point_offset_ms
from windtunnel.oracle.model.spec import NOW, Query, SessionWindows
from windtunnel.oracle.model.stream import Item
from windtunnel.oracle.windows.driver import Driver
from windtunnel.oracle.windows.session_reorder import (
    OpenSession,
    ReorderKey,
    ReorderSessionOperator,
)

FREE_RULES: tuple[str, ...] = ("end_of_input", "session_gap")
"""The rules this fast path reads; every other rule must keep its default."""
MIN_RUN = 16
"""Shorter runs of events hand the stream to the reference (the columns' setup costs more)."""
_TIME_LIMIT = 1 << 62
_UNREAD: dict[str, Any] = {}
"""The payload of an event the fast path buffered or counted, as the reference receives it:
a count-only aggregate reads no field."""


def refusal(query: Query) -> str | None:
    """Why this fast path does not take ``query`` (the common checks are the package's)."""
    window = query.window
    assert isinstance(window, SessionWindows) and query.aggregate is not None
    if window.on == NOW:
        return "sessions on now() follow the wall clock"
    if "." in window.on:
        return f"the time field {window.on} is nested"
    for option in ("max_duration_ms", "max_events", "idle_timeout_ms", "allowed_lateness_ms"):
        if getattr(window, option) is not None:
            return f"{option.removesuffix('_ms')} is set"
    if not Aggregator(query.aggregate, query.aggregate_by).count_only:
        return "the aggregate is not count-only (count() and window bounds)"
    if len(query.group_by) > 1 or any("." in field for field in query.group_by):
        return "more than one group field, or a nested one"
    return None


@lru_cache(maxsize=8)
def _int64s(n: int) -> struct.Struct:
    return struct.Struct(f"={n}q")


def outputs(
    query: Query,
    items: Iterable[Item],
    rules: Rules,
    time_unit_ms: int = 1,
    start_wall_ms: int = 0,
    *,
    chunk_size: int = CHUNK,
    min_run: int = MIN_RUN,
) -> Iterator[Output]:
    """The reference's outputs for a run :func:`refusal` (and the package's) takes."""
    window = query.window
    assert isinstance(window, SessionWindows) and query.aggregate is not None
    gap = window.gap_ms
    # a session [first, last] takes an event at t while t <= last + reach (rule session_gap)
    reach = gap if rules.session_gap == "inclusive" else gap - 1
    # and closes once the watermark >= last + span (rule session_close_at)
    span = gap + close_point_offset_ms(rules.session_close_at, 0)
    tolerance = window.tolerance_ms
    key_field = query.group_by[0] if query.group_by else None
    table = KeyTable(lambda lookup: SessionKey(lookup if key_field is not None else None))
    rows = count_rows([(a.name, a.function) for a in query.aggregate])

    def take(run: Run) -> Iterator[Output] | None:
        raw_times = run.columns[-1]
        if set(map(type, raw_times)) != {int}:
            return None
        try:  # one struct call packs the column
            times = np.frombuffer(_int64s(len(raw_times)).pack(*raw_times), dtype=np.int64)
        except struct.error:  # beyond int64
            return None
        if time_unit_ms != 1:
            if max(-int(times.min()), int(times.max())) * time_unit_ms >= _TIME_LIMIT:
                return None
            times = times * time_unit_ms
        codes = table.value_codes(run.columns[0]) if key_field is not None else table.unit_codes(run.size)
        if codes is None:
            return None
        outputs = session_run(
            table.objects, codes, times, tolerance=tolerance, reach=reach, span=span,
            first_seq=run.first_seq, wall_ms=run.wall_ms, walls=run.walls, rows=rows,
        )
        if outputs is not None:
            run.release()
        return outputs

    def reference() -> Driver:
        """The reference operator holding every key's clock, buffer and open session."""
        driver = Driver(
            query, ReorderSessionOperator, rules, time_unit_ms=time_unit_ms,
            start_wall_ms=cursor.wall_ms,
        )
        fields = len(query.group_by)
        for key in table.objects:
            group = driver.group_for(group_values(key.value, fields))
            if not key.live:
                continue
            state = group.state = ReorderKey(key.clock)
            state.buffer.entries = [(t, seq, _UNREAD) for t, seq, _ in key.buffer]  # sorted: a heap
            state.buffer.released_ms = key.released
            state.last_wall_ms = cursor.wall_ms
            if key.state is not None:
                session = state.session = OpenSession(key.first)
                session.last_ms = key.last
                # its events' count is what a count-only aggregate reads (their seqs are
                # read only by explanations, which never take a fast path)
                session.events = [(-1, _UNREAD)] * key.state
        return driver

    fields = (key_field, window.on) if key_field is not None else (window.on,)
    cursor = Cursor(items, start_wall_ms, fields=fields, min_run=min_run, chunk_size=chunk_size)
    return fast_outputs(cursor.parts(take), hand_over(reference, cursor))
