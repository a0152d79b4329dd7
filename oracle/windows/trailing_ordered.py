"""Trailing windows as Tenzir 6.20 runs them (rule ``trailing_late: clock``, the default).

Per key (docs/semantics.md T3):

- an event behind its key's clock (the largest event time seen) is late and dropped;
  the rest arrive in time order, ties in stream order;
- every event is retained while it is within ``size`` of the newest one;
- an event at ``t`` fires the window ``[t - size, t]`` (rule ``trailing_ends``) over the
  retained events up to and including it, in time order. Without ``every`` every event
  fires; with ``every`` (rule ``trailing_cadence: from_first``) the group's first event
  starts the cadence without firing, and the next event at least ``every`` after the
  last cadence start fires and starts the next one;
- an event that ends up in no fired window is dropped with reason ``no_window`` (when a
  fired window has left it behind, or at end of input), so nothing is lost silently.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef
from windtunnel.oracle.model.spec import Query, TrailingWindows
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.windows.driver import Context, Group, Operator
from windtunnel.oracle.windows.trace import deliver_all
from windtunnel.oracle.windows.trailing import TrailingOperator


class OrderedKey:
    """Per-key state: clock, retained events ``(t, seq, payload)``, the cadence origin
    and the events not yet in any fired window."""

    __slots__ = ("clock_ms", "origin_ms", "retained", "waiting")

    def __init__(self) -> None:
        self.clock_ms: int | None = None
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
        self.aggregator = (
            None if query.aggregate is None else Aggregator(query.aggregate, query.aggregate_by)
        )

    def on_event(
        self, group: Group, event: Event, t_ms: int, ctx: Context, out: list[Output]
    ) -> None:
        key = group.state
        if key is None:
            key = group.state = OrderedKey()
        if key.clock_ms is not None and t_ms < key.clock_ms:
            out.append(
                Drop(
                    event.seq, "late", (), f"event time {t_ms} is behind its key's clock "
                    f"{key.clock_ms}: trailing windows take events in time order",
                    group.value,
                )
            )
            return
        key.clock_ms = t_ms
        start_ms = t_ms - self.size_ms
        retained = key.retained
        while retained and retained[0][0] < start_ms:
            retained.popleft()
        retained.append((t_ms, event.seq, event.payload))
        if not self._fires(key, t_ms):
            key.waiting.append((t_ms, event.seq))
            return
        members = [e for e in retained if self.closed or e[0] > start_ms]
        self._drop_passed(key, start_ms, group.value, out)
        ref = WindowRef(start_ms, t_ms)
        if ctx.trace is not None:
            deliver_all(ctx.trace, (seq for _, seq, _ in members), group.value, ref)
            ctx.trace.closed(group.value, ref, "close")
        if self.aggregator is None:
            for _, _, payload in members:
                out.append(Emission(ref, group.value, dict(payload), "close", ctx.after_seq, ctx.wall_ms))
            return
        state = self.aggregator.new()
        for _, _, payload in members:
            self.aggregator.add(state, payload)
        for row in self.aggregator.rows(state, start_ms, t_ms):
            out.append(Emission(ref, group.value, row, "close", ctx.after_seq, ctx.wall_ms))

    def _fires(self, key: OrderedKey, t_ms: int) -> bool:
        """Rule trailing_cadence for in-order events."""
        every = self.every_ms
        if every is None:
            return True
        if key.origin_ms is None:
            key.origin_ms = t_ms
            return self.cadence != "from_first"
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
            for t_ms, seq in key.waiting:
                out.append(_no_window(seq, t_ms, group.value, "no window fired after it"))
            key.waiting.clear()


def _no_window(seq: int, t_ms: int, group: Any, why: str) -> Drop:
    return Drop(seq, "no_window", (), f"event time {t_ms} is in no fired window: {why}", group)


def trailing_operator(query: Query, ctx: Context) -> Operator:
    """The trailing operator rule ``trailing_late`` names: ``clock`` (Tenzir 6.20: in
    time order, late behind the clock) or ``none`` (:class:`TrailingOperator`: every
    event, in any order, is in its own window)."""
    if ctx.rules.trailing_late == "clock":
        return OrderedTrailingOperator(query, ctx)
    return TrailingOperator(query, ctx)
