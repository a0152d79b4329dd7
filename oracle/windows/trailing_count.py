"""Trailing count windows (Tenzir 6.20, docs/semantics.md T5): the last ``count`` events.

Per group, events take offsets 0, 1, 2, ... in stream order (event time is not read).
An event at offset ``i`` that triggers fires the window over offsets
``[max(0, i + 1 - count), i + 1)`` (end excluded), emitted at once (reason ``close``).
Without ``every`` every event triggers; with ``every`` an event triggers once ``every``
events arrived since the previous trigger (or since the start: the ``every``-th event is
the first); with ``trigger`` only an event for which the condition holds (one the
cadence allows but the trigger refuses leaves the count running). An event in no fired
window is dropped with reason ``no_window`` (once a fired window has passed it, or at
end of input), so nothing is lost silently.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.results import Drop, Output, WindowRef
from windtunnel.oracle.model.spec import Query, TrailingCountWindows
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.windows.driver import Context, Group, Operator
from windtunnel.oracle.windows.trailing import emit_window


class CountKey:
    """Per-group state: events seen, the last ``count`` (offset, seq, payload), events
    since the last trigger, and events in no fired window yet (offset, seq)."""

    __slots__ = ("last", "seen", "since", "waiting")

    def __init__(self, count: int) -> None:
        self.seen = 0
        self.last: deque[tuple[int, int, Mapping[str, Any]]] = deque(maxlen=count)
        self.since = 0
        self.waiting: list[tuple[int, int]] = []


class TrailingCountOperator(Operator):
    """Trailing count windows (module docstring)."""

    def __init__(self, query: Query, ctx: Context) -> None:
        spec = query.window
        assert isinstance(spec, TrailingCountWindows)
        self.spec = spec
        self.aggregator = (
            None if query.aggregate is None else Aggregator(query.aggregate, query.aggregate_by)
        )

    def on_event(
        self, group: Group, event: Event, t_ms: int, ctx: Context, out: list[Output]
    ) -> None:
        spec = self.spec
        key = group.state
        if key is None:
            key = group.state = CountKey(spec.count)
        offset = key.seen
        key.seen += 1
        key.last.append((offset, event.seq, event.payload))
        key.since += 1
        fires = (spec.every is None or key.since >= spec.every) and (
            spec.trigger is None or spec.trigger.holds(event.payload)
        )
        if not fires:
            key.waiting.append((offset, event.seq))
            return
        key.since = 0
        start = max(0, key.seen - spec.count)
        for waiting_offset, seq in key.waiting:
            if waiting_offset < start:
                out.append(_no_window(seq, waiting_offset, group.value, f"the next fired window starts at offset {start}"))
        key.waiting.clear()
        ref = WindowRef(start_offset=start, end_offset=key.seen)
        members = list(key.last)
        emit_window(self.aggregator, members, ref, group.value, ctx, out)

    def on_end(self, ctx: Context, out: list[Output]) -> None:
        for group in ctx.groups.values():
            key = group.state
            if key is None:
                continue
            for offset, seq in key.waiting:
                out.append(_no_window(seq, offset, group.value, "no window fired after it"))
            key.waiting.clear()


def _no_window(seq: int, offset: int, group: Any, why: str) -> Drop:
    return Drop(seq, "no_window", (), f"the event at offset {offset} is in no fired window: {why}", group)
