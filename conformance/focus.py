"""The events behind a divergence: the first divergent window's own events and the events
that moved its clock, as the first cuts to try when shrinking.

The first divergent output is the one with the smallest bounds (a drop: by seq) among the
missing and unexpected outputs, else the first emission in another micro-batch. Behind an
emission are the events of its group whose event time lies in its window; behind a drop,
the dropped event. The clock movers are the events that raised the largest event time seen
so far, over the stream and within the window's group (watermarks and per-key clocks both
follow them). :func:`focus_cuts` keeps the window's events with the last mover, with every
mover, or alone, smallest first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from windtunnel.conformance.mismatch import Mismatch
from windtunnel.conformance.reductions import keep_events
from windtunnel.oracle.model.fields import getter
from windtunnel.oracle.model.results import Drop, Emission, Output
from windtunnel.oracle.model.stream import Event, events_of
from windtunnel.oracle.model.timeparse import NotATime, timestamp_ms
from windtunnel.oracle.scenario import Scenario
from windtunnel.oracle.windows.driver import group_value


def first_output(outputs: Sequence[Output]) -> Output | None:
    """The output with the smallest bounds (emissions before drops, drops by seq)."""
    def order(o: Output) -> tuple[int, int, int]:
        if isinstance(o, Drop):
            return (1, o.seq, 0)
        w = o.window
        start = w.start_ms if w.start_ms is not None else (w.start_offset or 0)
        end = w.end_ms if w.end_ms is not None else (w.end_offset or 0)
        return (0, start, end)

    return min(outputs, key=order) if outputs else None


def divergent_output(mismatch: Mismatch) -> Output | None:
    """The first divergent output of ``mismatch`` (module docstring), or None."""
    return first_output([*mismatch.missing, *mismatch.unexpected]) or (
        mismatch.timing[0].output if mismatch.timing else None)


def same_value(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def event_ms(scenario: Scenario, event: Event) -> int | None:
    """The event's time in ms (None: null, not a time, or the window runs on ``now()``)."""
    on = getattr(scenario.query.window, "on", None)
    if not isinstance(on, str) or on == "now()":
        return None
    try:
        return timestamp_ms(getter(on)(event.payload), scenario.time_unit_ms)
    except NotATime:
        return None


def group_of(scenario: Scenario, event: Event) -> Any:
    """The event's group as outputs carry it (None when ungrouped)."""
    return group_value(tuple(getter(p)(event.payload) for p in scenario.query.group_by))


def behind(scenario: Scenario, output: Output, event: Event, group: Any) -> bool:
    """Whether ``event`` (of ``group``) is one of the events behind ``output``."""
    if isinstance(output, Drop):
        return event.seq == output.seq
    if not same_value(group, output.group):
        return False
    window = output.window
    if window.start_ms is None or window.end_ms is None:
        return True
    t_ms = event_ms(scenario, event)
    if t_ms is None:
        return False
    return window.start_ms <= t_ms < window.end_ms or t_ms == window.end_ms == window.start_ms


def focus_cuts(scenario: Scenario, mismatch: Mismatch | None) -> list[Scenario]:
    """Streams of the events behind ``mismatch``'s first divergent output: with the last
    clock mover, with every mover, alone (module docstring); none when it has no output or
    its events are the whole stream."""
    output = None if mismatch is None else divergent_output(mismatch)
    if output is None:
        return []
    events = list(events_of(scenario.items))
    groups = [group_of(scenario, e) for e in events]
    window = {i for i, e in enumerate(events) if behind(scenario, output, e, groups[i])}
    if not window:
        return []
    own = output.group if isinstance(output, Emission) else groups[min(window)]
    movers: dict[str, list[int]] = {"stream": [], "group": []}
    for index, event in enumerate(events):
        t_ms = event_ms(scenario, event)
        if t_ms is None:
            continue
        for scope in ("stream", "group") if same_value(groups[index], own) else ("stream",):
            seen = movers[scope]
            if not seen or t_ms > (event_ms(scenario, events[seen[-1]]) or 0):
                seen.append(index)
    last = {m[-1] for m in movers.values() if m}
    every = {i for m in movers.values() for i in m}
    found = []
    for keep in (window | last, window | every, window):
        if len(keep) < len(events):
            found.append(keep_events(scenario, keep))
    return found
