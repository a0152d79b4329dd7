"""Trailing windows: one window per triggering event, over the time just before it.

An event at ``t`` triggers the window ``[t - size, t]`` (rule ``trailing_ends``:
both ends included by default, or ``(t - size, t]``) of its group, holding the
group's events earlier in stream order with a time in it, and the trigger itself;
with duplicate timestamps only the events up to the trigger in stream order. It is
emitted at once (reason ``close``). Without ``every`` each event triggers; with
``every`` an event triggers when it is at least ``every`` after the previous trigger
of its group (rule ``trailing_cadence``; or, ``grid``, when it lies in a later
epoch-aligned ``every`` bucket than that trigger; under ``from_first`` the group's first
event starts the cadence without firing), and an event that ends up in no emitted
window is dropped with reason
``no_window`` (as soon as a trigger passes it, or at end of input). There is no
late drop: every event is in its own window or waits for the next trigger.

The reference keeps every event of a group, sorted by time.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Mapping
from typing import Any

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef
from windtunnel.oracle.model.spec import Query, TrailingWindows
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.windows.driver import Context, Group, Operator
from windtunnel.oracle.windows.trace import deliver_all


class TrailingKey:
    """Per-group state: events as (time ms, seq, payload) sorted by time then seq, the
    last trigger time, and events not yet in any emitted window (under ``every``)."""

    __slots__ = ("events", "last_trigger_ms", "waiting")

    def __init__(self) -> None:
        self.events: list[tuple[int, int, Mapping[str, Any]]] = []
        self.last_trigger_ms: int | None = None
        self.waiting: list[tuple[int, int]] = []


class TrailingOperator(Operator):
    """Trailing windows of the default profile."""

    def __init__(self, query: Query, ctx: Context) -> None:
        spec = query.window
        assert isinstance(spec, TrailingWindows)
        self.size_ms = spec.size_ms
        self.every_ms = spec.every_ms
        self.closed = ctx.rules.trailing_ends == "closed"
        self.grid = ctx.rules.trailing_cadence == "grid"
        self.from_first = ctx.rules.trailing_cadence == "from_first"
        self.trigger = spec.trigger
        if spec.tolerance_ms:
            raise InvalidSpec(
                "window.tolerance", spec.tolerance_ms,
                "trailing windows without a clock (rule trailing_late: none) take every event: "
                "a tolerance has no meaning", "remove tolerance, or set trailing_late: clock",
            )
        self.aggregator = (
            None if query.aggregate is None else Aggregator(query.aggregate, query.aggregate_by)
        )

    def on_event(
        self, group: Group, event: Event, t_ms: int, ctx: Context, out: list[Output]
    ) -> None:
        key = group.state
        if key is None:
            key = group.state = TrailingKey()
        insort(key.events, (t_ms, event.seq, event.payload), key=_time_seq)
        if self.every_ms is not None and key.last_trigger_ms is None and self.from_first:
            key.last_trigger_ms = t_ms  # the first event starts the cadence, without firing
            key.waiting.append((t_ms, event.seq))
            return
        if (self.trigger is not None and not self.trigger.holds(event.payload)) or (
            self.every_ms is not None and key.last_trigger_ms is not None
            and not self.triggers(t_ms, key.last_trigger_ms, self.every_ms)
        ):
            key.waiting.append((t_ms, event.seq))
            return
        key.last_trigger_ms = t_ms
        start_ms = t_ms - self.size_ms
        first = bisect_left if self.closed else bisect_right
        lo = first(key.events, start_ms, key=_time)
        hi = bisect_right(key.events, t_ms, key=_time)
        members = sorted(key.events[lo:hi], key=lambda e: e[1])  # delivery (seq) order
        if key.waiting:
            self._drop_passed(key, start_ms, group.value, out)
        ref = WindowRef(start_ms, t_ms)
        emit_window(self.aggregator, members, ref, group.value, ctx, out)

    def triggers(self, t_ms: int, last_trigger_ms: int, every_ms: int) -> bool:
        """Rule trailing_cadence: does an event at ``t_ms`` trigger after one at ``last_trigger_ms``?
        Either way triggers only move forward in time."""
        if self.grid:  # a later epoch-aligned bucket [k * every, (k + 1) * every)
            return t_ms // every_ms > last_trigger_ms // every_ms
        return t_ms >= last_trigger_ms + every_ms

    def _drop_passed(
        self, key: TrailingKey, start_ms: int, group: Any, out: list[Output]
    ) -> None:
        """Waiting events this trigger covers are delivered; those before it never will be
        (triggers only move forward under ``every``)."""
        for t_ms, seq in key.waiting:
            inside = t_ms >= start_ms if self.closed else t_ms > start_ms
            if not inside:
                out.append(
                    self._no_window(seq, t_ms, group, f"the next trigger's window starts at {start_ms}")
                )
        key.waiting.clear()

    def _no_window(self, seq: int, t_ms: int, group: Any, why: str) -> Drop:
        return Drop(
            seq, "no_window", (), f"event time {t_ms} triggered no window and is in none: {why}", group
        )

    def on_end(self, ctx: Context, out: list[Output]) -> None:
        for group in ctx.groups.values():
            key = group.state
            if key is None:
                continue
            for t_ms, seq in key.waiting:
                out.append(
                    self._no_window(seq, t_ms, group.value, "no trigger followed before end of input")
                )
            key.waiting.clear()


def _time(entry: tuple[int, int, Mapping[str, Any]]) -> int:
    return entry[0]


def _time_seq(entry: tuple[int, int, Mapping[str, Any]]) -> tuple[int, int]:
    return entry[0], entry[1]


Member = tuple[Any, int, Mapping[str, Any]]
"""A window member: (its time or offset, seq, payload)."""


def emit_window(
    aggregator: Aggregator | None,
    members: list[Member],
    ref: WindowRef,
    group_value: Any,
    ctx: Context,
    out: list[Output],
) -> None:
    """Emit the fired trailing window ``ref`` of ``members`` (in delivery order): one row per
    member without an aggregate, else the aggregate's rows (reason ``close``)."""
    if ctx.trace is not None:
        deliver_all(ctx.trace, (seq for _, seq, _ in members), group_value, ref)
        ctx.trace.closed(group_value, ref, "close")
    if aggregator is None:
        for _, _, payload in members:
            out.append(Emission(ref, group_value, dict(payload), "close", ctx.after_seq, ctx.wall_ms))
        return
    state = aggregator.new()
    for _, _, payload in members:
        aggregator.add(state, payload)
    for row in aggregator.rows(state, ref.start_ms, ref.end_ms):
        out.append(Emission(ref, group_value, row, "close", ctx.after_seq, ctx.wall_ms))
