"""A fast path for the common session case, beside the reference in ``session_reorder.py``.

Eligible: session windows on an event field (not ``now()``) in the default profile, with
an aggregate, no ``max_duration``, ``max_events`` or ``idle_timeout``, and the default
rules (``end_of_input`` and ``session_gap`` may differ). It produces exactly the
reference's outputs in the same order (tests/oracle/test_session_fast.py checks this
with Hypothesis); :func:`windtunnel.oracle.engine.stream_outputs` picks it automatically.

The semantics are the reference's (Tenzir 6.20, rule ``session_order: reorder``): per key,
an event is late when its time is before the watermark (clock - tolerance) or before the
last event released from the reorder buffer; buffered events up to the watermark are
released in time order (ties in stream order) into the key's one open session
``[first, last]`` (both ends included), which closes when an event is more than ``gap``
past ``last`` (exactly ``gap`` joins under ``session_gap: inclusive``) or the watermark
passes ``last + gap``. It trades the driver's per-event dispatch and the heap for a
sorted list per key (in-order events append) and, with a count-only aggregate, keeps a
count instead of the session's events.

With a count-only aggregate on a plain time field and one plain group field or none, the
stream is taken in chunks: a chunk of plain events numbered on, without arrival times, on
hashable keys with integer times goes through :mod:`.session_columns` (the same state,
column by column); every other chunk (watermarks, batches, end of input, arrival times,
null or text times, unhashable keys, a broken stream) through the per-event loop below.
"""

from __future__ import annotations

import dataclasses
import struct
from bisect import insort
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.fields import getter, hashable
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef
from windtunnel.oracle.model.rules import Rules, close_point_offset_ms
from windtunnel.oracle.model.spec import NOW, Query, SessionWindows
from windtunnel.oracle.model.stream import Batch, End, Event, Item, StreamChecker, Watermark
from windtunnel.oracle.model.timeparse import NotATime, timestamp_ms
from windtunnel.oracle.windows.columns import (
    CHUNK,
    Chunk,
    KeyTable,
    chunks,
    emission,
    plain_fields,
    plain_payloads,
    window_ref,
)
from windtunnel.oracle.windows.driver import group_value, unusable_time_drop
from windtunnel.oracle.windows.session_columns import count_rows, session_chunk

_MIN_RUN = 16
"""Shorter chunks take the per-event loop (the columns' setup costs more)."""
_TIME_LIMIT = 1 << 62



@lru_cache(maxsize=8)
def _int64s(n: int) -> struct.Struct:
    return struct.Struct(f"={n}q")


_FREE_RULES = {"end_of_input": "flush", "session_gap": "inclusive"}
"""Rules the fast path reads itself; every other rule must keep its default value."""


def eligible(query: Query, rules: Rules, profile: str) -> bool:
    """True when :func:`fast_outputs` gives exactly the reference's outputs for this run."""
    window = query.window
    return (
        profile == "tenzir"
        and type(window) is SessionWindows
        and window.on != NOW
        and window.max_duration_ms is None
        and window.max_events is None
        and window.idle_timeout_ms is None
        and query.aggregate is not None
        and dataclasses.replace(rules, **_FREE_RULES) == Rules()
    )


_Entry = tuple[int, int, Mapping[str, Any] | None]
"""A buffered event: time, seq and payload (None in a count-only run's columnar path)."""


def _order(entry: _Entry) -> tuple[int, int]:
    """A buffered event's release order: time, then stream order."""
    return entry[0], entry[1]


class _Key:
    """A key's clock, reorder buffer ``(t, seq, payload)`` sorted by (t, seq) (the columnar
    path, count-only, buffers None for the payload), the last
    released time, and the open session: first, last and its state (None: no session)."""

    __slots__ = ("buffer", "clock", "first", "index", "last", "live", "released", "state", "value")

    def __init__(self, index: int, value: Any) -> None:
        self.index = index
        self.value = value
        self.live = False  # True from the first event with a usable time
        self.clock: int | None = None
        self.buffer: list[_Entry] = []
        self.released: int | None = None
        self.first = 0
        self.last = 0
        self.state: Any = None


def fast_outputs(
    query: Query,
    items: Iterable[Item],
    rules: Rules,
    time_unit_ms: int = 1,
    start_wall_ms: int = 0,
    *,
    chunk_size: int = CHUNK,
    min_run: int = _MIN_RUN,
) -> Iterator[Output]:
    """The reference's outputs for an :func:`eligible` run, computed faster.

    Raises InvalidStream for a malformed stream, as the reference does. The outputs of
    each part (a chunk, an item) are chained in C: a consumer's ``next`` resumes one
    Python frame, the part's, not also a generator delegating to it.
    """
    return chain.from_iterable(
        _parts(query, items, rules, time_unit_ms, start_wall_ms, chunk_size, min_run)
    )


