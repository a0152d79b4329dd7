"""Fixed (tumbling and hopping) event-time windows, as Tenzir's ``window`` documents them,
and Flink SQL's cumulating windows (the same rules over another window layout).

Windows are half-open ``[start_ms, end_ms)`` aligned to the Unix epoch; the spec says
which windows contain an event time (``bounds_containing``), and an open window is known
by its end (unique per group for both layouts). Each rule below is cited in
docs/semantics.md under the heading in its comment.
"""

from __future__ import annotations

import heapq
from itertools import count
from typing import Any

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef
from windtunnel.oracle.model.rules import close_point_offset_ms, watermark_lag_ms
from windtunnel.oracle.model.spec import NOW, CumulateWindows, FixedWindows, Query
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.windows.driver import (
    PROCESSING_TIME,
    Context,
    Group,
    Operator,
    watermark_rejected,
)
from windtunnel.oracle.windows.late_drops import late_drop_windows
from windtunnel.oracle.windows.trace import ClockView, keyed_view, stream_view
from windtunnel.oracle.windows.watermark import Clock, inject
from windtunnel.oracle.windows.window_rows import require_rules


class Window:
    """One open window of one group."""

    __slots__ = (
        "closed", "end_ms", "fired", "group", "last_wall_ms", "opened", "start_ms", "state"
    )

    def __init__(
        self, group: Group, start_ms: int, end_ms: int, state: Any, wall_ms: int, opened: int
    ):
        self.group = group
        self.start_ms = start_ms
        self.end_ms = end_ms
        self.state = state
        self.last_wall_ms = wall_ms
        self.opened = opened
        self.closed = False
        self.fired = False  # fired and kept for late firings (allowed_lateness)


class KeyState:
    """Per-group state: open windows by end, windows idle_timeout closed (their ends),
    the clock."""

    __slots__ = ("clock", "idle_closed", "windows")

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.windows: dict[int, Window] = {}
        self.idle_closed: set[int] = set()


