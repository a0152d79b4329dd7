"""A fast path for count windows of the default profile, beside the reference in ``count.py``.

Eligible: :class:`CountWindows` (on ``now()``, as they always are) with an aggregate, in the
default profile. It produces exactly the reference's outputs in the same order
(tests/oracle/test_count_fast.py checks this with Hypothesis);
:func:`windtunnel.oracle.engine.stream_outputs` picks it automatically. It skips the driver's
per-event dispatch, and a count-only aggregate keeps no window state at all: the window
``[s, s + count)`` (offsets, half-open) emitted at its last offset holds ``count`` events,
and one flushed at the end of input holds ``next_offset - s`` (reported by its nominal
range ``[s, s + count)``, docs/semantics.md C1).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.fields import getter, hashable
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import NOW, CountWindows, Query
from windtunnel.oracle.model.stream import Batch, End, Event, Item, StreamChecker, Watermark
from windtunnel.oracle.windows.driver import group_value, watermark_rejected


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


def fast_outputs(query: Query, items: Iterable[Item], rules: Rules, start_wall_ms: int = 0) -> Iterator[Output]:
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
        for key in keys.values():
            following = key.next_offset
            if count_only:  # open: starts s < following with s + count > following
                first = max(0, following - count + 1)
                first += -first % hop
                for start in range(first, following, hop):
                    yield from emit(key, start, start + count, [following - start], "end_of_input", True)
            else:
                for start in sorted(key.windows):
                    yield from emit(key, start, start + count, key.windows[start], "end_of_input", True)
                key.windows.clear()

    # The stream's validity rules are StreamChecker's; the one-event case is tested inline.
    checker = StreamChecker(start_wall_ms)
    next_seq = 0
    ended = False
    for index, item in enumerate(items):
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
            if type(item) is Batch:
                events = item.events  # the wall clock moves event by event below
            else:
                wall = checker.wall_ms
                if type(item) is End:
                    ended = True
                    yield from end()
                elif type(item) is Watermark:  # CountOperator's default rejection, as the reference
                    raise watermark_rejected(
                        "tenzir", item.to_ms, "its windows have no event-time watermark"
                    )
                continue
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
    if not ended:
        yield from end()
