"""Shrinking a failing stream: delta debugging sized to what a call to the target costs.

A round lists the reductions of the current stream, big cuts first: ``focus`` (the caller's
cuts to the events behind the divergence, :mod:`windtunnel.conformance.focus`), then ddmin's
(each half alone; each quarter alone and each quarter dropped; each eighth dropped, ...;
each single event dropped), then every other reduction smallest first (unbatch, merge
neighbours, move event times towards 0 and towards each other, fewer keys, fewer fields,
no arrival times). Fields in ``keep_fields`` (those the target reads) stay in every
event. ``fails`` is asked about the candidates in order, a chunk per call, stopping at
the first chunk with a failure: its smallest failing candidate is the next stream.

Chunks are sized to the target's cost: the first holds one candidate, and each next one
twice as many as the last while a call stays within ``call_seconds`` (half as many after a
longer call). No call starts that cannot finish within ``max_seconds`` at the measured cost
(:class:`Pace`; ``first_cost_s`` before any call): the chunk is cut to what fits, and
shrinking stops when not even one candidate does. Rounds repeat until
no candidate fails; the smallest failure so far is returned, so shrinking always finishes.
A stream asked about once is not asked again.

"Smaller" is the tuple :func:`size`: fewer events, fewer items, fewer batches, fewer
distinct keys, smaller event times, fewer fields, fewer explicit arrival times.
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item, Watermark, events_of
from windtunnel.oracle.scenario import Scenario

Fails = Callable[[Sequence[Scenario]], list[bool]]
"""Whether each scenario still fails, for many scenarios in one call."""

Focus = Callable[[Scenario], Sequence[Scenario]]
"""The big cuts to try first on a failing stream (each a smaller stream)."""

Unit = Event | Batch | Advance | Watermark
Stream = tuple[Unit, ...]

CALL_SECONDS = 4.0
"""How long a call may take before chunks stop growing (seconds)."""


@dataclass(frozen=True, slots=True)
class Shrunk:
    """The smallest failing scenario found, the rounds that led there, the calls made and
    candidates asked about, and whether the time budget ended it."""

    scenario: Scenario
    rounds: int
    calls: int
    candidates: int
    timed_out: bool


def size(scenario: Scenario) -> tuple[int, ...]:
    """How big a stream is, compared as a tuple (smaller first)."""
    events = list(events_of(scenario.items))
    times = [_time(e.payload, _on(scenario)) for e in events]
    keys = {json.dumps([_get(e.payload, g) for g in scenario.query.group_by], default=str)
            for e in events}
    return (
        len(events),
        len(scenario.items),
        sum(1 for i in scenario.items if isinstance(i, Batch)),
        len(keys),
        sum(abs(t) for t in times if isinstance(t, int)),
        sum(_leaves(e.payload) for e in events),
        sum(1 for e in events if e.at_ms is not None),
        sum(1 for i in scenario.items if isinstance(i, Advance)),
    )


MARGIN = 1.25
"""A call is expected to take up to this much longer than the calls measured so far."""

RECENT = 3
"""Calls whose costs estimate the next one."""


class Pace:
    """Chunk sizes from the measured cost of calls (see the module docstring): after a call
    within ``call_seconds`` the next may hold twice as many candidates, after a longer one
    half as many. A call of ``n`` candidates is expected to take :data:`MARGIN` times the
    larger of the shortest recent call (what any call costs) and ``n`` times the dearest
    recent candidate; a chunk is cut to what is expected to fit the time left."""

    def __init__(self, call_seconds: float = CALL_SECONDS, first_cost_s: float | None = None,
                 max_chunk: int | None = None) -> None:
        self.call_seconds = call_seconds
        self.max_chunk = max_chunk
        self.chunk = 1
        self._recent: list[tuple[int, float]] = [] if first_cost_s is None else [
            (1, first_cost_s)]

    def expected_s(self, candidates: int) -> float | None:
        """Seconds a call of ``candidates`` is expected to take (None: nothing measured)."""
        if not self._recent:
            return None
        floor = min(s for _, s in self._recent)
        per = max(s / n for n, s in self._recent)
        return MARGIN * max(floor, per * candidates)

    def next_chunk(self, left_s: float) -> int:
        """Candidates for the next call with ``left_s`` seconds left (0: none fits)."""
        chunk = self.chunk if left_s > 0 else 0
        while chunk > 0 and (self.expected_s(chunk) or 0.0) > left_s:
            chunk -= 1
        return chunk

    def measured(self, candidates: int, seconds: float) -> None:
        """A call of ``candidates`` took ``seconds``."""
        self._recent = [*self._recent, (candidates, seconds)][-RECENT:]
        chunk = 2 * candidates if seconds <= self.call_seconds else max(1, candidates // 2)
        self.chunk = chunk if self.max_chunk is None else min(chunk, self.max_chunk)


def shrink(
    scenario: Scenario,
    fails: Fails,
    *,
    max_seconds: float = 60.0,
    clock: Callable[[], float] = time.monotonic,
    call_seconds: float = CALL_SECONDS,
    first_cost_s: float | None = None,
    max_chunk: int | None = None,
    keep_fields: Collection[str] = (),
    focus: Focus | None = None,
) -> Shrunk:
    """The smallest failing variant of ``scenario`` (which must fail) reachable by
    candidate reductions (module docstring); ``max_chunk`` caps the candidates per call."""
    started = clock()
    pace = Pace(call_seconds, first_cost_s, max_chunk)
    current = scenario
    rounds = calls = tried = 0
    asked: set[str] = {repr(scenario.items)}
    while True:
        ordered = [c for c in _ordered(current, keep_fields, focus) if repr(c.items) not in asked]
        found = None
        index = 0
        while index < len(ordered):
            chunk_size = pace.next_chunk(max_seconds - (clock() - started))
            if chunk_size == 0:
                return Shrunk(current, rounds, calls, tried, True)
            chunk = ordered[index : index + chunk_size]
            index += len(chunk)
            before = clock()
            verdicts = fails(chunk)
            pace.measured(len(chunk), clock() - before)
            calls += 1
            tried += len(chunk)
            asked.update(repr(c.items) for c in chunk)
            failing = [c for c, bad in zip(chunk, verdicts, strict=True) if bad]
            if failing:
                found = min(failing, key=size)
                break
        if found is None:
            return Shrunk(current, rounds, calls, tried, False)
        current = found
        rounds += 1


def _ordered(current: Scenario, keep_fields: Collection[str], focus: Focus | None) -> list[Scenario]:
    """The round's candidates (module docstring), each smaller than ``current``, once."""
    here = size(current)
    seen: dict[str, Scenario] = {}
    first = [*(focus(current) if focus is not None else ()), *cuts(current)]
    rest = sorted(candidates(current, keep_fields), key=size)
    for candidate in (*first, *rest):
        if size(candidate) < here:
            seen.setdefault(repr(candidate.items), candidate)
    return list(seen.values())


