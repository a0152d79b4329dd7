"""The fast path of fixed (tumbling and hopping) windows; the reference is
``oracle/windows/fixed.py``, and tests/oracle/fast/test_fixed.py holds the two equal.

It takes fixed windows on an event field (not ``now()``), without gaps, with an aggregate and no
``idle_timeout`` or ``allowed_lateness``; rules ``close_at`` and ``end_of_input`` may take
any value, every other rule its default. Per key it keeps the clock and the open windows'
states by start in a dict, and the earliest close point, instead of the reference's window
objects and heaps. A bare count is an int; hopping counts whose size is a multiple of
``every`` are kept per pane ``[p, p + every)`` and summed when a window is emitted (exact:
an event goes to every still-open window over its pane, and windows closed before it
arrived were emitted already). A watermark or end of input hands the stream to the
reference (:mod:`.stream`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import repeat
from typing import Any

from windtunnel.oracle.fast.stream import Cursor, Run, fast_outputs, group_values, hand_over
from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.assignment import starts_containing
from windtunnel.oracle.model.fields import getter, hashable
from windtunnel.oracle.model.results import Emission, Output, WindowRef
from windtunnel.oracle.model.rules import Rules, close_point_offset_ms
from windtunnel.oracle.model.spec import NOW, FixedWindows, Query
from windtunnel.oracle.model.stream import Item
from windtunnel.oracle.model.timeparse import NotATime, timestamp_ms
from windtunnel.oracle.windows.driver import Driver, group_value, unusable_time_drop
from windtunnel.oracle.windows.fixed import FixedOperator
from windtunnel.oracle.windows.late_drops import late_drop

FREE_RULES: tuple[str, ...] = ("close_at", "end_of_input")
"""The rules this fast path reads; every other rule must keep its default."""


def refusal(query: Query) -> str | None:
    """Why this fast path does not take ``query`` (the common checks are the package's)."""
    window = query.window
    assert isinstance(window, FixedWindows)
    if window.on == NOW:
        return "windows on now() follow the wall clock"
    if window.idle_timeout_ms is not None:
        return "idle_timeout is set"
    if window.allowed_lateness_ms is not None:
        return "allowed_lateness is set"
    if window.hop_ms > window.size_ms:
        return "gapped windows (every > size)"
    return None


class _Key:
    """A key's clock, open windows' states by start (None per window when counted by
    pane), the earliest close point among them, and its panes' counts by start."""

    __slots__ = ("clock", "earliest_close", "panes", "value", "windows")

    def __init__(self, value: Any) -> None:
        self.value = value
        self.clock: int | None = None
        self.windows: dict[int, Any] = {}
        self.earliest_close: int | None = None
        self.panes: dict[int, int] = {}


def outputs(
    query: Query, items: Iterable[Item], rules: Rules, time_unit_ms: int = 1, start_wall_ms: int = 0
) -> Iterator[Output]:
    """The reference's outputs for a run :func:`refusal` (and the package's) takes."""
    window = query.window
    assert isinstance(window, FixedWindows) and query.aggregate is not None
    size = window.size_ms
    hop = window.hop_ms
    offset = close_point_offset_ms(rules.close_at, window.tolerance_ms)
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
    tumbling_count = hop == size and count_only
    aligned = size % hop == 0
    pane_count = count_only and hop != size and aligned

    def state_of(key: _Key, start: int) -> Any:
        """A window's aggregate state as the reference holds it."""
        if pane_count:
            panes = key.panes
            return [sum(panes.get(q, 0) for q in range(start, start + size, hop))]
        state = key.windows[start]
        return [state] if count_only else state

    def emit(key: _Key, start: int, after_seq: int, wall: int) -> Iterator[Emission]:
        """The rows of the window starting at ``start``, closed after ``after_seq``."""
        ref = WindowRef(start, start + size)
        for row in rows(state_of(key, start), start, start + size):
            yield Emission(ref, key.value, row, "close", after_seq, wall, False)

    def take(run: Run) -> Iterator[Output]:
        walls: Iterable[int] = run.walls if run.walls is not None else repeat(run.wall_ms)
        # the windows holding the previous event (starts ascending) and its pane [pane, pane
        # + hop): with size a multiple of hop every time of a pane is in the same windows
        targets = starts_containing(0, size, hop)
        pane = 0
        for event, wall in zip(run.events(), walls, strict=False):  # walls may repeat forever
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
                    key = keys[lookup] = _Key(raw_key)
            else:
                values = tuple(g(payload) for g in key_getters)
                try:
                    key = keys.get(values)
                    lookup = values
                except TypeError:
                    lookup = tuple(hashable(v) for v in values)
                    key = keys.get(lookup)
                if key is None:
                    key = keys[lookup] = _Key(group_value(values))
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
            if not (aligned and pane <= t < pane + hop):  # else: the previous event's targets
                targets = starts_containing(t, size, hop)
                pane = targets[-1]
            if tumbling_count:  # one target window, a bare count: the common case, inlined
                start = pane
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
                            yield from emit(key, s, event.seq, wall)
                            del windows[s]
                        key.earliest_close = min(windows) + span if windows else None
                continue
            if clock is not None and targets[0] + span <= clock:
                # starts ascend: the closed targets (s + span <= clock) are a prefix
                opened = starts_containing(t, size, hop, lowest=clock - span + 1)
                if not opened:
                    yield late_drop(event.seq, t, list(targets), size, offset, clock, group=key.value)
                    continue
            else:
                opened = targets
            if pane_count:
                panes = key.panes
                last = pane  # the event's pane starts at its last target's start
                n = panes.get(last)
                if n is not None:
                    panes[last] = n + 1
                else:  # a new pane: its open windows exist from now on
                    panes[last] = 1
                    for start in opened:
                        if start not in windows:
                            windows[start] = None
                            close = start + span
                            if key.earliest_close is None or close < key.earliest_close:
                                key.earliest_close = close
            else:
                get = windows.get
                for start in opened:
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
                    for s in sorted(s for s in windows if s + span <= t):
                        yield from emit(key, s, event.seq, wall)
                        del windows[s]
                    if pane_count:  # every window over these panes is closed
                        panes = key.panes
                        for q in [q for q in panes if q + span <= t]:
                            del panes[q]
                    key.earliest_close = min(windows) + span if windows else None

    def reference() -> Driver:
        """The reference operator holding every key's clock and open windows."""
        driver = Driver(query, FixedOperator, rules, time_unit_ms=time_unit_ms, start_wall_ms=cursor.wall_ms)
        operator = driver.operator
        assert isinstance(operator, FixedOperator)
        fields = len(query.group_by)
        for key in keys.values():
            group = driver.group_for(group_values(key.value, fields))
            if key.clock is not None:
                opened = [(s, state_of(key, s)) for s in sorted(key.windows)]
                operator.restore(group, key.clock, opened, driver.ctx)
        return driver

    cursor = Cursor(items, start_wall_ms)
    return fast_outputs(cursor.parts(take), hand_over(reference, cursor))
