"""The fast path of count windows; the reference is ``oracle/windows/count.py``, and
tests/oracle/fast/test_count.py holds the two equal.

It takes count windows with a count-only aggregate (counts and window bounds), ``every <=
count``, and one plain group field or none. Such a window ``[s, s + count)`` (offsets,
half-open) is emitted at its last offset holding ``count`` events, so no window state is
kept: per key only the next offset. The stream is read in runs of events (:mod:`.stream`):
a run's events get key codes (a stable sort by code ranks each among its key's events),
and the windows it completes are located at once (:func:`windows_ending_in`); only their
emissions are built. At the end of input it flushes the open windows itself (the common
case); a watermark, a run too short or with an unhashable key, or anything after the end
hands the stream to the reference, which then holds each key's offset and open windows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import repeat
from typing import Any

import numpy as np
import numpy.typing as npt

from windtunnel.oracle.fast.columns import CHUNK, EmissionSlots, KeyTable, emission, window_ref
from windtunnel.oracle.fast.stream import Cursor, Run, fast_outputs, group_values, hand_over
from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.assignment import starts_containing, windows_ending_in
from windtunnel.oracle.model.results import Emission, Output, WindowRef
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import CountWindows, Query
from windtunnel.oracle.model.stream import Item
from windtunnel.oracle.windows.count import CountKey, CountOperator
from windtunnel.oracle.windows.driver import Driver

FREE_RULES: tuple[str, ...] = ("end_of_input",)
"""The rules this fast path reads; every other rule must keep its default."""
MIN_RUN = 16
"""Shorter runs of events hand the stream to the reference (the columns' setup costs more)."""
_MAX_REFS = 4096
"""Window values kept for reuse by start offset (keys at similar offsets share them)."""


def refusal(query: Query) -> str | None:
    """Why this fast path does not take ``query`` (the common checks are the package's)."""
    window = query.window
    assert isinstance(window, CountWindows) and query.aggregate is not None
    if not Aggregator(query.aggregate, query.aggregate_by).count_only:
        return "the aggregate is not count-only (count() and window bounds)"
    if window.hop > window.count:
        return "gapped windows (every > count)"
    if len(query.group_by) > 1 or any("." in field for field in query.group_by):
        return "more than one group field, or a nested one"
    return None


class _Key:
    __slots__ = ("next_offset", "value")

    def __init__(self, value: Any) -> None:
        self.value = value
        self.next_offset = 0


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
    assert isinstance(window, CountWindows) and query.aggregate is not None
    count = window.count
    hop = window.hop
    key_field = query.group_by[0] if query.group_by else None
    aggregator = Aggregator(query.aggregate, query.aggregate_by)
    (row,) = aggregator.rows([count], None, None)
    table = KeyTable(lambda lookup: _Key(lookup if key_field is not None else None))
    window_refs: dict[int, WindowRef] = {}

    def take(run: Run) -> Iterator[Output] | None:
        """The emissions of the windows a run completes, in stream order: each at its
        event's seq and wall clock, of its window and group (looked up in bulk)."""
        codes = table.value_codes(run.columns[0]) if key_field is not None else table.unit_codes(run.size)
        if codes is None:
            return None
        run.release()
        seqs, refs, groups = completed(codes, run.first_seq)
        walls = repeat(run.wall_ms) if run.walls is None else [run.walls[s - run.first_seq] for s in seqs]
        return emitted(seqs, refs, groups, walls)

    def completed(codes: npt.NDArray[np.intp], first_seq: int) -> tuple[list[int], list[WindowRef], list[Any]]:
        """Advance every key's offsets by a run's events (their key codes) and return the
        seqs, windows and groups of the windows they complete, in stream order.

        A key with offset ``b`` before the run and ``m`` events in it gives them offsets
        ``b, ..., b + m - 1``; those completing a window are located by their rank among
        the key's events in a stable sort by code."""
        n = len(codes)
        key_list = table.objects
        order = np.argsort(codes.astype(np.uint16) if len(key_list) <= 65_536 else codes, kind="stable")
        counts = np.bincount(codes, minlength=len(key_list))
        present = np.flatnonzero(counts)
        chunk_keys = [key_list[code] for code in present.tolist()]
        m = counts[present]
        b = np.array([key.next_offset for key in chunk_keys], dtype=np.int64)
        which, rank = windows_ending_in(b, m, count, hop)
        positions = order[(np.cumsum(m) - m)[which] + rank]  # their stream positions
        # in stream order: positions are distinct, a radix sort as uint16 in a chunk
        by_position = np.argsort(positions.astype(np.uint16) if n <= 65_536 else positions, kind="stable")
        in_order = positions[by_position]
        starts = (b[which] + rank - (count - 1))[by_position]
        which = which[by_position]
        for key, following in zip(chunk_keys, (b + m).tolist(), strict=True):
            key.next_offset = following
        # windows [s, s + count) are the same for every key: shared values, looked up once
        # per distinct start (multiples of hop: by (s - low) // hop while the starts span
        # little more than the windows); windows and groups gathered by numpy
        distinct: Iterable[int] = ()
        slot: Any = None
        if len(starts):
            low, high = int(starts.min()), int(starts.max())
            if (high - low) // hop < len(starts) + 64:
                distinct, slot = range(low, high + 1, hop), (starts - low) // hop
            else:
                spread, slot = np.unique(starts, return_inverse=True)
                distinct = spread.tolist()
        if len(window_refs) > _MAX_REFS:
            window_refs.clear()
        windows = []
        for start in distinct:
            ref = window_refs.get(start)
            if ref is None:
                ref = window_refs[start] = window_ref(None, None, start, start + count)
            windows.append(ref)
        values = (key.value for key in chunk_keys)
        return (
            (in_order + first_seq).tolist(),
            np.fromiter(windows, dtype=object, count=len(windows))[slot].tolist() if windows else [],
            np.fromiter(values, dtype=object, count=len(chunk_keys))[which].tolist(),
        )

    def emitted(seqs: list[int], refs: list[WindowRef], groups: list[Any], walls: Iterable[int]) -> Iterator[Output]:
        twin = EmissionSlots
        emission_type = Emission
        copy_row = row.copy
        for seq, ref, group, at_ms in zip(seqs, refs, groups, walls, strict=False):
            out: Any = twin()  # Emission(ref, group, dict(row), ...), built inline (no __init__)
            out.window = ref
            out.group = group
            out.row = copy_row()
            out.reason = "count"
            out.after_seq = seq
            out.wall_ms = at_ms
            out.partial = False
            out.type = "emit"
            out.__class__ = emission_type  # the twin becomes an Emission (same slots)
            yield out

    def reference() -> Driver:
        """The reference operator holding every key's offset and open windows."""
        driver = Driver(
            query, CountOperator, rules, time_unit_ms=time_unit_ms, start_wall_ms=cursor.wall_ms
        )
        fields = len(query.group_by)
        for key in table.objects:
            group = driver.group_for(group_values(key.value, fields))
            state = group.state = CountKey()
            state.next_offset = following = key.next_offset
            for start in starts_containing(following - 1, count, hop, lowest=0):
                if start + count > following:  # not complete: holds following - start events
                    state.windows[start] = [following - start]
        return driver

    def end() -> Iterator[Output]:
        """At the end of input, the open windows of every key (first seen first), each by
        its nominal range and holding ``next_offset - start`` events (rule end_of_input:
        flush, docs/semantics.md C1); anything else after the runs goes to the reference."""
        if not cursor.only_end_left():
            yield from hand_over(reference, cursor)
            return
        if rules.end_of_input == "discard":
            return
        after_seq, wall_ms = cursor.after_seq, cursor.wall_ms
        made: dict[int, dict[str, Any]] = {}  # the row of a window holding n events
        for key in table.objects:
            following = key.next_offset
            for start in starts_containing(following - 1, count, hop, lowest=0):
                if start + count > following:  # not complete: holds following - start events
                    held = following - start
                    row = made.get(held)
                    if row is None:
                        row = made[held] = aggregator.rows([held], None, None)[0]
                    ref = window_refs.get(start) or window_ref(None, None, start, start + count)
                    yield emission(ref, key.value, row.copy(), "end_of_input", after_seq, wall_ms, True)

    fields = (key_field,) if key_field is not None else ()
    cursor = Cursor(items, start_wall_ms, fields=fields, min_run=min_run, chunk_size=chunk_size)
    return fast_outputs(cursor.parts(take), end())