# --- candidate reductions ------------------------------------------------------------------


def keep_events(scenario: Scenario, positions: Collection[int]) -> Scenario:
    """``scenario`` with only the events at ``positions`` (0, 1, ... in stream order; a
    batch keeps its chosen events, an emptied batch goes), renumbered, End dropped."""
    units: list[Unit] = []
    position = 0
    for item in scenario.items:
        if isinstance(item, Event):
            if position in positions:
                units.append(item)
            position += 1
        elif isinstance(item, Batch):
            kept = tuple(e for i, e in enumerate(item.events, start=position) if i in positions)
            position += len(item.events)
            if kept:
                units.append(Batch(kept))
        elif not isinstance(item, End):
            units.append(item)
    return _with(scenario, units)


def cuts(scenario: Scenario) -> Iterator[Scenario]:
    """ddmin's cuts over the events, biggest first: each half alone; each quarter alone and
    each quarter dropped; each eighth dropped, and so on down to each single event dropped."""
    count = sum(1 for _ in events_of(scenario.items))
    everything = range(count)
    parts = 2
    while count > 1:
        size_of = count / parts
        pieces = [set(range(round(i * size_of), round((i + 1) * size_of))) for i in range(parts)]
        pieces = [p for p in pieces if p]
        if parts <= 4:
            for piece in pieces:  # alone
                yield keep_events(scenario, piece)
        if parts > 2:
            for piece in pieces:  # dropped
                yield keep_events(scenario, [i for i in everything if i not in piece])
        if parts >= count:
            return
        parts = min(2 * parts, count)


def candidates(scenario: Scenario, keep_fields: Collection[str] = ()) -> Iterator[Scenario]:
    """Every one-step reduction of ``scenario``'s stream other than dropping events
    (renumbered, End dropped); fields in ``keep_fields`` are never removed."""
    units: Stream = tuple(i for i in scenario.items if not isinstance(i, End))
    on = _on(scenario)
    for stream in _structural(units):
        yield _with(scenario, stream)
    for stream in _payloads(units, scenario, on, keep_fields):
        yield _with(scenario, stream)


def _with(scenario: Scenario, units: Sequence[Unit]) -> Scenario:
    """``scenario`` with ``units`` as its stream, events renumbered 0, 1, ..."""
    seq = 0
    items: list[Item] = []
    for unit in units:
        if isinstance(unit, Event):
            items.append(replace(unit, seq=seq))
            seq += 1
        elif isinstance(unit, Batch):
            if not unit.events:
                continue
            renumbered = []
            for event in unit.events:
                renumbered.append(replace(event, seq=seq))
                seq += 1
            items.append(Batch(tuple(renumbered)))
        else:
            items.append(unit)
    return replace(scenario, items=tuple(items))


def _structural(units: Stream) -> Iterator[Stream]:
    n = len(units)
    for index, unit in enumerate(units):
        before, after = units[:index], units[index + 1 :]
        if isinstance(unit, Advance | Watermark):
            yield (*before, *after)  # an item that is no event
        if isinstance(unit, Batch):
            yield (*before, *unit.events, *after)  # unbatch: lone events
        if index + 1 < n and isinstance(unit, (Event, Batch)):
            following = units[index + 1]
            if isinstance(following, (Event, Batch)):
                merged = Batch((*_events(unit), *_events(following)))
                yield (*before, merged, *units[index + 2 :])


