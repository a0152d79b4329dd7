"""Trailing windows as Tenzir 6.20 runs them (rule ``trailing_late: clock``, the default).

Per key (docs/semantics.md T3, T4):

- an event behind its key's watermark (the largest event time seen minus ``tolerance``)
  or behind the last event released is late and dropped; the rest wait in a reorder
  buffer and are released in time order (ties in stream order) once at or behind the
  watermark (with tolerance 0 at once: an event behind the clock is late);
- every event is retained while it is within ``size`` of the newest one;
- an event at ``t`` fires the window ``[t - size, t]`` (rule ``trailing_ends``) over the
  retained events up to and including it, in time order. Without ``every`` every event
  fires; with ``every`` (rule ``trailing_cadence: from_first``) the group's first event
  starts the cadence without firing, and the next event at least ``every`` after the
  last cadence start fires and starts the next one; with ``trigger`` only an event for
  which the condition holds fires (an event the cadence allows but the trigger refuses
  does not restart the cadence);
- at end of input the buffer is released (rule ``end_of_input: flush``) or its events
  are dropped with ``no_window`` (``discard``);
- an event that ends up in no fired window is dropped with reason ``no_window`` (when a
  fired window has left it behind, or at end of input), so nothing is lost silently.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.results import Drop, Output, WindowRef
from windtunnel.oracle.model.spec import Query, TrailingCountWindows, TrailingWindows
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.windows.driver import Context, Group, Operator
from windtunnel.oracle.windows.reorder import ReorderBuffer
from windtunnel.oracle.windows.trailing import TrailingOperator, emit_window
from windtunnel.oracle.windows.trailing_count import TrailingCountOperator


class OrderedKey:
    """Per-key state: the reorder buffer (with the key's clock), retained events ``(t, seq,
    payload)``, the cadence origin and the events not yet in any fired window."""

    __slots__ = ("buffer", "origin_ms", "retained", "waiting")

    def __init__(self) -> None:
        self.buffer = ReorderBuffer()
        self.origin_ms: int | None = None
        self.retained: deque[tuple[int, int, Mapping[str, Any]]] = deque()
        self.waiting: list[tuple[int, int]] = []


class OrderedTrailingOperator(Operator):
    """Trailing windows over in-order events (module docstring)."""

    def __init__(self, query: Query, ctx: Context) -> None:
        spec = query.window
        assert isinstance(spec, TrailingWindows)
        self.size_ms = spec.size_ms
        self.every_ms = spec.every_ms
        self.closed = ctx.rules.trailing_ends == "closed"
        self.cadence = ctx.rules.trailing_cadence
        self.tolerance_ms = spec.tolerance_ms
        self.trigger = spec.trigger
        self.discard = ctx.rules.end_of_input == "discard"
        self.aggregator = (
            None if query.aggregate is None else Aggregator(query.aggregate, query.aggregate_by)
        )

    def on_event(
        self, group: Group, event: Event, t_ms: int, ctx: Context, out: list[Output]
    ) -> None:
        key = group.state
        if key is None:
            key = group.state = OrderedKey()
        buffer = key.buffer
        if buffer.behind(t_ms, self.tolerance_ms) is not None:
            watermark, released = buffer.watermark(self.tolerance_ms), buffer.released_ms
            behind = max(b for b in (watermark, released) if b is not None)
            out.append(
                Drop(
                    event.seq, "late", (), f"event time {t_ms} is behind its key's watermark "
                    f"{behind} (clock {buffer.clock_ms} - tolerance {self.tolerance_ms}, or the "
                    "last released event): trailing windows take events in time order; raise "
                    "tolerance to keep it",
                    group.value,
                )
            )
            return
        buffer.add(t_ms, event.seq, event.payload)
        self._release(group, key, buffer.watermark(self.tolerance_ms), ctx, out)

    def _release(
        self, group: Group, key: OrderedKey, cutoff: int | None, ctx: Context, out: list[Output]
    ) -> None:
        """Fire buffered events up to ``cutoff`` (all when None), in time order."""
        for t_ms, seq, payload in key.buffer.release(cutoff):
            self._in_order(group, key, t_ms, seq, payload, ctx, out)

    def _in_order(
        self,
        group: Group,
        key: OrderedKey,
        t_ms: int,
        seq: int,
        payload: Mapping[str, Any],
        ctx: Context,
        out: list[Output],
    ) -> None:
        """One released event: retained, and fires its window when it triggers."""
        start_ms = t_ms - self.size_ms
        retained = key.retained
        while retained and retained[0][0] < start_ms:
            retained.popleft()
        retained.append((t_ms, seq, payload))
        if not self._fires(key, t_ms, payload):
            key.waiting.append((t_ms, seq))
            return
        members = [e for e in retained if self.closed or e[0] > start_ms]
        self._drop_passed(key, start_ms, group.value, out)
        ref = WindowRef(start_ms, t_ms)
        emit_window(self.aggregator, members, ref, group.value, ctx, out)

    def _fires(self, key: OrderedKey, t_ms: int, payload: Mapping[str, Any]) -> bool:
        """Rule trailing_cadence and the trigger for in-order events."""
        every = self.every_ms
        triggered = self.trigger is None or self.trigger.holds(payload)
        if every is None:
            return triggered
        if key.origin_ms is None and self.cadence == "from_first":
            key.origin_ms = t_ms  # the first event starts the cadence, trigger or not
            return False
        if not triggered:
            return False
        if key.origin_ms is None:
            key.origin_ms = t_ms
            return True
        if self.cadence == "grid":
            fires = t_ms // every > key.origin_ms // every
        else:
            fires = t_ms >= key.origin_ms + every
        if fires:
            key.origin_ms = t_ms
        return fires

    def _drop_passed(self, key: OrderedKey, start_ms: int, group: Any, out: list[Output]) -> None:
        """Waiting events inside this window are delivered; those before it never will be."""
        for t_ms, seq in key.waiting:
            inside = t_ms >= start_ms if self.closed else t_ms > start_ms
            if not inside:
                out.append(_no_window(seq, t_ms, group, f"the next fired window starts at {start_ms}"))
        key.waiting.clear()

    def on_end(self, ctx: Context, out: list[Output]) -> None:
        for group in ctx.groups.values():
            key = group.state
            if key is None:
                continue
            if self.discard:
                key.waiting.extend((t_ms, seq) for t_ms, seq, _ in sorted(key.buffer.entries))
                key.buffer.entries.clear()
            else:
                self._release(group, key, None, ctx, out)
            for t_ms, seq in key.waiting:
                out.append(_no_window(seq, t_ms, group.value, "no window fired after it"))
            key.waiting.clear()


def _no_window(seq: int, t_ms: int, group: Any, why: str) -> Drop:
    return Drop(seq, "no_window", (), f"event time {t_ms} is in no fired window: {why}", group)


def trailing_operator(query: Query, ctx: Context) -> Operator:
    """The trailing operator rule ``trailing_late`` names: ``clock`` (Tenzir 6.20: in
    time order, late behind the clock) or ``none`` (:class:`TrailingOperator`: every
    event, in any order, is in its own window); trailing count windows have their own."""
    if isinstance(query.window, TrailingCountWindows):
        return TrailingCountOperator(query, ctx)
    if ctx.rules.trailing_late == "clock":
        return OrderedTrailingOperator(query, ctx)
    return TrailingOperator(query, ctx)
