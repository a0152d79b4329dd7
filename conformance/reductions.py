"""The reductions shrinking tries on a failing stream, each a smaller stream, and how big a
stream is (:func:`size`).

- :func:`keep_events`: only some events (batches keep their chosen events);
- :func:`cuts`: ddmin's cuts over the events, biggest first;
- :func:`candidates`: every other one-step reduction: unbatch, merge neighbours, drop an
  item that is no event, move event times towards 0 and towards each other, fewer keys,
  drop a payload field (never one the spec reads, nor one in ``keep_fields``), no arrival
  times.

Every reduction renumbers the events 0, 1, ... and leaves End out.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import replace
from typing import Any

from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.model.stages import Deduplicate, Where
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item, Watermark, events_of
from windtunnel.oracle.scenario import Scenario

Unit = Event | Batch | Advance | Watermark
Stream = tuple[Unit, ...]


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
    query = scenario.query
    protected = {*query.group_by, *query.aggregate_by, *keep_fields, *_stage_fields(query)}
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


def _stage_fields(query: Query) -> set[str]:
    """The top-level fields the spec's stages read (a deduplicate key, a where condition)."""
    found: set[str] = set()
    for stage in query.stages:
        paths = stage.key if isinstance(stage, Deduplicate) else (
            stage.condition.fields if isinstance(stage, Where) else ())
        found.update(p.split(".")[0] for p in paths)
    return found


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