def _events(unit: Unit) -> tuple[Event, ...]:
    if isinstance(unit, Event):
        return (unit,)
    if isinstance(unit, Batch):
        return unit.events
    return ()


def _map(units: Stream, fn: Callable[[int, Event], Event]) -> Stream:
    """``units`` with ``fn(position, event)`` applied to every event (position in stream)."""
    out: list[Unit] = []
    position = 0
    for unit in units:
        if isinstance(unit, Event):
            out.append(fn(position, unit))
            position += 1
        elif isinstance(unit, Batch):
            events = []
            for event in unit.events:
                events.append(fn(position, event))
                position += 1
            out.append(Batch(tuple(events)))
        else:
            out.append(unit)
    return tuple(out)


EventFn = Callable[[Event], Event]


def _everywhere(units: Stream, fn: EventFn) -> Stream:
    """``fn`` applied to every event."""
    return _map(units, lambda _, event: fn(event))


def _only_at(units: Stream, index: int, fn: EventFn) -> Stream:
    """``fn`` applied to the ``index``-th event (stream order) only."""
    return _map(units, lambda position, event: fn(event) if position == index else event)


def _no_arrival(event: Event) -> Event:
    return replace(event, at_ms=None)


def _payloads(units: Stream, scenario: Scenario, on: str | None,
              keep_fields: Collection[str]) -> Iterator[Stream]:
    events = [e for u in units for e in _events(u)]
    times = [_time(e.payload, on) for e in events]
    known = [t for t in times if isinstance(t, int)]
    step = _step(scenario)
    if on is not None and known:
        lowest = min(known)
        for shift in dict.fromkeys([lowest, lowest - lowest % step]):
            if shift > 0:
                yield _everywhere(units, functools.partial(_shift_time, on=on, delta=-shift))
        yield _everywhere(units, functools.partial(_halve_time, on=on))
        for index, t in enumerate(times):
            if not isinstance(t, int) or t == 0:
                continue
            targets = {0, t // 2, t - t % step}
            previous = times[index - 1] if index > 0 else None
            if isinstance(previous, int):
                targets.add(previous)
            for target in sorted(targets):
                if abs(target) < abs(t):
                    yield _only_at(
                        units, index, functools.partial(_replace_field, path=on, value=target)
                    )
    for field in scenario.query.group_by:
        values = [_get(e.payload, field) for e in events]
        if values and len(set(map(repr, values))) > 1:
            first_key = functools.partial(_replace_field, path=field, value=values[0])
            yield _everywhere(units, first_key)
            for index in range(len(events)):
                if repr(values[index]) != repr(values[0]):
                    yield _only_at(units, index, first_key)
    protected = {*(scenario.query.group_by), *(scenario.query.aggregate_by), *keep_fields}
    if on is not None:
        protected.add(on)
    names = {k for e in events for k in e.payload if k not in protected}
    for name in sorted(names):
        yield _everywhere(units, functools.partial(_drop_field, name=name))
    if any(e.at_ms is not None for e in events):
        yield _everywhere(units, _no_arrival)
        for index, event in enumerate(events):
            if event.at_ms is not None:
                yield _only_at(units, index, _no_arrival)


def _on(scenario: Scenario) -> str | None:
    on = getattr(scenario.query.window, "on", None)
    return on if isinstance(on, str) and on != "now()" else None


def _step(scenario: Scenario) -> int:
    window = scenario.query.window
    span_ms = getattr(window, "every_ms", None) or getattr(window, "size_ms", None) or 0
    return max(1, span_ms // scenario.time_unit_ms)


def _get(payload: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(payload, dict):
            return None
        payload = payload.get(part)
    return payload


def _time(payload: Any, on: str | None) -> Any:
    if on is None:
        return None
    value = _get(payload, on)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _replace_field(event: Event, path: str, value: Any) -> Event:
    payload = _copy(event.payload)
    node = payload
    *parents, last = path.split(".")
    for part in parents:
        if not isinstance(node.get(part), dict):
            return event
        node = node[part]
    node[last] = value
    return replace(event, payload=payload)


def _copy(value: Any) -> Any:
    """A copy of nested mappings (values themselves shared)."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {k: _copy(v) for k, v in value.items()}
    return value


def _drop_field(event: Event, name: str) -> Event:
    return replace(event, payload={k: v for k, v in event.payload.items() if k != name})


def _shift_time(event: Event, on: str, delta: int) -> Event:
    t = _time(event.payload, on)
    return event if t is None else _replace_field(event, on, t + delta)


def _halve_time(event: Event, on: str) -> Event:
    t = _time(event.payload, on)
    return event if t is None else _replace_field(event, on, t // 2)


def _leaves(payload: Any) -> int:
    if isinstance(payload, dict):
        return sum(_leaves(v) for v in payload.values())
    return 1
