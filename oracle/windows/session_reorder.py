"""Session windows as Tenzir 6.20 runs them (rule ``session_order: reorder``, the default).

Per key, events pass a reorder buffer before they reach a session (docs/semantics.md S1):

- the clock is the largest event time seen; the watermark is ``clock - tolerance``;
- an event is late (dropped) when its time is before the watermark, or before the time
  of the last event already released to a session;
- after each event, buffered events with time ``<= watermark`` are released in time
  order (ties in stream order) and admitted to the one open session of the key: an
  event more than ``gap`` after the session's last event (rule ``session_gap``:
  exactly ``gap`` joins) or more than ``max_duration`` after its first closes it and
  opens a new one; an event exactly ``max_duration`` after the first, or the one that
  brings it to ``max_events``, joins and closes it;
- then the open session closes when the watermark is past ``last + gap`` (rule
  ``session_close_at``: ``reaches`` closes at equality, ``max_timestamp`` 1 ms before).

So sessions never merge and never reach backwards: one session is open per key, and
its events are aggregated in time order. ``idle_timeout`` releases the whole buffer
and closes the session; end of input does the same (rule ``end_of_input``). A session
reports ``[first, last]`` (both included) or ``[first, last + gap)`` (rule
``session_ends``). An injected watermark ``{watermark: T}`` (W1) moves every key's clock
to ``T + tolerance`` (never back; keys seen later start there), releases and closes.

The merging rules ``session_late``, ``closed_session``, ``session_cap`` and
``idle_closed_window`` have no meaning here (the buffer decides lateness, a session never
reaches backwards; an event after an idle close starts a new session, as Tenzir 6.20
does): their alternative values are input errors naming ``session_order: merge``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef
from windtunnel.oracle.model.rules import RULE_VALUES, close_point_offset_ms
from windtunnel.oracle.model.spec import NOW, Query, SessionWindows
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.windows.driver import Context, Group, Operator
from windtunnel.oracle.windows.reorder import ReorderBuffer
from windtunnel.oracle.windows.session import SessionOperator
from windtunnel.oracle.windows.trace import ClockView, deliver_all, keyed_view
from windtunnel.oracle.windows.window_rows import require_rules


class OpenSession:
    """The open session of a key: first and last admitted event times, its events."""

    __slots__ = ("events", "first_ms", "last_ms")

    def __init__(self, t_ms: int) -> None:
        self.first_ms = t_ms
        self.last_ms = t_ms
        self.events: list[tuple[int, Mapping[str, Any]]] = []


class ReorderKey:
    """Per-key state: the reorder buffer (with the key's clock), the open session and the
    wall time of the last accepted event."""

    __slots__ = ("buffer", "last_wall_ms", "session")

    def __init__(self, clock_ms: int | None = None) -> None:
        self.buffer = ReorderBuffer(clock_ms)
        self.session: OpenSession | None = None
        self.last_wall_ms = 0


class ReorderSessionOperator(Operator):
    """Session windows behind a per-key reorder buffer (module docstring)."""

    def __init__(self, query: Query, ctx: Context) -> None:
        spec = query.window
        assert isinstance(spec, SessionWindows)
        rules = ctx.rules
        refused = {
            "session_late": ("merged",), "closed_session": ("new_session",),
            "clock_scope": ("stream",), "clock_moves": ("batch", "batch_inclusive"),
            "late_test": ("record",), "empty_windows": ("emit",), "session_cap": ("passes",),
            "idle_closed_window": ("reopen",), "close_order": ("opened",),
        }
        require_rules(
            rules, "session (session_order: reorder)", "set session_order: merge",
            **{name: tuple(v for v in RULE_VALUES[name] if v not in bad)
               for name, bad in refused.items()},
        )
        self.spec = spec
        self.rules = rules
        self.inclusive = rules.session_gap == "inclusive"
        # the open session closes once the watermark >= last + gap + this (session_close_at)
        self._close_offset_ms = close_point_offset_ms(rules.session_close_at, 0)
        self._floor_ms: int | None = None  # clock of keys seen after an injected watermark
        self.aggregator = (
            None if query.aggregate is None else Aggregator(query.aggregate, query.aggregate_by)
        )

    def _key(self, group: Group) -> ReorderKey:
        if group.state is None:
            group.state = ReorderKey(self._floor_ms)
        return group.state  # type: ignore[no-any-return]

    def on_event(
        self, group: Group, event: Event, t_ms: int, ctx: Context, out: list[Output]
    ) -> None:
        key = self._key(group)
        tolerance = self.spec.tolerance_ms
        behind = key.buffer.behind(t_ms, tolerance)
        if behind is not None:
            what, at_ms = behind
            why = (
                f"the watermark (clock - tolerance) is {at_ms}"
                if what == "watermark"
                else f"an event at {at_ms} already left the reorder buffer"
            )
            out.append(self._late(event.seq, t_ms, group.value, why))
            return
        key.buffer.add(t_ms, event.seq, event.payload)
        key.last_wall_ms = ctx.wall_ms
        self._release(group, key, key.buffer.watermark(tolerance), ctx, out)
        self._close_if_due(group, key, ctx, out)

    def _close_if_due(self, group: Group, key: ReorderKey, ctx: Context, out: list[Output]) -> None:
        """Close the open session once the watermark reaches its close point."""
        session = key.session
        watermark = key.buffer.watermark(self.spec.tolerance_ms)
        if session is None or watermark is None:
            return
        if watermark >= session.last_ms + self.spec.gap_ms + self._close_offset_ms:
            self._close(group, key, "close", ctx, out)

    def _late(self, seq: int, t_ms: int, group: Any, why: str) -> Drop:
        return Drop(
            seq, "late", (WindowRef(t_ms, t_ms),),
            f"event time {t_ms} is late for sessions: {why}; raise tolerance to keep it",
            group,
        )

    def _beyond_gap(self, t_ms: int, session: OpenSession) -> bool:
        """Rule session_gap: is ``t_ms`` too far after the session's last event to join?"""
        limit = session.last_ms + self.spec.gap_ms
        return t_ms > limit if self.inclusive else t_ms >= limit

    def _release(
        self, group: Group, key: ReorderKey, cutoff: int | None, ctx: Context, out: list[Output]
    ) -> None:
        """Admit buffered events up to ``cutoff`` (all when None), in time order."""
        for t_ms, seq, payload in key.buffer.release(cutoff):
            self._admit(group, key, t_ms, seq, payload, ctx, out)

    def _admit(
        self,
        group: Group,
        key: ReorderKey,
        t_ms: int,
        seq: int,
        payload: Mapping[str, Any],
        ctx: Context,
        out: list[Output],
    ) -> None:
        spec = self.spec
        session = key.session
        if session is not None and (
            self._beyond_gap(t_ms, session)
            or (spec.max_duration_ms is not None and t_ms > session.first_ms + spec.max_duration_ms)
        ):
            self._close(group, key, "close", ctx, out)
            session = None
        if session is None:
            session = key.session = OpenSession(t_ms)
        session.events.append((seq, payload))
        session.last_ms = t_ms
        if (spec.max_events is not None and len(session.events) >= spec.max_events) or (
            spec.max_duration_ms is not None and t_ms >= session.first_ms + spec.max_duration_ms
        ):
            self._close(group, key, "close", ctx, out)

    def _close(
        self, group: Group, key: ReorderKey, reason: str, ctx: Context, out: list[Output]
    ) -> None:
        session = key.session
        if session is None:
            return
        key.session = None
        end_ms = session.last_ms + self.spec.gap_ms if self.rules.session_ends == "gap" else session.last_ms
        window = WindowRef(session.first_ms, end_ms)
        partial = reason != "close"
        if ctx.trace is not None:
            deliver_all(ctx.trace, (seq for seq, _ in session.events), group.value, window)
            ctx.trace.closed(group.value, window, reason)
        if self.aggregator is None:
            rows: Sequence[Mapping[str, Any]] = [payload for _, payload in session.events]
        else:
            state = self.aggregator.new()
            for _, payload in session.events:
                self.aggregator.add(state, payload)
            rows = self.aggregator.rows(state, window.start_ms, window.end_ms)
        for row in rows:
            out.append(Emission(window, group.value, dict(row), reason, ctx.after_seq, ctx.wall_ms, partial))

    def _flush(self, group: Group, reason: str, ctx: Context, out: list[Output]) -> None:
        """Release the whole buffer and close the open session (idle or end of input)."""
        key = self._key(group)
        self._release(group, key, None, ctx, out)
        self._close(group, key, reason, ctx, out)

    def on_wall(self, ctx: Context, out: list[Output]) -> None:
        idle_ms = self.spec.idle_timeout_ms
        if idle_ms is None:
            return
        chunks = []
        for group in ctx.groups.values():
            key = group.state
            if key is None or (key.session is None and not key.buffer.entries):
                continue
            if key.last_wall_ms + idle_ms <= ctx.wall_ms:
                chunk: list[Output] = []
                self._flush(group, "idle_timeout", ctx, chunk)
                chunks.append((group.index, chunk))
        out.extend(_window_time_order(chunks))

    def on_watermark(self, to_ms: int, ctx: Context, out: list[Output]) -> None:
        """Rule W1: every key's clock moves to ``to_ms + tolerance`` (never back); keys
        first seen later start there. Releases and closes what the watermark reaches."""
        clock_ms = to_ms + self.spec.tolerance_ms
        if self._floor_ms is None or clock_ms > self._floor_ms:
            self._floor_ms = clock_ms
        for group in ctx.groups.values():
            key = group.state
            if key is None or (key.buffer.clock_ms is not None and key.buffer.clock_ms >= clock_ms):
                continue
            key.buffer.clock_ms = clock_ms
            self._release(group, key, to_ms, ctx, out)
            self._close_if_due(group, key, ctx, out)

    def on_end(self, ctx: Context, out: list[Output]) -> None:
        groups = [g for g in ctx.groups.values() if g.state is not None]
        if self.rules.end_of_input == "discard":
            if ctx.trace is not None:  # the buffered and open events lost at end of input
                for group in groups:
                    self._trace_lost(group, group.state, ctx)
            return
        chunks = []
        for group in groups:
            chunk: list[Output] = []
            self._flush(group, "end_of_input", ctx, chunk)
            chunks.append((group.index, chunk))
        out.extend(_window_time_order(chunks))

    def _trace_lost(self, group: Group, key: ReorderKey, ctx: Context) -> None:
        """Tell the trace which session each lost event was in (buffered ones: their own)."""
        assert ctx.trace is not None
        session = key.session
        if session is not None:
            window = WindowRef(session.first_ms, session.last_ms)
            deliver_all(ctx.trace, (seq for seq, _ in session.events), group.value, window)
        for t_ms, seq, _ in key.buffer.entries:
            ctx.trace.delivered(seq, group.value, WindowRef(t_ms, t_ms))

    def clock_view(self, ctx: Context) -> ClockView:
        keys = [g for g in ctx.groups.values() if g.state is not None]
        return keyed_view(((g.value, g.state.buffer.clock_ms) for g in keys), self.spec.tolerance_ms)


def _window_time_order(chunks: list[tuple[int, list[Output]]]) -> list[Output]:
    """The outputs of several keys closed by one step, in window-time order (rule
    ``close_order: window_time``): by session end, then start, then key (first seen
    first); a key's own outputs are already in that order and keep it."""
    if len(chunks) == 1:
        return chunks[0][1]
    tagged = []
    for index, chunk in chunks:
        for position, output in enumerate(chunk):
            window = output.window if isinstance(output, Emission) else None
            end_ms = window.end_ms if window is not None else None
            start_ms = window.start_ms if window is not None else None
            tagged.append(((end_ms or 0, start_ms or 0, index, position), output))
    tagged.sort(key=lambda pair: pair[0])
    return [output for _, output in tagged]


def session_operator(query: Query, ctx: Context) -> Operator:
    """The session operator rule ``session_order`` names: ``reorder`` (Tenzir 6.20) or
    ``merge`` (:class:`SessionOperator`: merging sessions, Flink's and Spark's model).
    Processing-time sessions (``on: now()``) never see disorder: both models agree, the
    merging operator runs them."""
    spec = query.window
    if ctx.rules.session_order == "reorder" and getattr(spec, "on", None) != NOW:
        return ReorderSessionOperator(query, ctx)
    return SessionOperator(query, ctx)
