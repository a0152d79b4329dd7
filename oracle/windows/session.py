"""Session windows: a group's events close together in event time form one session.

Two events join when at most ``gap`` apart (rule ``session_gap``: inclusive by default);
a later-arriving event that bridges two open sessions merges them into one, emitted
once. A session is final when the clock reaches its close point (rule
``session_close_at``: by default strictly past ``last + gap + tolerance``), or
``first + max_duration + tolerance`` under a duration cap (rule ``session_cap``); the event reaching
``max_events`` closes it at once. Each rule below is cited in docs/semantics.md.

A session keeps its events (seq, payload) and is aggregated when emitted, so merged
sessions aggregate exactly their events in delivery (seq) order. Pass-through sessions
emit their events when the session is emitted: only then are its bounds known.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from itertools import count
from typing import Any

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef
from windtunnel.oracle.model.rules import close_point_offset_ms, watermark_lag_ms
from windtunnel.oracle.model.spec import NOW, Query, SessionWindows
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.windows.driver import (
    PROCESSING_TIME,
    Context,
    Group,
    Operator,
    watermark_rejected,
)
from windtunnel.oracle.windows.trace import ClockView, deliver_all, keyed_view, stream_view
from windtunnel.oracle.windows.watermark import Clock, Clocks
from windtunnel.oracle.windows.window_rows import require_rules


class Session:
    """One session of one group: events ``first_ms`` .. ``last_ms`` (both included)."""

    __slots__ = (
        "close_ms",
        "closed",
        "events",
        "fired",
        "first_ms",
        "group",
        "last_ms",
        "last_wall_ms",
        "opened",
    )

    def __init__(self, group: Group, t_ms: int, wall_ms: int, opened: int) -> None:
        self.group = group
        self.first_ms = t_ms
        self.last_ms = t_ms
        self.events: list[tuple[int, Mapping[str, Any]]] = []
        self.last_wall_ms = wall_ms
        self.opened = opened
        self.close_ms = 0
        self.closed = False
        self.fired = False  # fired and kept for late firings (allowed_lateness)


class SessionKey:
    """Per-group state: the clock, open sessions (by opening order), and the spans
    ``(first_ms, last_ms, how)`` of emitted sessions an event may still touch."""

    __slots__ = ("clock", "done", "open")

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.open: list[Session] = []
        self.done: list[tuple[int, int, str]] = []


class SessionOperator(Operator):
    """Session windows under :class:`Rules` (defaults: Tenzir's)."""

    def __init__(self, query: Query, ctx: Context) -> None:
        spec = query.window
        assert isinstance(spec, SessionWindows)
        rules = ctx.rules
        require_rules(rules, "session", "another window kind", late_test=("window",),
                      empty_windows=("skip",))
        self.spec = spec
        self.rules = rules
        self.gap_ms = spec.gap_ms
        self.tolerance_ms = spec.tolerance_ms
        # rule watermark_formula: the watermark is the clock minus this lag
        self.lag_ms = watermark_lag_ms(rules, spec.tolerance_ms)
        # Flink's allowedLateness: a fired session is kept this long for late firings
        self.lateness_ms = spec.allowed_lateness_ms or 0
        self.max_duration_ms = spec.max_duration_ms
        # rule session_cap: the span may reach the cap (passes) or must stay under it (reaches)
        self._cap_slack_ms = 1 if rules.session_cap == "passes" else 0
        self.max_events = spec.max_events
        self.idle_ms = spec.idle_timeout_ms
        self.inclusive = rules.session_gap == "inclusive"
        # a session is final when clock >= last + gap + offset (rule session_close_at)
        self._gap_offset = close_point_offset_ms(rules.session_close_at, self.lag_ms)
        self.aggregator = (
            None if query.aggregate is None else Aggregator(query.aggregate, query.aggregate_by)
        )
        self.clocks = Clocks(rules, self.lag_ms)
        self._idle: list[tuple[int, int, Session]] = []
        self._tiebreak = count()

    def _key(self, group: Group) -> SessionKey:
        key = group.state
        if key is None:
            key = group.state = SessionKey(self.clocks.new())
        return key  # type: ignore[no-any-return]

    # --- rule session_close_at, and the duration cap ---------------------------------------
    def close_point(self, first_ms: int, last_ms: int) -> int:
        """The smallest clock value at which a session spanning first..last is final."""
        point = last_ms + self.gap_ms + self._gap_offset
        if self.max_duration_ms is not None:
            cap_point = first_ms + self.max_duration_ms + self.lag_ms + self._cap_slack_ms
            point = min(point, cap_point)
        return point

    # --- rule session_gap ------------------------------------------------------------------
    def touches(self, first_ms: int, last_ms: int, t_ms: int) -> bool:
        """True when an event at ``t_ms`` is within ``gap`` of the span first..last."""
        gap = self.gap_ms
        if self.inclusive:
            return first_ms - gap <= t_ms <= last_ms + gap
        return first_ms - gap < t_ms < last_ms + gap

    def _joined(self, sessions: list[Session], t_ms: int) -> list[Session]:
        """The touching sessions the event joins: under a duration cap only those whose
        combined span with the event stays under ``max_duration`` (or reaches it, rule
        ``session_cap: passes``), earliest first."""
        cap = self.max_duration_ms
        if cap is None:
            return sessions
        lo = hi = t_ms
        joined = []
        for session in sorted(sessions, key=lambda s: (s.first_ms, s.opened)):
            if max(hi, session.last_ms) - min(lo, session.first_ms) < cap + self._cap_slack_ms:
                joined.append(session)
                lo, hi = min(lo, session.first_ms), max(hi, session.last_ms)
        return joined

    def window(self, first_ms: int, last_ms: int) -> WindowRef:
        """Reported bounds (rule session_ends)."""
        if self.rules.session_ends == "gap":
            return WindowRef(first_ms, last_ms + self.gap_ms)
        return WindowRef(first_ms, last_ms)

    # --- events -------------------------------------------------------------------------------
    def on_event(
        self, group: Group, event: Event, t_ms: int, ctx: Context, out: list[Output]
    ) -> None:
        key = self._key(group)
        clock = key.clock
        if self.rules.idle_timer_reset == "any_event":
            for session in key.open:
                session.last_wall_ms = ctx.wall_ms
        joined = self._joined(
            [s for s in key.open if self.touches(s.first_ms, s.last_ms, t_ms)], t_ms
        )
        drop = self._late(key, joined, t_ms, event.seq, group.value)
        if drop is not None:
            out.append(drop)
        else:
            self._deliver(group, key, joined, event, t_ms, ctx, out)
        if self.clocks.observe(clock, t_ms):
            self._close(self._due([clock]), "close", ctx, out)

    def on_clock_only(self, group: Group, t_ms: int, ctx: Context, out: list[Output]) -> None:
        """D3: an event removed before the window moves the clock as a delivered one does."""
        clock = self._key(group).clock
        if self.clocks.observe(clock, t_ms):
            self._close(self._due([clock]), "close", ctx, out)

    def _late(
        self, key: SessionKey, joined: list[Session], t_ms: int, seq: int, group: Any
    ) -> Drop | None:
        """The late drop of an event at ``t_ms`` (of ``group``), or None when it may be delivered."""
        late_ms = key.clock.late_ms
        if late_ms is not None:
            # rule session_late: the event's own session, or the session after merging
            first, last = t_ms, t_ms
            if self.rules.session_late == "merged":
                first = min([t_ms, *(s.first_ms for s in joined)])
                last = max([t_ms, *(s.last_ms for s in joined)])
            point = self.close_point(first, last) + self.lateness_ms
            if late_ms >= point:
                return Drop(
                    seq,
                    "late",
                    (self.window(first, last),),
                    f"event time {t_ms} is late: its session "
                    f"{'after merging ' if self.rules.session_late == 'merged' else ''}"
                    f"would be final once the clock reached {point}; the clock is at {late_ms}",
                    group,
                )
        # rules closed_session and idle_closed_window: touching a session already emitted
        for first, last, how in key.done:
            if self.touches(first, last, t_ms):
                what = "idle_timeout force-closed it" if how == "idle_timeout" else "it was emitted"
                return Drop(
                    seq,
                    "late",
                    (self.window(first, last),),
                    f"event time {t_ms} would join the session [{first}, {last}], but {what}",
                    group,
                )
        return None

    def _deliver(
        self,
        group: Group,
        key: SessionKey,
        joined: list[Session],
        event: Event,
        t_ms: int,
        ctx: Context,
        out: list[Output],
    ) -> None:
        if joined:
            # merging: the earliest-opened session swallows the others (emitted once)
            joined.sort(key=lambda s: s.opened)
            session = joined[0]
            for other in joined[1:]:
                other.closed = True
                key.open.remove(other)
                session.events.extend(other.events)
                session.first_ms = min(session.first_ms, other.first_ms)
                session.last_ms = max(session.last_ms, other.last_ms)
            if len(joined) > 1:
                session.events.sort(key=lambda e: e[0])
            session.first_ms = min(session.first_ms, t_ms)
            session.last_ms = max(session.last_ms, t_ms)
        else:
            session = Session(group, t_ms, ctx.wall_ms, next(self._tiebreak))
            key.open.append(session)
        session.events.append((event.seq, event.payload))
        session.last_wall_ms = ctx.wall_ms
        if self.max_events is not None and len(session.events) >= self.max_events:
            # the event that reaches the cap joins the session and closes it
            self._close_one(session, "close", ctx, out, partial=False, remember=False)
            return
        session.close_ms = self.close_point(session.first_ms, session.last_ms)
        session.fired = False
        late_ms = key.clock.late_ms
        if late_ms is not None and late_ms >= session.close_ms:
            # only within allowed_lateness (else the event was late): Flink's trigger fires the
            # session at once with all its events, and keeps it until the lateness is over
            session.fired = True
            self._emit(session, "late_firing", ctx, out, partial=False)
            session.close_ms += self.lateness_ms
        heapq.heappush(
            key.clock.pending,
            (session.close_ms, session.first_ms, group.index, session.opened, session),
        )
        if self.idle_ms is not None:
            heapq.heappush(self._idle, (ctx.wall_ms + self.idle_ms, session.opened, session))

    def on_unusable(self, group: Group, event: Event, ctx: Context, out: list[Output]) -> None:
        if self.rules.idle_timer_reset == "any_event":
            for session in self._key(group).open:
                session.last_wall_ms = ctx.wall_ms

    # --- closing ------------------------------------------------------------------------------
    def _due(self, clocks: list[Clock]) -> list[Session]:
        due: list[Session] = []
        for clock in clocks:
            now = clock.now_ms
            pending = clock.pending
            while now is not None and pending and pending[0][0] <= now:
                close_ms, _, _, _, session = heapq.heappop(pending)
                if not session.closed and session.close_ms == close_ms:
                    due.append(session)
        if self.rules.close_order == "opened":
            due.sort(key=lambda s: s.opened)
        elif len(clocks) > 1:
            due.sort(key=lambda s: (s.close_ms, s.first_ms, s.group.index, s.opened))
        return due

    def _close(self, due: list[Session], reason: str, ctx: Context, out: list[Output]) -> None:
        for session in due:
            if session.closed:  # a session can sit in the heap twice with one close point
                continue
            if session.fired:  # Flink's cleanup timer: allowed lateness is over, no output
                if session.group.state.clock.now_ms >= session.close_ms:
                    self._retire(session, "close", remember=True)
            elif self.lateness_ms and reason == "close":  # fire, keep for late firings
                session.fired = True
                self._emit(session, reason, ctx, out, partial=False)
                session.close_ms += self.lateness_ms
                heapq.heappush(
                    session.group.state.clock.pending,
                    (session.close_ms, session.first_ms, session.group.index, session.opened,
                     session),
                )
            else:
                self._close_one(session, reason, ctx, out, partial=reason != "close", remember=True)

    def _close_one(
        self,
        session: Session,
        reason: str,
        ctx: Context,
        out: list[Output],
        *,
        partial: bool,
        remember: bool,
    ) -> None:
        self._retire(session, reason, remember=remember)
        self._emit(session, reason, ctx, out, partial)

    def _retire(self, session: Session, reason: str, *, remember: bool) -> None:
        """Remove a closed session; remember its span when touching it later is late."""
        session.closed = True
        key: SessionKey = session.group.state
        key.open.remove(session)
        how = "idle_timeout" if reason == "idle_timeout" else "close"
        rule = self.rules.idle_closed_window if how == "idle_timeout" else self.rules.closed_session
        if remember and rule == "late":
            key.done.append((session.first_ms, session.last_ms, how))
            self._forget(key)

    def _emit(
        self, session: Session, reason: str, ctx: Context, out: list[Output], partial: bool
    ) -> None:
        """The session's rows (its events, for pass-through) as emissions."""
        window = self.window(session.first_ms, session.last_ms)
        value = session.group.value
        if ctx.trace is not None:  # a session's bounds are final only now
            deliver_all(ctx.trace, (seq for seq, _ in session.events), value, window)
            ctx.trace.closed(value, window, reason)
        if self.aggregator is None:
            rows: Sequence[Mapping[str, Any]] = [payload for _, payload in session.events]
        else:
            state = self.aggregator.new()
            for _, payload in session.events:
                self.aggregator.add(state, payload)
            rows = self.aggregator.rows(state, window.start_ms, window.end_ms)
        for row in rows:
            out.append(
                Emission(window, value, dict(row), reason, ctx.after_seq, ctx.wall_ms, partial)
            )

    def _forget(self, key: SessionKey) -> None:
        """Drop emitted spans no event can touch any more without being late on its own."""
        late_ms = key.clock.late_ms
        if late_ms is None or self.rules.session_late != "own":
            return
        # a non-late event has t + gap + offset > late_ms; it touches first..last only if
        # t <= last + gap
        reach = late_ms - self.gap_ms - self._gap_offset
        key.done = [d for d in key.done if d[1] + self.gap_ms >= reach]

    def on_watermark(self, to_ms: int, ctx: Context, out: list[Output]) -> None:
        """Rule W1: the clock moves to watermark + tolerance (every key's, per clock_scope)."""
        if self.spec.on == NOW:
            raise watermark_rejected(ctx.profile, to_ms, PROCESSING_TIME)
        keys = [g.state.clock for g in ctx.groups.values() if g.state is not None]
        moved = self.clocks.inject(to_ms + self.lag_ms, keys)
        self._close(self._due(moved), "close", ctx, out)

    def clock_view(self, ctx: Context) -> ClockView:
        """The stream's clock, or each key's (``now_ms``: the clock that closes sessions)."""
        keys = [g for g in ctx.groups.values() if g.state is not None]
        if self.rules.clock_scope == "stream":
            stream = self.clocks.new()
            return stream_view(stream.now_ms, self.lag_ms)
        return keyed_view(((g.value, g.state.clock.now_ms) for g in keys), self.lag_ms)

    def on_batch_end(self, ctx: Context, out: list[Output]) -> None:
        clocks = self.clocks.batch_end()
        if clocks:
            self._close(self._due(clocks), "close", ctx, out)
            self.clocks.after_batch_close(clocks)

    # --- idle_timeout ---------------------------------------------------------------------------
    def on_wall(self, ctx: Context, out: list[Output]) -> None:
        idle = self._idle
        idle_ms = self.idle_ms
        if not idle or idle_ms is None:
            return
        due: list[Session] = []
        while idle and idle[0][0] <= ctx.wall_ms:
            _, opened, session = heapq.heappop(idle)
            if session.closed:
                continue
            deadline = session.last_wall_ms + idle_ms
            if deadline > ctx.wall_ms:
                heapq.heappush(idle, (deadline, opened, session))
                continue
            due.append(session)
        if self.rules.close_order != "opened":
            due.sort(key=lambda s: (s.close_ms, s.first_ms, s.group.index, s.opened))
        for session in due:
            if not session.closed:  # one session can have several idle entries
                self._close_one(session, "idle_timeout", ctx, out, partial=True, remember=True)

    # --- end of input -------------------------------------------------------------------------
    def on_end(self, ctx: Context, out: list[Output]) -> None:
        clocks = self.clocks.end()
        if clocks:  # Spark's final no-data micro-batch
            self._close(self._due(clocks), "close", ctx, out)
        remaining = [  # sessions kept after firing (allowed_lateness) fired already
            s for g in ctx.groups.values() if g.state is not None for s in g.state.open
            if not s.fired
        ]
        if self.rules.end_of_input == "discard":
            if ctx.trace is not None:  # the sessions lost at end of input
                for session in remaining:
                    window = self.window(session.first_ms, session.last_ms)
                    deliver_all(ctx.trace, (q for q, _ in session.events), session.group.value, window)
            return
        if self.rules.close_order == "opened":
            remaining.sort(key=lambda s: s.opened)
        else:
            remaining.sort(key=lambda s: (s.close_ms, s.first_ms, s.group.index, s.opened))
        for session in remaining:
            self._close_one(session, "end_of_input", ctx, out, partial=True, remember=False)
