"""Spark's output modes ``update`` and ``complete`` (docs/semantics.md, "Output modes under
spark"); ``append``, every other operator's way, emits each window once when it closes.

- ``update`` (fixed windows; Spark refuses it for sessions): after each micro-batch, one row
  per window, group and ``aggregate_by`` value that took a row in that micro-batch, with its
  aggregate so far (reason ``update``, partial). The late test and the eviction are append's
  (the ``spark`` profile's rules); eviction emits nothing, so neither does the last no-data
  micro-batch, and the windows open at end of input went out as updates already.
- ``complete`` (fixed and session windows): nothing is late and nothing is evicted; after
  every micro-batch, data or not, every window seen so far with its aggregate (reason
  ``complete``, partial). Spark runs no last no-data micro-batch in this mode.

Micro-batches are the oracle's batches (:meth:`Operator.on_batch_end`): a ``batch`` item, a
lone event, an empty ``{batch: []}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import count
from typing import Any, Final

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.fields import getter, hashable
from windtunnel.oracle.model.results import Emission, Output, WindowRef
from windtunnel.oracle.model.spec import FixedWindows, Query, SessionWindows
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.windows.driver import Context, Group, Operator
from windtunnel.oracle.windows.fixed import FixedOperator, Window
from windtunnel.oracle.windows.trace import ClockView, deliver_all, keyed_view, stream_view
from windtunnel.oracle.windows.watermark import Clock, Clocks

MODE_ROWS: Final[dict[str, tuple[str, bool]]] = {
    "append": ("close", False),
    "update": ("update", True),
    "complete": ("complete", True),
}
"""The reason and ``partial`` flag of the rows each output mode writes."""

EVICTED = "evicted"
"""The reason an ``update``-mode window is closed with (told to ``explain``): it leaves the
state store without a row."""


def _by_key(getters: list[Any], payload: Mapping[str, Any]) -> tuple[Any, ...]:
    """An event's ``aggregate_by`` values, comparable with :func:`_row_key`'s."""
    return tuple(hashable(g(payload)) for g in getters)


def _row_key(paths: tuple[str, ...], row: Mapping[str, Any]) -> tuple[Any, ...]:
    """A row's ``aggregate_by`` values (rows name them by their whole path)."""
    return tuple(hashable(row.get(p)) for p in paths)


class UpdateOperator(FixedOperator):
    """Fixed windows in Spark's ``update`` output mode (see the module docstring)."""

    def __init__(self, query: Query, ctx: Context) -> None:
        super().__init__(query, ctx)
        if self.aggregator is None:
            raise InvalidSpec("aggregate", None, "output_mode: update needs an aggregation",
                              "add aggregate: {n: count()}")
        self._by_paths = query.aggregate_by
        self._by = [getter(p) for p in query.aggregate_by]
        self._touched: dict[Window, set[tuple[Any, ...]]] = {}

    def _deliver(self, window: Window, event: Event, ctx: Context, out: list[Output]) -> None:
        super()._deliver(window, event, ctx, out)
        self._touched.setdefault(window, set()).add(_by_key(self._by, event.payload))

    def on_batch_end(self, ctx: Context, out: list[Output]) -> None:
        """The micro-batch's updated rows, then append's closing (which emits nothing here)."""
        touched, self._touched = self._touched, {}
        assert self.aggregator is not None
        reason, partial = MODE_ROWS["update"]
        for window in sorted(touched, key=lambda w: (w.end_ms, w.start_ms, w.group.index)):
            ref = WindowRef(window.start_ms, window.end_ms)
            for row in self.aggregator.rows(window.state, window.start_ms, window.end_ms):
                if self._by and _row_key(self._by_paths, row) not in touched[window]:
                    continue  # another aggregate_by value of the window, unchanged here
                out.append(Emission(ref, window.group.value, row, reason, ctx.after_seq,
                                    ctx.wall_ms, partial))
        super().on_batch_end(ctx, out)

    def _close_one(
        self, window: Window, reason: str, ctx: Context, out: list[Output], partial: bool
    ) -> None:
        if reason != "close":  # rules overridden (end_of_input: flush): append's rows
            super()._close_one(window, reason, ctx, out, partial)
            return
        # eviction: the window leaves the state without a row (it went out as updates)
        super()._close_one(window, EVICTED, ctx, [], partial)


class _Session:
    __slots__ = ("events", "first_ms", "last_ms", "opened")

    def __init__(self, t_ms: int, opened: int) -> None:
        self.first_ms = t_ms
        self.last_ms = t_ms
        self.opened = opened
        self.events: list[tuple[int, Mapping[str, Any]]] = []