class FixedOperator(Operator):
    """Tenzir's fixed-window semantics, parameterised by :class:`Rules`; also runs
    cumulating windows (:class:`CumulateWindows`, profile flink)."""

    def __init__(self, query: Query, ctx: Context) -> None:
        spec = query.window
        assert isinstance(spec, FixedWindows | CumulateWindows)
        self.spec = spec
        self.rules = ctx.rules
        self.tolerance_ms = spec.tolerance_ms
        self.idle_ms = spec.idle_timeout_ms if isinstance(spec, FixedWindows) else None
        self.passthrough = query.aggregate is None
        self.aggregator = (
            None if query.aggregate is None else Aggregator(query.aggregate, query.aggregate_by)
        )
        require_rules(ctx.rules, "fixed", "another window kind", late_test=("window",),
                      empty_windows=("skip",))
        # rule watermark_formula: the watermark is the clock minus this lag
        self.lag_ms = watermark_lag_ms(ctx.rules, self.tolerance_ms)
        # Flink's allowedLateness: a fired window is kept this long for late firings
        self.lateness_ms = (spec.allowed_lateness_ms if isinstance(spec, FixedWindows) else 0) or 0
        # rule clock_floor: Spark's watermark (clock - tolerance) starts at 0
        self._clock_start = self.lag_ms if ctx.rules.clock_floor == "epoch" else None
        self._stream_clock = Clock(self._clock_start) if ctx.rules.clock_scope == "stream" else None
        # close point offset: the window [s, e) closes when clock >= e + offset (rule close_at)
        self._close_offset = close_point_offset_ms(ctx.rules.close_at, self.lag_ms)
        # rule clock_moves: clocks whose batch-end update is pending, in first-touched order
        self._per_event = ctx.rules.clock_moves == "event"
        self._dirty: dict[Clock, None] = {}
        self._from_zero = ctx.rules.alignment == "epoch_from_zero"
        self._idle: list[tuple[int, int, int, int, Window]] = []
        self._tiebreak = count()

    # --- rule: window assignment ("aligned to the Unix epoch", "[start, end)")
    def _state(self, group: Group) -> KeyState:
        state = group.state
        if state is None:
            state = group.state = KeyState(self._stream_clock or Clock(self._clock_start))
        return state  # type: ignore[no-any-return]

    def on_event(
        self, group: Group, event: Event, t_ms: int, ctx: Context, out: list[Output]
    ) -> None:
        key = self._state(group)
        clock = key.clock
        close_offset = self._close_offset
        now = clock.late_ms
        # rule: late events, per target window ("delivered to whichever of its target windows are open")
        delivered = 0
        missed: list[tuple[int, int]] = []
        bounds = self.spec.bounds_containing(t_ms)
        if self._from_zero:  # rule alignment: epoch_from_zero (the article's sliding code)
            bounds = [b for b in bounds if b[0] >= 0]
        if not bounds:  # before 0 (epoch_from_zero) or between gapped windows (every > size)
            out.append(self._no_window_drop(event, t_ms, now, group.value))
        # rule: a window is late once the clock reached its close point (+ allowed lateness)
        reach = close_offset + self.lateness_ms
        for start, end in bounds:
            if now is not None and end + reach <= now:
                missed.append((start, end))
                continue
            window = key.windows.get(end)
            if window is None:
                if end in key.idle_closed:  # rule idle_closed_window
                    if self.rules.idle_closed_window == "late":
                        missed.append((start, end))
                        continue
                    key.idle_closed.discard(end)
                window = self._open(group, key, start, end, ctx)
            self._deliver(window, event, ctx, out)
            if window.fired:  # Flink: an element in a fired window within lateness fires it
                self._emit(window, "late_firing", ctx, out, partial=False)
            elif now is not None and end + close_offset <= now:
                # first reached after its close point (within allowed_lateness): fires at once
                self._fire(window, "late_firing", ctx, out)
            delivered += 1
        if self.rules.idle_timer_reset == "any_event":
            for window in key.windows.values():
                window.last_wall_ms = ctx.wall_ms
        if delivered == 0 and bounds:
            out.append(self._late_drop(event, t_ms, missed, key, group.value))
        self._observe(clock, t_ms, ctx, out)

    def restore(
        self, group: Group, clock_ms: int, windows: list[tuple[int, Any]], ctx: Context
    ) -> None:
        """Take over a key a fast path read (per-key clock, clock moving per event): its
        clock and its open windows, ``(start_ms, aggregate state)`` by start."""
        key = self._state(group)
        key.clock.now_ms = key.clock.late_ms = key.clock.seen_ms = clock_ms
        for start, state in windows:
            window = self._open(group, key, start, start + self.spec.size_ms, ctx)
            window.state = state

    def on_clock_only(self, group: Group, t_ms: int, ctx: Context, out: list[Output]) -> None:
        """D3: an event removed before the window moves the clock as a delivered one does."""
        self._observe(self._stream_clock or self._state(group).clock, t_ms, ctx, out)

    def _observe(self, clock: Clock, t_ms: int, ctx: Context, out: list[Output]) -> None:
        # rule: the clock is the largest timestamp seen so far (events in no window too)
        if not self._per_event:  # rule clock_moves: batch, batch_inclusive
            if clock.seen_ms is None or t_ms > clock.seen_ms:
                clock.seen_ms = t_ms
                self._dirty[clock] = None
            return
        now = clock.late_ms
        if now is None or t_ms > now:
            clock.now_ms = clock.late_ms = clock.seen_ms = t_ms
            self._close(self._due([clock]), "close", ctx, out)

    def on_batch_end(self, ctx: Context, out: list[Output]) -> None:
        """Rule clock_moves: batch clocks move (and close windows) only here."""
        if self._per_event or not self._dirty:
            return
        clocks = list(self._dirty)
        if self.rules.clock_moves == "batch":
            # Spark: close with the clock of the previous batches, then move both clocks on
            due = self._due(clocks)
            for clock in clocks:
                clock.late_ms = clock.now_ms
                clock.now_ms = clock.seen_ms
                if clock.late_ms == clock.now_ms:
                    del self._dirty[clock]
        else:
            for clock in clocks:
                clock.now_ms = clock.late_ms = clock.seen_ms
            self._dirty.clear()
            due = self._due(clocks)
        self._close(due, "close", ctx, out)

    def on_watermark(self, to_ms: int, ctx: Context, out: list[Output]) -> None:
        """Rule W1: the clock moves to watermark + lag (rule watermark_formula): the stream's
        clock, or every key's clock, keys first seen later starting there."""
        if self.spec.on == NOW:
            raise watermark_rejected(ctx.profile, to_ms, PROCESSING_TIME)
        clock_ms = to_ms + self.lag_ms
        if self._stream_clock is not None:
            clocks = [self._stream_clock]
        else:
            clocks = [g.state.clock for g in ctx.groups.values() if g.state is not None]
            if self._clock_start is None or clock_ms > self._clock_start:
                self._clock_start = clock_ms
        moved = inject(clocks, clock_ms, self.rules.clock_moves, self._dirty)
        self._close(self._due(moved), "close", ctx, out)

    def on_unusable(self, group: Group, event: Event, ctx: Context, out: list[Output]) -> None:
        if self.rules.idle_timer_reset == "any_event":
            for window in self._state(group).windows.values():
                window.last_wall_ms = ctx.wall_ms

    def clock_view(self, ctx: Context) -> ClockView:
        """The stream's clock, or each key's (``now_ms``: the clock that closes windows)."""
        if self._stream_clock is not None:
            return stream_view(self._stream_clock.now_ms, self.lag_ms)
        return keyed_view(
            ((g.value, g.state.clock.now_ms) for g in ctx.groups.values() if g.state is not None),
            self.lag_ms,
        )

    def _open(self, group: Group, key: KeyState, start: int, end: int, ctx: Context) -> Window:
        state = None if self.aggregator is None else self.aggregator.new()
        window = Window(group, start, end, state, ctx.wall_ms, next(self._tiebreak))
        key.windows[end] = window
        heapq.heappush(
            key.clock.pending,
            (window.end_ms + self._close_offset, start, group.index, window.opened, window),
        )
        if self.idle_ms is not None:
            heapq.heappush(
                self._idle, (ctx.wall_ms + self.idle_ms, start, group.index, window.opened, window)
            )
        return window

    def _deliver(self, window: Window, event: Event, ctx: Context, out: list[Output]) -> None:
        window.last_wall_ms = ctx.wall_ms
        if ctx.trace is not None:
            ctx.trace.delivered(
                event.seq, window.group.value, WindowRef(window.start_ms, window.end_ms)
            )
        if self.aggregator is not None:
            self.aggregator.add(window.state, event.payload)
            return
        # rule: pass-through output is streamed, once per window
        out.append(
            Emission(
                WindowRef(window.start_ms, window.end_ms),
                window.group.value,
                dict(event.payload),
                "event",
                event.seq,
                ctx.wall_ms,
            )
        )

    def _late_drop(
        self, event: Event, t_ms: int, missed: list[tuple[int, int]], key: KeyState, group: Any
    ) -> Drop:
        return late_drop_windows(
            event.seq, t_ms, missed, self._close_offset + self.lateness_ms, key.clock.now_ms,
            idle_closed=missed[0][1] in key.idle_closed, group=group,
        )

    def _no_window_drop(self, event: Event, t_ms: int, now: int | None, group: Any) -> Drop:
        """An event in no window: between gapped windows, or before 0 (epoch_from_zero);
        ``late`` instead under rule no_window_late when it is behind the watermark."""
        if (
            self.rules.no_window_late == "late"
            and now is not None
            and t_ms + self.lateness_ms <= now - self.lag_ms
        ):
            return Drop(
                event.seq, "late", (),
                f"event time {t_ms} is in no window and behind the watermark "
                f"{now - self.lag_ms} (rule no_window_late: late)", group,
            )
        if self._from_zero and self.spec.bounds_containing(t_ms):
            why = "windows start at 0 (rule alignment: epoch_from_zero)"
        else:
            assert isinstance(self.spec, FixedWindows)  # cumulating windows have no gaps
            hop, size = self.spec.hop_ms, self.spec.size_ms
            below = t_ms - t_ms % hop
            why = (
                f"it falls between the windows [{below}, {below + size}) and "
                f"[{below + hop}, {below + hop + size}) (every {hop} > size {size})"
            )
        return Drop(event.seq, "no_window", (), f"event time {t_ms} is in no window: {why}", group)

    # --- rule: closing ("once the clock reaches its end plus tolerance")
    def _due(self, clocks: list[Clock]) -> list[Window]:
        """Pop the windows whose close point the clocks' ``now_ms`` reached, in close order."""
        due: list[Window] = []
        for clock in clocks:
            pending = clock.pending
            now = clock.now_ms
            if now is None:
                continue
            while pending and pending[0][0] <= now:
                window = heapq.heappop(pending)[4]
                if window.closed:
                    window.group.state.idle_closed.discard(window.end_ms)
                    continue
                due.append(window)
        if self.rules.close_order == "opened":
            due.sort(key=lambda w: w.opened)
        elif len(clocks) > 1:
            due.sort(key=lambda w: (w.end_ms, w.start_ms, w.group.index, w.opened))
        return due

    def _close(self, due: list[Window], reason: str, ctx: Context, out: list[Output]) -> None:
        for window in due:
            if window.fired:  # Flink's cleanup timer: allowed lateness is over, no output
                clock = window.group.state.clock
                point = window.end_ms + self._close_offset + self.lateness_ms
                if not window.closed and clock.now_ms >= point:
                    window.closed = True
                    del window.group.state.windows[window.end_ms]
                # else: the close point of a window an element fired first; cleanup later
            elif self.lateness_ms and reason == "close":
                self._fire(window, reason, ctx, out)
            else:
                self._close_one(window, reason, ctx, out, partial=False)

    def _fire(self, window: Window, reason: str, ctx: Context, out: list[Output]) -> None:
        """Emit a window and keep it until its allowed lateness is over (cleanup)."""
        window.fired = True
        self._emit(window, reason, ctx, out, partial=False)
        point = window.end_ms + self._close_offset + self.lateness_ms
        heapq.heappush(
            window.group.state.clock.pending,
            (point, window.start_ms, window.group.index, window.opened, window),
        )

    def _close_one(
        self, window: Window, reason: str, ctx: Context, out: list[Output], partial: bool
    ) -> None:
        window.closed = True
        key: KeyState = window.group.state
        del key.windows[window.end_ms]
        if ctx.trace is not None:
            ctx.trace.closed(window.group.value, WindowRef(window.start_ms, window.end_ms), reason)
        self._emit(window, reason, ctx, out, partial)

    def _emit(
        self, window: Window, reason: str, ctx: Context, out: list[Output], partial: bool
    ) -> None:
        """The window's rows as emissions (none for pass-through windows)."""
        if self.aggregator is None:
            return
        for row in self.aggregator.rows(window.state, window.start_ms, window.end_ms):
            out.append(
                Emission(
                    WindowRef(window.start_ms, window.end_ms),
                    window.group.value,
                    row,
                    reason,
                    ctx.after_seq,
                    ctx.wall_ms,
                    partial,
                )
            )

    # --- rule: idle_timeout ("force-closes an open window after that much wall-clock time")
    def on_wall(self, ctx: Context, out: list[Output]) -> None:
        idle = self._idle
        if not idle:
            return
        idle_ms = self.idle_ms
        assert idle_ms is not None
        wall = ctx.wall_ms
        due: list[Window] = []
        while idle and idle[0][0] <= wall:
            _, start, index, opened, window = heapq.heappop(idle)
            if window.closed:
                continue
            deadline = window.last_wall_ms + idle_ms
            if deadline > wall:
                heapq.heappush(idle, (deadline, start, index, opened, window))
                continue
            due.append(window)
        if self.rules.close_order == "opened":
            due.sort(key=lambda w: w.opened)
        for window in due:
            window.group.state.idle_closed.add(window.end_ms)
            self._close_one(window, "idle_timeout", ctx, out, partial=True)

    # --- rule: end of input ("When the input ends, all open windows are closed")
    def on_end(self, ctx: Context, out: list[Output]) -> None:
        if self.rules.clock_moves == "batch":
            # Spark runs one more (no-data) micro-batch with the watermark from all data seen
            clocks = list(self._dirty)
            for clock in clocks:
                clock.now_ms = clock.seen_ms
            self._dirty.clear()
            self._close(self._due(clocks), "close", ctx, out)
        if self.rules.end_of_input == "discard":
            return
        remaining = [  # windows kept after firing (allowed_lateness) fired already
            w for g in ctx.groups.values() if g.state is not None
            for w in g.state.windows.values() if not w.fired
        ]
        if self.rules.close_order == "opened":
            remaining.sort(key=lambda w: w.opened)
        else:
            remaining.sort(key=lambda w: (w.end_ms, w.start_ms, w.group.index))
        for window in remaining:
            self._close_one(window, "end_of_input", ctx, out, partial=True)
