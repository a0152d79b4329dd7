"""A fast path for the common fixed-window case, beside the reference in ``fixed.py``.

Eligible: fixed windows on an event field (not ``now()``), with an aggregate, no
``idle_timeout``, and the default rules for clock scope, clock movement, late test,
close order, empty windows and the idle rules. It produces exactly the reference's
outputs, in the same order (tests/oracle/test_fixed_fast.py checks this with
Hypothesis); :func:`windtunnel.oracle.engine.stream_outputs` picks it automatically.
It trades the reference's per-window objects and heaps for plain dicts per key and
one "earliest close point" per key.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.fields import getter, hashable
from windtunnel.oracle.model.results import Emission, Output, WindowRef
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import NOW, FixedWindows, Query
from windtunnel.oracle.model.stream import Batch, End, Event, Item, StreamChecker, Watermark
from windtunnel.oracle.model.timeparse import NotATime, timestamp_ms
from windtunnel.oracle.windows.driver import group_value, unusable_time_drop
from windtunnel.oracle.windows.fixed import close_offset_ms, late_drop

_FIXED_RULES = (
    "clock_scope",
    "clock_moves",
    "clock_floor",
    "late_test",
    "close_order",
    "empty_windows",
    "alignment",
    "every_greater_than_size",
)


def eligible(query: Query, rules: Rules, profile: str) -> bool:
    """True when :func:`fast_outputs` gives exactly the reference's outputs for this run."""
    window = query.window
    default = Rules()
    return (
        profile == "tenzir"
        and type(window) is FixedWindows
        and window.on != NOW
        and window.idle_timeout_ms is None
        and query.aggregate is not None
        and all(getattr(rules, name) == getattr(default, name) for name in _FIXED_RULES)
    )


class _Key:
    __slots__ = ("clock", "earliest_close", "index", "panes", "value", "windows")

    def __init__(self, index: int, value: Any, clock: int | None) -> None:
        self.index = index
        self.value = value
        self.clock = clock
        self.windows: dict[int, Any] = {}
        self.earliest_close: int | None = None
        self.panes: dict[int, int] = {}


