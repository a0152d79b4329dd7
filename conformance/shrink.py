"""Shrinking a failing stream: delta debugging with every round's candidates in few calls.

Hypothesis's shrinker tries one reduction at a time; against Spark each try is a
streaming query. Here a round builds every candidate reduction of the current stream
(drop a run of items or of a batch's events, unbatch, merge neighbours, move event
times towards 0 and towards each other, fewer keys, fewer fields, no arrival times),
sorts them smallest first and asks ``fails`` about them ``batch_size`` at a time (one
target call each), stopping at the first chunk with a failure: its smallest failing
candidate (the smallest failing one overall, as chunks go smallest first) is the next
stream. Rounds repeat until no candidate fails, or ``max_seconds`` pass (then the
smallest failure so far is returned: shrinking always finishes).

"Smaller" is the tuple :func:`size`: fewer events, fewer items, fewer batches, fewer
distinct keys, smaller event times, fewer fields, fewer explicit arrival times.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item, Watermark, events_of
from windtunnel.oracle.scenario import Scenario

Fails = Callable[[Sequence[Scenario]], list[bool]]
"""Whether each scenario still fails, for many scenarios in one call."""

Unit = Event | Batch | Advance | Watermark
Stream = tuple[Unit, ...]


@dataclass(frozen=True, slots=True)
class Shrunk:
    """The smallest failing scenario found, the rounds that led there and the calls made."""

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


def shrink(
    scenario: Scenario,
    fails: Fails,
    *,
    batch_size: int = 50,
    max_seconds: float = 60.0,
    clock: Callable[[], float] = time.monotonic,
) -> Shrunk:
    """The smallest failing variant of ``scenario`` (which must fail) reachable by
    candidate reductions; ``fails`` is asked at most ``batch_size`` scenarios at a time."""
    started = clock()
    current = scenario
    rounds = calls = tried = 0
    while clock() - started < max_seconds:
        here = size(current)
        seen: dict[str, Scenario] = {}
        for candidate in candidates(current):
            if size(candidate) < here:
                seen.setdefault(repr(candidate.items), candidate)
        ordered = sorted(seen.values(), key=size)
        found = None
        for start in range(0, len(ordered), batch_size):
            if clock() - started >= max_seconds:
                break
            chunk = ordered[start : start + batch_size]
            verdicts = fails(chunk)
            calls += 1
            tried += len(chunk)
            failing = [c for c, bad in zip(chunk, verdicts, strict=True) if bad]
            if failing:
                found = failing[0]
                break
        if found is None:
            return Shrunk(current, rounds, calls, tried, clock() - started >= max_seconds)
        current = found
        rounds += 1
    return Shrunk(current, rounds, calls, tried, True)


# --- candidate reductions ------------------------------------------------------------------


def candidates(scenario: Scenario) -> Iterator[Scenario]:
    """Every one-step reduction of ``scenario``'s stream (renumbered, End dropped)."""
    units: Stream = tuple(i for i in scenario.items if not isinstance(i, End))
    on = _on(scenario)
    for stream in _structural(units):
        yield _with(scenario, stream)
    for stream in _payloads(units, scenario, on):
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
    # drop runs of items: halves, quarters, ... single items (ddmin's complements)
    width = n // 2
    while width >= 1:
        for start in range(0, n, width):
            yield units[:start] + units[start + width :]
        width //= 2
    for index, unit in enumerate(units):
        before, after = units[:index], units[index + 1 :]
        if isinstance(unit, Batch):
            events = unit.events
            part = len(events) // 2
            while part >= 1 and len(events) > 1:  # runs of its events, halves down to one
                for drop in range(0, len(events), part):
                    yield (*before, Batch(events[:drop] + events[drop + part :]), *after)
                part //= 2
            yield (*before, *events, *after)  # unbatch: lone events
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


def _payloads(units: Stream, scenario: Scenario, on: str | None) -> Iterator[Stream]:
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
    protected = {*(scenario.query.group_by), *(scenario.query.aggregate_by)}
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
