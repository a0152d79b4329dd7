"""Watermark items and processing time for generated ``beam`` streams.

The generic streams (:mod:`windtunnel.conformance.generate`) have disorder, batches (Beam's
bundles) and several keys; a ``beam`` spec also needs its watermark moved while data still
arrives (holds, jumps ahead that make later data late) and, for processing-time triggers,
a wall clock that moves. :func:`with_beam_time` adds, after any item, a ``{watermark: T}``
item (``T`` near the largest event time so far: behind it, at it or up to two spans ahead;
never needed to go forward, a lower ``T`` is ignored) and an ``{advance: d}`` of up to two
processing-time delays. Shrinks towards no added items.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from windtunnel.oracle.model.fields import getter
from windtunnel.oracle.model.stream import Advance, Batch, Event, Item, Watermark
from windtunnel.oracle.model.timeparse import NotATime, timestamp_ms
from windtunnel.oracle.profiles.beam.operator import beam_windows
from windtunnel.oracle.profiles.beam.triggers import AfterProcessingTime, walk
from windtunnel.oracle.scenario import Scenario

Items = tuple[Item, ...]


def with_beam_time(spec: Scenario, streams: st.SearchStrategy[Items]) -> st.SearchStrategy[Items]:
    """``streams`` with watermark items and (for processing-time triggers) advances added."""
    window = beam_windows(spec.query.window)
    span = window.size_ms or window.gap_ms or 10 * spec.time_unit_ms
    delays = [t.delay_ms for t in walk(window.trigger) if isinstance(t, AfterProcessingTime)]
    step = 2 * max(delays) if delays else 0
    time_of = getter(window.on)

    @st.composite
    def build(draw: st.DrawFn) -> Items:
        items = draw(streams)
        out: list[Item] = []
        wall = spec.start_wall_ms
        top: int | None = None
        for item in items:
            if isinstance(item, Event):
                item = _not_before(item, wall)
            elif isinstance(item, Batch):
                item = Batch(tuple(_not_before(e, wall) for e in item.events))
            elif isinstance(item, Advance):
                item = Advance(max(item.to_ms, wall))
                wall = item.to_ms
            out.append(item)
            for event in (item,) if isinstance(item, Event) else (
                    item.events if isinstance(item, Batch) else ()):
                wall = max(wall, event.at_ms or wall)
                try:
                    t_ms = timestamp_ms(time_of(event.payload), spec.time_unit_ms)
                except NotATime:
                    t_ms = None
                if t_ms is not None:
                    top = t_ms if top is None else max(top, t_ms)
            if top is not None and draw(st.integers(0, 3)) == 0:
                out.append(Watermark(top + draw(st.integers(-span, 2 * span))))
            if step and draw(st.integers(0, 2)) == 0:
                wall += draw(st.integers(1, step))
                out.append(Advance(wall))
        return tuple(out)

    return build()


def _not_before(event: Event, wall_ms: int) -> Event:
    """``event`` arriving no earlier than ``wall_ms`` (an added advance moved the clock)."""
    if event.at_ms is None or event.at_ms >= wall_ms:
        return event
    return replace(event, at_ms=wall_ms)