class CompleteOperator(Operator):
    """Fixed or session windows in Spark's ``complete`` output mode (see the module
    docstring). Sessions merge as the profile's rules say (``session_gap``, bounds by
    ``session_ends``); the watermark is kept for explanations only."""

    def __init__(self, query: Query, ctx: Context) -> None:
        if query.aggregate is None:
            raise InvalidSpec("aggregate", None, "output_mode: complete needs an aggregation",
                              "add aggregate: {n: count()}")
        self.window = query.window
        assert isinstance(self.window, FixedWindows | SessionWindows)
        self.rules = ctx.rules
        self.tolerance_ms = self.window.tolerance_ms
        self.aggregator = Aggregator(query.aggregate, query.aggregate_by)
        self.clocks = Clocks(ctx.rules, self.tolerance_ms)
        self._clocks: dict[int, Clock] = {}
        self._fixed: dict[tuple[int, int], tuple[Group, Any]] = {}
        self._sessions: dict[int, tuple[Group, list[_Session]]] = {}
        self._opened = count()

    def on_event(
        self, group: Group, event: Event, t_ms: int, ctx: Context, out: list[Output]
    ) -> None:
        window = self.window
        if isinstance(window, FixedWindows):
            for start in window.starts_containing(t_ms):
                found = self._fixed.get((group.index, start))
                if found is None:
                    found = self._fixed[(group.index, start)] = (group, self.aggregator.new())
                self.aggregator.add(found[1], event.payload)
                if ctx.trace is not None:
                    ctx.trace.delivered(event.seq, group.value,
                                        WindowRef(start, start + window.size_ms))
        elif isinstance(window, SessionWindows):
            self._join(group, event, t_ms, window.gap_ms)
        clock = self._clocks.get(group.index)
        if clock is None:
            clock = self._clocks[group.index] = self.clocks.new()
        self.clocks.observe(clock, t_ms)

    def _join(self, group: Group, event: Event, t_ms: int, gap_ms: int) -> None:
        """Rule session_gap: the event joins (and merges) every session within ``gap``."""
        sessions = self._sessions.setdefault(group.index, (group, []))[1]
        inclusive = self.rules.session_gap == "inclusive"
        joined = [
            s for s in sessions
            if (s.first_ms - gap_ms <= t_ms <= s.last_ms + gap_ms if inclusive
                else s.first_ms - gap_ms < t_ms < s.last_ms + gap_ms)
        ]
        if not joined:
            session = _Session(t_ms, next(self._opened))
            sessions.append(session)
        else:
            joined.sort(key=lambda s: s.opened)
            session = joined[0]
            for other in joined[1:]:
                sessions.remove(other)
                session.events += other.events
                session.first_ms = min(session.first_ms, other.first_ms)
                session.last_ms = max(session.last_ms, other.last_ms)
            session.events.sort(key=lambda e: e[0])
        session.first_ms = min(session.first_ms, t_ms)
        session.last_ms = max(session.last_ms, t_ms)
        session.events.append((event.seq, event.payload))

    def _bounds(self, session: _Session) -> WindowRef:
        """Rule session_ends."""
        assert isinstance(self.window, SessionWindows)
        if self.rules.session_ends == "gap":
            return WindowRef(session.first_ms, session.last_ms + self.window.gap_ms)
        return WindowRef(session.first_ms, session.last_ms)

    def _table(self) -> list[tuple[WindowRef, Group, Any]]:
        """Every window with its aggregation state, in (end, start, group) order."""
        rows: list[tuple[WindowRef, Group, Any]] = []
        if isinstance(self.window, FixedWindows):
            size = self.window.size_ms
            rows = [(WindowRef(start, start + size), group, state)
                    for (_, start), (group, state) in self._fixed.items()]
        else:
            for group, sessions in self._sessions.values():
                for session in sessions:
                    state = self.aggregator.new()
                    for _, payload in session.events:
                        self.aggregator.add(state, payload)
                    rows.append((self._bounds(session), group, state))
        rows.sort(key=lambda r: (r[0].end_ms or 0, r[0].start_ms or 0, r[1].index))
        return rows

    def on_batch_end(self, ctx: Context, out: list[Output]) -> None:
        reason, partial = MODE_ROWS["complete"]
        for window, group, state in self._table():
            for row in self.aggregator.rows(state, window.start_ms, window.end_ms):
                out.append(Emission(window, group.value, row, reason, ctx.after_seq,
                                    ctx.wall_ms, partial))
        moved = self.clocks.batch_end()
        self.clocks.after_batch_close(moved)

    def on_watermark(self, to_ms: int, ctx: Context, out: list[Output]) -> None:
        """The watermark moves (shown by explain); complete mode neither drops nor evicts."""
        self.clocks.inject(to_ms + self.tolerance_ms, list(self._clocks.values()))

    def on_end(self, ctx: Context, out: list[Output]) -> None:
        self.clocks.end()
        if ctx.trace is not None and isinstance(self.window, SessionWindows):
            for group, sessions in self._sessions.values():  # bounds are final only now
                for session in sessions:
                    deliver_all(ctx.trace, (seq for seq, _ in session.events), group.value,
                                self._bounds(session))

    def clock_view(self, ctx: Context) -> ClockView:
        if self.rules.clock_scope == "stream":
            return stream_view(self.clocks.new().now_ms, self.tolerance_ms)
        return keyed_view(
            ((g.value, self._clocks[g.index].now_ms) for g in ctx.groups.values()
             if g.index in self._clocks),
            self.tolerance_ms,
        )


def mode_operator(query: Query, ctx: Context) -> Operator:
    """The operator for ``query.output_mode`` (``update`` or ``complete``)."""
    if query.output_mode == "complete":
        return CompleteOperator(query, ctx)
    if isinstance(query.window, FixedWindows):
        return UpdateOperator(query, ctx)
    raise InvalidSpec("output_mode", query.output_mode,
                      f"not modelled for {query.window.kind} windows",
                      "use output_mode: append or complete")