def _parts(
    query: Query,
    items: Iterable[Item],
    rules: Rules,
    time_unit_ms: int,
    start_wall_ms: int,
    chunk_size: int,
    min_run: int,
) -> Iterator[Iterable[Output]]:
    """:func:`fast_outputs`' outputs part by part, each part consumed before the next is made."""
    window = query.window
    assert isinstance(window, SessionWindows) and query.aggregate is not None
    gap = window.gap_ms
    # a session [first, last] takes an event at t while t <= last + reach (rule session_gap)
    reach = gap if rules.session_gap == "inclusive" else gap - 1
    # and closes once the watermark >= last + span (rule session_close_at)
    span = gap + close_point_offset_ms(rules.session_close_at, 0)
    tolerance = window.tolerance_ms
    aggregator = Aggregator(query.aggregate, query.aggregate_by)
    count_only = aggregator.count_only
    new_state = aggregator.new
    add = aggregator.add
    rows = aggregator.rows
    on = window.on
    time_of = getter(on)
    time_field = on if "." not in on else None
    key_getters = [getter(p) for p in query.group_by]
    key_field = query.group_by[0] if len(query.group_by) == 1 and "." not in query.group_by[0] else None
    keys: dict[Any, _Key] = {}  # in first-seen order, as the driver's groups
    wall = start_wall_ms
    after_seq: int | None = None
    floor: int | None = None  # the clock keys first seen after a watermark item start at
    flush = rules.end_of_input == "flush"

    def close(key: _Key, reason: str) -> Iterator[Emission]:
        state = key.state
        key.state = None
        ref = window_ref(key.first, key.last, None, None)  # WindowRef(first, last), built faster
        for row in rows([state] if count_only else state, key.first, key.last):
            yield emission(ref, key.value, dict(row), reason, after_seq, wall, reason != "close")

    def release(key: _Key, cutoff: int | None) -> Iterator[Emission]:
        """Admit buffered events up to ``cutoff`` (all when None), in time order."""
        buffer = key.buffer
        taken = 0
        for t, _, payload in buffer:
            if cutoff is not None and t > cutoff:
                break
            taken += 1
            if key.state is not None and t > key.last + reach:
                yield from close(key, "close")
            if key.state is None:
                key.first = t
                key.state = 0 if count_only else new_state()
            if count_only:
                key.state += 1
            else:
                add(key.state, payload)  # type: ignore[arg-type]  # not count-only: a payload
            key.last = t  # (inlined in the event loop below: keep the two alike)
        if taken:
            key.released = buffer[taken - 1][0]
            del buffer[:taken]

    def late(seq: int, t: int, key: _Key, why: str) -> Drop:
        return Drop(
            seq, "late", (WindowRef(t, t),),
            f"event time {t} is late for sessions: {why}; raise tolerance to keep it",
            key.value,
        )

    def end() -> list[Emission]:
        """Every key's buffer released and session flushed, in window-time order across
        keys: by end, start, then key (first seen first); a key's own keep their order."""
        if not flush:
            return []
        tagged = []
        for key in keys.values():
            if key.live:
                flushed = list(release(key, None))
                if key.state is not None:
                    flushed += close(key, "end_of_input")
                for position, emission in enumerate(flushed):
                    window = emission.window
                    tagged.append(((window.end_ms, window.start_ms, key.index, position), emission))
        tagged.sort(key=lambda entry: entry[0])
        return [emission for _, emission in tagged]

    def watermark(to_ms: int) -> Iterator[Emission]:
        """Rule W1, as the reference: every key's clock moves to ``to_ms + tolerance``
        (never back), keys first seen later start there; releases up to ``to_ms`` and closes."""
        nonlocal floor
        clock = to_ms + tolerance
        if floor is None or clock > floor:
            floor = clock
        for key in keys.values():
            if not key.live or (key.clock is not None and key.clock >= clock):
                continue
            key.clock = clock
            if key.buffer and key.buffer[0][0] <= to_ms:
                yield from release(key, to_ms)
            if key.state is not None and to_ms >= key.last + span:
                yield from close(key, "close")

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
                elif isinstance(item, Watermark):
                    yield from watermark(item.to_ms)
                return
        for event in events:
            at_ms = event.at_ms
            if at_ms is not None:
                wall = at_ms
            payload = event.payload
            # the group, created before the time is read (as the driver does)
            if key_field is not None:
                raw_key: Any = payload.get(key_field)
                try:
                    key = keys.get(raw_key)
                    lookup: Any = raw_key
                except TypeError:  # a list or mapping as the key value
                    lookup = hashable(raw_key)
                    key = keys.get(lookup)
                if key is None:
                    key = keys[lookup] = _Key(len(keys), raw_key)
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
                    key = keys[lookup] = _Key(len(keys), group_value(values))
                    table.add(lookup, key)
            seq = event.seq
            after_seq = seq
            raw = payload.get(time_field) if time_field is not None else time_of(payload)
            if type(raw) is int:
                t = raw * time_unit_ms
            else:
                try:
                    parsed = timestamp_ms(raw, time_unit_ms)
                except NotATime as exc:
                    yield unusable_time_drop(seq, on, raw, exc, key.value)
                    continue
                if parsed is None:
                    yield unusable_time_drop(seq, on, None, None, key.value)
                    continue
                t = parsed
            if not key.live:  # its clock starts at the last injected watermark's, if any
                key.live = True
                key.clock = floor
            clock = key.clock
            if clock is None:
                key.clock = clock = t
            elif t < clock - tolerance:
                yield late(seq, t, key, f"the watermark (clock - tolerance) is {clock - tolerance}")
                continue
            elif key.released is not None and t < key.released:
                yield late(
                    seq, t, key, f"an event at {key.released} already left the reorder buffer"
                )
                continue
            elif t > clock:
                key.clock = clock = t
            buffer = key.buffer
            cutoff = clock - tolerance
            entry: _Entry = (t, seq, payload)
            if not buffer and t <= cutoff:  # straight through the buffer (in order, no tolerance)
                due: Sequence[_Entry] = (entry,)
            else:
                if not buffer or t >= buffer[-1][0]:  # in order: ties keep stream order
                    buffer.append(entry)
                else:
                    insort(buffer, entry, key=_order)
                due = buffer if buffer[0][0] <= cutoff else ()
            if due:  # release up to the watermark, in time order (release() inlined)
                taken = 0
                for entry in due:
                    u = entry[0]
                    if u > cutoff:
                        break
                    taken += 1
                    state = key.state
                    if state is not None and u > key.last + reach:
                        yield from close(key, "close")
                        state = None
                    if state is None:
                        key.first = u
                        state = key.state = 0 if count_only else new_state()
                    if count_only:
                        key.state = state + 1
                    else:
                        add(state, entry[2])  # type: ignore[arg-type]  # not count-only: a payload
                    key.last = u
                key.released = due[taken - 1][0]
                if due is buffer:
                    del buffer[:taken]
            if key.state is not None and cutoff >= key.last + span:
                yield from close(key, "close")

    def new_key(lookup: Any) -> _Key:
        key = keys[lookup] = _Key(len(keys), lookup if key_field is not None else group_value(()))
        return key

    table = KeyTable(key_field, new_key)
    columnar = (
        count_only and time_field is not None and (key_field is not None or not query.group_by)
    )
    chunk_rows = count_rows([(a.name, a.function) for a in query.aggregate])

    def columns(chunk: Chunk) -> Iterator[Output] | None:
        """A chunk of plain events on known keys with integer times, column by column
        (None: the per-event loop must take it)."""
        nonlocal after_seq, next_seq
        assert time_field is not None
        # one pass over the items: seqs, arrival times, keys and event times
        fields = plain_fields(chunk.iterate(), next_seq, key_field, time_field) if key_field is not None else None
        if fields is not None:
            raw_keys, raw_times = fields
            codes = table.value_codes(raw_keys)  # new keys: first seen first
            del raw_keys
        else:  # no group field, or a field missing somewhere: the payloads, then by map
            payloads = plain_payloads(chunk.iterate(), next_seq)
            if payloads is None:
                return None
            try:
                raw_times = list(map(itemgetter(time_field), payloads))
            except KeyError:
                return None
            codes = table.payload_codes(payloads)  # a missing group field: the key None
            del payloads
        if codes is None:
            return None
        if set(map(type, raw_times)) != {int}:
            return None
        try:  # one struct call (about twice as fast as np.fromiter)
            times = np.frombuffer(_int64s(len(raw_times)).pack(*raw_times), dtype=np.int64)
        except struct.error:  # beyond int64
            return None
        del raw_times
        if time_unit_ms != 1:
            if max(-int(times.min()), int(times.max())) * time_unit_ms >= _TIME_LIMIT:
                return None
            times = times * time_unit_ms
        outputs = session_chunk(
            table.objects, codes, times, floor=floor, tolerance=tolerance, reach=reach,
            span=span, first_seq=next_seq, wall_ms=wall, rows=chunk_rows,
        )
        if outputs is not None:
            next_seq += len(codes)
            after_seq = next_seq - 1
        return outputs

    index = -1
    for chunk in chunks(items, chunk_size):
        if columnar and not ended and len(chunk) >= min_run:
            outputs = columns(chunk)
            if outputs is not None:
                index += len(chunk)
                chunk.release()
                yield outputs
                continue
        for item in chunk.items():
            index += 1
            yield scalar(index, item)
    if not ended:
        yield end()