def fast_outputs(
    query: Query, items: Iterable[Item], rules: Rules, time_unit_ms: int = 1, start_wall_ms: int = 0
) -> Iterator[Output]:
    """The reference's outputs for an :func:`eligible` run, computed faster."""
    window = query.window
    assert isinstance(window, FixedWindows) and query.aggregate is not None
    size = window.size_ms
    hop = window.hop_ms
    offset = close_offset_ms(rules.close_at, window.tolerance_ms)
    span = size + offset  # a window starting at s closes when the clock >= s + span
    aggregator = Aggregator(query.aggregate, query.aggregate_by)
    count_only = aggregator.count_only
    new_state = aggregator.new
    add = aggregator.add
    rows = aggregator.rows
    on = window.on
    time_of = getter(on)
    time_field = on if "." not in on else None  # plain fields are read with dict.get directly
    key_getters = [getter(p) for p in query.group_by]
    single = key_getters[0] if len(key_getters) == 1 else None
    key_field = query.group_by[0] if single is not None and "." not in query.group_by[0] else None
    keys: dict[Any, _Key] = {}
    wall = start_wall_ms
    after_seq: int | None = None
    floor: int | None = None  # the clock keys first seen after a watermark item start at
    flush = rules.end_of_input == "flush"
    tumbling_count = hop == size and count_only
    # Hopping counts with every dividing size: count per pane [p, p + every) instead of per
    # window; a window's count is the sum of its size/every panes when it is emitted. Exact,
    # because an event goes to every still-open window over its pane, and windows that were
    # closed before it arrived have been emitted already. ``windows`` then holds None.
    pane_count = count_only and hop != size and size % hop == 0

    def state_of(key: _Key, start: int) -> Any:
        if not pane_count:
            return key.windows[start]
        panes = key.panes
        return sum(panes.get(q, 0) for q in range(start, start + size, hop))

    def emit(key: _Key, start: int, state: Any, reason: str, partial: bool) -> Iterator[Emission]:
        ref = WindowRef(start, start + size)
        for row in rows([state] if count_only else state, start, start + size):
            yield Emission(ref, key.value, row, reason, after_seq, wall, partial)

    def forget_closed(key: _Key, clock: int) -> None:
        """After ``key``'s windows the clock reached were emitted: drop their panes."""
        windows = key.windows
        if pane_count:  # every window over these panes is closed
            panes = key.panes
            for q in [q for q in panes if q + span <= clock]:
                del panes[q]
        key.earliest_close = min(windows) + span if windows else None

    def watermark(to_ms: int) -> Iterator[Emission]:
        """Rule W1, as FixedOperator.on_watermark: every key's clock moves to the watermark
        plus tolerance; windows close in (end, start, key) order across keys."""
        nonlocal floor
        clock = to_ms + window.tolerance_ms
        floor = clock if floor is None else max(floor, clock)
        moved = [k for k in keys.values() if k.clock is None or clock > k.clock]
        for key in moved:
            key.clock = clock
        due = sorted((s + size, s, k.index) for k in moved for s in k.windows if s + span <= clock)
        by_index = {k.index: k for k in moved}
        for _, s, index in due:
            key = by_index[index]
            yield from emit(key, s, state_of(key, s), "close", False)
            del key.windows[s]
        for key in moved:
            forget_closed(key, clock)

    def end() -> Iterator[Emission]:
        if flush:
            remaining = sorted(
                ((s + size, s, k.index, k) for k in keys.values() for s in k.windows),
                key=lambda entry: entry[:3],
            )
            for _, start, _, key in remaining:
                yield from emit(key, start, state_of(key, start), "end_of_input", True)

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
                continue
        for event in events:
            at_ms = event.at_ms
            if at_ms is not None:
                wall = at_ms
            payload = event.payload
            # the group, created before the time is read (as the reference does)
            if key_field is not None or single is not None:
                raw_key: Any = payload.get(key_field) if key_field is not None else single(payload)  # type: ignore[misc]
                try:
                    key = keys.get(raw_key)
                    lookup = raw_key
                except TypeError:
                    lookup = hashable(raw_key)
                    key = keys.get(lookup)
                if key is None:
                    key = keys[lookup] = _Key(len(keys), raw_key, floor)
            else:
                values = tuple(g(payload) for g in key_getters)
                try:
                    key = keys.get(values)
                    lookup = values
                except TypeError:
                    lookup = tuple(hashable(v) for v in values)
                    key = keys.get(lookup)
                if key is None:
                    key = keys[lookup] = _Key(len(keys), group_value(values), floor)
            after_seq = event.seq
            raw = payload.get(time_field) if time_field is not None else time_of(payload)
            if type(raw) is int:
                t = raw * time_unit_ms
            else:
                try:
                    parsed = timestamp_ms(raw, time_unit_ms)
                except NotATime as exc:
                    yield unusable_time_drop(event.seq, on, raw, exc, key.value)
                    continue
                if parsed is None:
                    yield unusable_time_drop(event.seq, on, None, None, key.value)
                    continue
                t = parsed
            clock = key.clock
            windows = key.windows
            if tumbling_count:  # one target window, a bare count: the hot case, inlined
                start = t - t % size
                if clock is not None and start + span <= clock:
                    yield late_drop(event.seq, t, [start], size, offset, clock, group=key.value)
                    continue
                n = windows.get(start)
                if n is None:
                    n = 0
                    if key.earliest_close is None or start + span < key.earliest_close:
                        key.earliest_close = start + span
                windows[start] = n + 1
                if clock is None or t > clock:
                    key.clock = t
                    earliest = key.earliest_close
                    if earliest is not None and earliest <= t:
                        for s in sorted(s for s in windows if s + span <= t):
                            yield from emit(key, s, windows.pop(s), "close", False)
                        key.earliest_close = min(windows) + span if windows else None
                continue
            last = t - t % hop  # the last start whose window [s, s + size) holds t
            first = t - size + 1
            first += -first % hop  # the first such start
            if clock is not None and first + span <= clock:
                # starts ascend, so the closed targets (s + span <= clock) are a prefix
                open_from = clock - span + 1
                open_from += -open_from % hop
                if open_from > last:
                    yield late_drop(
                        event.seq, t, list(range(first, last + 1, hop)), size, offset, clock,
                        group=key.value,
                    )
                    continue
            else:
                open_from = first
            if pane_count:
                panes = key.panes
                n = panes.get(last)  # the event's pane starts at its last target's start
                if n is not None:
                    panes[last] = n + 1
                else:  # a new pane: its open windows exist from now on
                    panes[last] = 1
                    for start in range(open_from, last + 1, hop):
                        if start not in windows:
                            windows[start] = None
                            close = start + span
                            if key.earliest_close is None or close < key.earliest_close:
                                key.earliest_close = close
            else:
                get = windows.get
                for start in range(open_from, last + 1, hop):
                    state = get(start)
                    if state is None:
                        close = start + span
                        if key.earliest_close is None or close < key.earliest_close:
                            key.earliest_close = close
                        if count_only:  # state is the bare count
                            windows[start] = 1
                            continue
                        state = windows[start] = new_state()
                    elif count_only:
                        windows[start] = state + 1
                        continue
                    add(state, payload)
            if clock is None or t > clock:
                key.clock = t
                earliest = key.earliest_close
                if earliest is not None and earliest <= t:
                    due = sorted(s for s in windows if s + span <= t)
                    for s in due:
                        yield from emit(key, s, state_of(key, s), "close", False)
                        del windows[s]
                    if pane_count:  # every window over these panes is closed
                        panes = key.panes
                        for q in [q for q in panes if q + span <= t]:
                            del panes[q]
                    key.earliest_close = min(windows) + span if windows else None
    if not ended:
        yield from end()
