"""A fast path for count windows of the default profile, beside the reference in ``count.py``.

Eligible: :class:`CountWindows` (on ``now()``, as they always are) with an aggregate, in the
default profile. It produces exactly the reference's outputs in the same order
(tests/oracle/test_count_fast.py checks this with Hypothesis);
:func:`windtunnel.oracle.engine.stream_outputs` picks it automatically. It skips the driver's
per-event dispatch, and a count-only aggregate keeps no window state at all: the window
``[s, s + count)`` (offsets, half-open) emitted at its last offset holds ``count`` events,
and one flushed at the end of input holds ``next_offset - s`` (reported by its nominal
range ``[s, s + count)``, docs/semantics.md C1).

With a count-only aggregate (and ``every <= count``) on one plain group field or none, the
stream is taken in chunks (:mod:`windtunnel.oracle.windows.columns`): a chunk of plain
events numbered on, without arrival times, on known keys is read in one pass into key
codes, each event's offset is its key's offset so far plus its rank among the chunk's
events of that key (a stable sort by code), and the windows completed are those whose
start ``offset - count + 1`` is a non-negative multiple of ``every``; only their
emissions are built (their windows and groups gathered in bulk, each emission filled in
place, see :func:`~windtunnel.oracle.windows.columns.emission`). Other chunks are split into runs of plain events (checked column by
column: seqs, arrival times, new keys in first-seen order) and single items; what the
columns cannot take (unhashable keys, broken streams, watermarks, end of input) goes
through the per-event loop, which shares the keys' offsets, so outputs stay exact.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import repeat
from typing import Any

import numpy as np
import numpy.typing as npt

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.fields import getter, hashable
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import NOW, CountWindows, Query
from windtunnel.oracle.model.stream import Batch, End, Event, Item, StreamChecker, Watermark
from windtunnel.oracle.windows.columns import (
    CHUNK,
    EmissionSlots,
    KeyTable,
    arrivals,
    chunks,
    emission,
    event_runs,
    plain_payloads,
    seqs_follow,
    window_ref,
)
from windtunnel.oracle.windows.driver import group_value, watermark_rejected

_MIN_RUN = 16
_MAX_REFS = 4096
"""Window values kept for reuse by start offset (keys at similar offsets share them)."""
"""Shorter runs of plain events take the per-event loop (the columns' setup costs more)."""


def eligible(query: Query, rules: Rules, profile: str) -> bool:
    """True when :func:`fast_outputs` gives exactly the reference's outputs for this run."""
    window = query.window
    return (
        profile == "tenzir"
        and type(window) is CountWindows
        and window.on == NOW
        and query.aggregate is not None
    )


class _Key:
    __slots__ = ("next_offset", "value", "windows")

    def __init__(self, value: Any) -> None:
        self.value = value
        self.next_offset = 0
        self.windows: dict[int, Any] = {}  # open windows' states by start (not count-only)


def fast_outputs(
    query: Query,
    items: Iterable[Item],
    rules: Rules,
    start_wall_ms: int = 0,
    *,
    chunk_size: int = CHUNK,
    min_run: int = _MIN_RUN,
) -> Iterator[Output]:
    """The reference's outputs for an :func:`eligible` run, computed faster.

    Raises InvalidStream for a malformed stream, as the reference does.
    """
    window = query.window
    assert isinstance(window, CountWindows) and query.aggregate is not None
    count = window.count
    hop = window.hop
    gaps = hop > count  # only then can an offset lie between windows
    aggregator = Aggregator(query.aggregate, query.aggregate_by)
    count_only = aggregator.count_only
    new_state = aggregator.new
    add = aggregator.add
    rows = aggregator.rows
    key_getters = [getter(p) for p in query.group_by]
    # one plain group field: key by its value (equal values, equal 1-tuples: the same groups)
    key_field = query.group_by[0] if len(query.group_by) == 1 and "." not in query.group_by[0] else None
    keys: dict[Any, _Key] = {}  # in first-seen order, as the driver's groups
    wall = start_wall_ms
    after_seq: int | None = None
    flush = rules.end_of_input != "discard"  # as count.py reads the rule

    def emit(key: _Key, start: int, end: int, state: Any, reason: str, partial: bool) -> Iterator[Emission]:
        ref = WindowRef(start_offset=start, end_offset=end)
        for row in rows(state, None, None):
            yield Emission(ref, key.value, row, reason, after_seq, wall, partial)

    def end() -> Iterator[Emission]:
        if not flush:
            return
        partial_rows: dict[int, list[dict[str, Any]]] = {}  # a count-only row per count held
        refs = window_refs  # the completed windows' shared values
        for key in keys.values():
            following = key.next_offset
            if count_only:  # open: starts s < following with s + count > following
                first = max(0, following - count + 1)
                first += -first % hop
                for start in range(first, following, hop):
                    ref = refs.get(start)
                    if ref is None:
                        ref = refs[start] = window_ref(None, None, start, start + count)
                    held = following - start
                    made = partial_rows.get(held)
                    if made is None:
                        made = partial_rows[held] = rows([held], None, None)
                    for row in made:
                        yield emission(ref, key.value, row.copy(), "end_of_input", after_seq, wall, True)
            else:
                for start in sorted(key.windows):
                    yield from emit(key, start, start + count, key.windows[start], "end_of_input", True)
                key.windows.clear()

    # The stream's validity rules are StreamChecker's; the one-event case is tested inline.
    checker = StreamChecker(start_wall_ms)
    next_seq = 0
    ended = False

    def scalar(index: int, item: Item) -> Iterator[Output]:
        """One item through the per-event loop (every item the columns do not take)."""
        nonlocal wall, after_seq, next_seq, ended
        if type(item) is Event:
            at_ms = item.at_ms
            if ended or item.seq != next_seq or (at_ms is not None and at_ms < wall):
                checker.wall_ms, checker.next_seq = wall, next_seq
                checker.item(index, item)  # raises InvalidStream
            next_seq += 1
            events: Iterable[Event] = (item,)
        else:
            checker.wall_ms, checker.next_seq = wall, next_seq
            checker.item(index, item)
            next_seq = checker.next_seq
            if isinstance(item, Batch):
                events = item.events  # the wall clock moves event by event below
            elif isinstance(item, Event):  # a subclass of Event: an event all the same
                events = (item,)
            else:
                wall = checker.wall_ms
                if isinstance(item, End):
                    ended = True
                    yield from end()
                elif isinstance(item, Watermark):  # CountOperator's default rejection, as the reference
                    raise watermark_rejected(
                        "tenzir", item.to_ms, "its windows have no event-time watermark"
                    )
                return
        for event in events:
            at_ms = event.at_ms
            if at_ms is not None:
                wall = at_ms
            payload = event.payload
            if key_field is not None:
                raw = payload.get(key_field)
                try:
                    key = keys.get(raw)
                    lookup: Any = raw
                except TypeError:  # a list or mapping as the key value (as fixed_fast.py keys it)
                    lookup = hashable(raw)
                    key = keys.get(lookup)
                if key is None:
                    key = keys[lookup] = _Key(raw)
                    table.add(lookup, key)
            else:
                values = tuple(g(payload) for g in key_getters)
                try:
                    key = keys.get(values)
                    lookup = values
                except TypeError:  # a list or mapping among the key values
                    lookup = tuple(hashable(v) for v in values)
                    key = keys.get(lookup)
                if key is None:
                    key = keys[lookup] = _Key(group_value(values))
                    table.add(lookup, key)
            after_seq = event.seq
            offset = key.next_offset
            key.next_offset = offset + 1
            if gaps and offset % hop >= count:  # past its hop's window, before the next one
                yield Drop(
                    event.seq,
                    "no_window",
                    (),
                    f"offset {offset} of its group lies between windows (every {hop} > "
                    f"count {count})",
                    key.value,
                )
                continue
            if count_only:
                start = offset - count + 1  # the window this offset completes, if any
                if start >= 0 and start % hop == 0:
                    yield from emit(key, start, offset + 1, [count], "count", False)
                continue
            last = offset - offset % hop
            first = max(0, offset - count + 1)
            first += -first % hop
            windows = key.windows
            for start in range(first, last + 1, hop):
                state = windows.get(start)
                if state is None:
                    state = windows[start] = new_state()
                add(state, payload)
                if offset == start + count - 1:
                    del windows[start]
                    yield from emit(key, start, offset + 1, state, "count", False)

    # one plain group field or none: the columnar path can take runs of plain events
    columnar = count_only and not gaps and (key_field is not None or not query.group_by)
    template = rows([count], None, None) if count_only else []  # a complete window's rows

    def new_key(lookup: Any) -> _Key:
        key = keys[lookup] = _Key(lookup if key_field is not None else group_value(()))
        return key

    table = KeyTable(key_field, new_key)
    window_refs: dict[int, WindowRef] = {}

    def columns(events: Sequence[Event]) -> Iterator[Output] | None:
        """A run of plain events, column by column (None: the per-event loop must take
        it): its windows are counted at once, the emissions built as they are consumed."""
        if not seqs_follow(events, next_seq):
            return None
        usable, walls = arrivals(events, wall)
        if not usable:
            return None
        codes = table.codes(events)
        if codes is None:
            return None
        return emitted(*counted(codes, walls))

    def counted(
        codes: npt.NDArray[np.intp], walls: list[int] | None
    ) -> tuple[list[int], list[WindowRef], list[Any], list[int] | None, int]:
        """Advance every key's offsets by a run's events (their key codes) and return what
        :func:`emitted` takes for the windows they complete, in stream order.

        A key with offset ``b`` before the run and ``m`` events in it gives them offsets
        ``b, ..., b + m - 1``; those completing a window (``offset - count + 1`` a
        non-negative multiple of ``hop``) are every ``hop``-th from the first, so only
        they are located (by their rank among the key's events in a stable sort by code)."""
        nonlocal wall, after_seq, next_seq
        n = len(codes)
        key_list = table.objects
        groups = len(key_list)
        order = np.argsort(codes.astype(np.uint16) if groups <= 65_536 else codes, kind="stable")
        counts = np.bincount(codes, minlength=groups)
        present = np.flatnonzero(counts)
        chunk_keys = [key_list[code] for code in present.tolist()]
        m = counts[present]
        b = np.array([key.next_offset for key in chunk_keys], dtype=np.int64)
        lowest = np.maximum(b, count - 1)
        first_rank = lowest + (count - 1 - lowest) % hop - b  # the key's first completing event
        completing = np.where(first_rank < m, (m - 1 - first_rank) // hop + 1, 0)
        which = np.repeat(np.arange(len(present)), completing)  # per completing event: its key
        step = np.arange(len(which)) - np.repeat(np.cumsum(completing) - completing, completing)
        rank = first_rank[which] + hop * step
        positions = order[(np.cumsum(m) - m)[which] + rank]  # their stream positions
        # in stream order: positions are distinct, a radix sort as uint16 in a chunk
        by_position = np.argsort(positions.astype(np.uint16) if n <= 65_536 else positions, kind="stable")
        in_order = positions[by_position]
        starts = (b[which] + rank - (count - 1))[by_position]
        which = which[by_position]
        first_seq = next_seq
        for key, following in zip(chunk_keys, (b + m).tolist(), strict=True):
            key.next_offset = following
        next_seq += n
        after_seq = next_seq - 1
        wall_before = wall
        if walls is not None:
            wall = walls[-1]
        # windows [s, s + count) are the same for every key: shared values, looked up once
        # per distinct start (multiples of hop: by (s - low) // hop while the starts
        # span little more than the windows); windows and groups gathered by numpy
        distinct: Iterable[int] = ()
        if len(starts):
            low, high = int(starts.min()), int(starts.max())
            if (high - low) // hop < len(starts) + 64:
                distinct, slot = range(low, high + 1, hop), (starts - low) // hop
            else:
                spread, slot = np.unique(starts, return_inverse=True)
                distinct = spread.tolist()
        refs = window_refs
        if len(refs) > _MAX_REFS:
            refs.clear()
        windows = []
        for start in distinct:
            ref = refs.get(start)
            if ref is None:
                ref = refs[start] = window_ref(None, None, start, start + count)
            windows.append(ref)
        values = (key.value for key in chunk_keys)
        return (
            (in_order + first_seq).tolist(),
            np.fromiter(windows, dtype=object, count=len(windows))[slot].tolist() if windows else [],
            np.fromiter(values, dtype=object, count=len(chunk_keys))[which].tolist(),
            [walls[p] for p in in_order.tolist()] if walls is not None else None, wall_before,
        )

    def emitted(
        seqs: list[int], windows: list[WindowRef], groups: list[Any], walls: list[int] | None,
        wall_ms: int,
    ) -> Iterator[Output]:
        """The emissions of the windows a run completed, in stream order: each at its
        event's seq and wall clock (``walls``; None: ``wall_ms`` for all), of its window
        and group (looked up in bulk, C-level ``map``, not per emission)."""
        twin = EmissionSlots
        emission_type = Emission
        (row,) = template  # a count-only aggregate has one row
        copy_row = row.copy
        for seq, ref, group, at_ms in zip(seqs, windows, groups, repeat(wall_ms) if walls is None else walls, strict=False):
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

    twin = EmissionSlots
    emission_type = Emission
    copy_row = template[0].copy if template else dict
    index = -1
    for chunk in chunks(items, chunk_size):
        if columnar and not ended and len(chunk) >= min_run:
            codes = table.plain_codes(chunk.iterate(), next_seq)  # the common case: one pass
            if codes is None:  # new keys (or no plain chunk: found at its first other item)
                payloads = plain_payloads(chunk.iterate(), next_seq)
                codes = None if payloads is None else table.payload_codes(payloads)
            if codes is not None:
                index += len(chunk)
                chunk.release()
                seqs, windows, groups, _, wall_ms = counted(codes, None)
                for seq, ref, group in zip(seqs, windows, groups, strict=True):
                    out: Any = twin()  # as emitted() builds it, inline: one generator less
                    out.window = ref
                    out.group = group
                    out.row = copy_row()
                    out.reason = "count"
                    out.after_seq = seq
                    out.wall_ms = wall_ms
                    out.partial = False
                    out.type = "emit"
                    out.__class__ = emission_type
                    yield out
                continue
        run_items = chunk.items()
        for run_start, run_stop, plain in event_runs(run_items):
            if plain and columnar and not ended and run_stop - run_start >= min_run:
                done_outputs = columns(run_items[run_start:run_stop])  # type: ignore[arg-type]
                if done_outputs is not None:
                    index += run_stop - run_start
                    yield from done_outputs
                    continue
            for item in run_items[run_start:run_stop]:
                index += 1
                if type(item) is Batch and columnar and not ended and len(item.events) >= min_run:
                    done_outputs = columns(item.events)
                    if done_outputs is not None:
                        yield from done_outputs
                        continue
                yield from scalar(index, item)
    if not ended:
        yield from end()
