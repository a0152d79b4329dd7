"""eKuiper SLIDINGWINDOW, SESSIONWINDOW and COUNTWINDOW (E4-E7 in docs/semantics.md)."""

from __future__ import annotations

from windtunnel.oracle.model.results import Drop, Output, WindowRef
from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.profiles.ekuiper.operator import EkuiperOperator, Record
from windtunnel.oracle.profiles.ekuiper.spec import natural_origin_ms
from windtunnel.oracle.windows.driver import Context
from windtunnel.oracle.windows.window_rows import require_rules


class SlidingOperator(EkuiperOperator):
    """E4: one window ``[t - size, t + delay]`` (both ends included) per triggering event.

    Without a delay the window is emitted when its event arrives, holding the events seen so
    far; with one, when the clock reaches ``t + delay``. ``OVER (WHEN c)``: only events for
    which ``c`` holds trigger.
    """

    def __init__(self, query: Query, ctx: Context) -> None:
        super().__init__(query, ctx)
        require_rules(ctx.rules, "ekuiper sliding", trailing_ends=("closed",))
        assert self.spec.size_ms is not None
        self.size_ms = self.spec.size_ms
        self.delay_ms = self.spec.delay_ms
        self.buffer: list[Record] = []
        self.pending: list[int] = []  # trigger times waiting for their delay
        self.covered: set[int] = set()  # seqs of buffered records some window held

    def accept(self, record: Record, ctx: Context, out: list[Output]) -> None:
        self.buffer.append(record)
        when = self.spec.when
        if when is not None and not when.holds(record[2]):
            return
        if self.delay_ms == 0:
            self._fire(record[0], ctx, ctx.wall_ms, out)
        else:
            self.pending.append(record[0])
            self.pending.sort()

    def _fire(self, t_ms: int, ctx: Context, wall_ms: int, out: list[Output],
              reason: str = "close", partial: bool = False) -> None:
        lo, hi = t_ms - self.size_ms, t_ms + self.delay_ms
        records = [r for r in self.buffer if lo <= r[0] <= hi]
        self.covered.update(r[3] for r in records)
        self.emit(out, WindowRef(lo, hi), records, reason, ctx, wall_ms, partial=partial)

    def advance(self, clock_ms: int, ctx: Context, wall_ms: int, out: list[Output]) -> None:
        while self.pending and self.pending[0] + self.delay_ms <= clock_ms:
            t_ms = self.pending.pop(0)
            self._fire(t_ms, ctx, wall_ms if self.event_time else t_ms + self.delay_ms, out)
        oldest = min([clock_ms - self.delay_ms, *self.pending]) - self.size_ms
        for record in self.buffer:
            if record[0] < oldest and record[3] not in self.covered:  # OVER (WHEN) never held it
                out.append(Drop(record[3], "no_window", (), "no triggering event's window held "
                                f"time {record[0]}"))
        self.covered.difference_update(r[3] for r in self.buffer if r[0] < oldest)
        self.buffer = [r for r in self.buffer if r[0] >= oldest]

    def flush(self, ctx: Context, out: list[Output]) -> None:
        for t_ms in self.pending:
            self._fire(t_ms, ctx, ctx.wall_ms, out, "end_of_input", partial=True)
        self.pending = []

    def on_end(self, ctx: Context, out: list[Output]) -> None:
        super().on_end(ctx, out)
        for record in self.buffer:  # held by no emitted window nor one still waiting
            waiting = any(t - self.size_ms <= record[0] <= t + self.delay_ms for t in self.pending)
            if record[3] not in self.covered and not waiting:
                out.append(Drop(record[3], "no_window", (), "no triggering event's window held "
                                f"time {record[0]} before the input ended"))


class SessionOperator(EkuiperOperator):
    """E5: a session grows while events are at most ``timeout`` apart; the maximum duration is
    checked only at ticks on the natural-time grid every ``max_duration``, where a session
    lasting at least that long is cut (the next session starts at the tick)."""

    def __init__(self, query: Query, ctx: Context) -> None:
        super().__init__(query, ctx)
        assert self.spec.timeout_ms is not None and self.spec.max_duration_ms is not None
        require_rules(ctx.rules, "ekuiper session", session_close_at=("passes",),
                      session_ends=("gap",))
        self.timeout_ms = self.spec.timeout_ms
        self.max_ms_ = self.spec.max_duration_ms
        # rule session_gap: a gap equal to the timeout stays in the session (inclusive) or not
        self.split_gap_ms = self.timeout_ms + (1 if ctx.rules.session_gap == "inclusive" else 0)
        self.records: list[Record] = []
        self.start_ms: int | None = None
        self.last_ms: int | None = None
        self.origin_ms: int | None = None

    def _next_tick(self, after_ms: int) -> int:
        """The first tick strictly after ``after_ms``."""
        assert self.origin_ms is not None
        step = self.max_ms_
        return after_ms + step - (after_ms - self.origin_ms) % step

    def _cut_ticks(self, upto_ms: int, ctx: Context, wall_ms: int, out: list[Output]) -> None:
        """Apply every tick in (start, upto_ms] before the session's timeout: cut the session
        where it has lasted at least the maximum; it goes on from the tick."""
        while self.start_ms is not None and self.last_ms is not None:
            tick = self._next_tick(self.start_ms)
            while tick - self.start_ms < self.max_ms_:
                tick += self.max_ms_
            if tick > min(upto_ms, self.last_ms + self.timeout_ms):
                return
            before = [r for r in self.records if r[0] < tick]
            if before:
                self.emit(out, WindowRef(self.start_ms, tick), before, "close", ctx, wall_ms)
            self.records = [r for r in self.records if r[0] >= tick]
            self.start_ms = tick

    def _close(self, ctx: Context, wall_ms: int, out: list[Output], reason: str = "close",
               partial: bool = False) -> None:
        assert self.start_ms is not None and self.last_ms is not None
        if self.records:
            ref = WindowRef(self.start_ms, self.last_ms + self.timeout_ms)
            self.emit(out, ref, self.records, reason, ctx, wall_ms, partial=partial)
        self.records = []
        self.start_ms = self.last_ms = None

    def accept(self, record: Record, ctx: Context, out: list[Output]) -> None:
        t_ms = record[0]
        if self.origin_ms is None:
            self.origin_ms = natural_origin_ms(t_ms, self.spec.unit, self.spec.timezone)
        self._cut_ticks(t_ms, ctx, ctx.wall_ms, out)
        if self.last_ms is not None and t_ms - self.last_ms >= self.split_gap_ms:
            self._close(ctx, ctx.wall_ms, out)
        if self.start_ms is None:
            self.start_ms = t_ms
        self.records.append(record)
        self.last_ms = t_ms if self.last_ms is None else max(self.last_ms, t_ms)

    def advance(self, clock_ms: int, ctx: Context, wall_ms: int, out: list[Output]) -> None:
        self._cut_ticks(clock_ms, ctx, wall_ms, out)
        if self.last_ms is not None and clock_ms > self.last_ms + self.timeout_ms:
            self._close(ctx, wall_ms, out)

    def flush(self, ctx: Context, out: list[Output]) -> None:
        if self.start_ms is not None:
            self._close(ctx, ctx.wall_ms, out, "end_of_input", partial=True)


class CountOperator(EkuiperOperator):
    """E6: nothing until ``count`` events; then the latest ``count`` events every ``interval``
    events (default ``count``: tumbling). Offsets count the stream's events from 0."""

    def __init__(self, query: Query, ctx: Context) -> None:
        super().__init__(query, ctx)
        assert self.spec.count is not None
        self.count = self.spec.count
        self.interval = self.spec.interval or self.spec.count
        self.seen = 0
        self.last_trigger = 0
        self.latest: list[Record] = []

    def accept(self, record: Record, ctx: Context, out: list[Output]) -> None:
        self.seen += 1
        self.latest.append(record)
        if len(self.latest) > self.count:  # the oldest leaves; was it in an emitted window?
            offset = self.seen - 1 - self.count
            if self.last_trigger <= offset:  # e.g. COUNTWINDOW(5, 2): "the 1st event is ignored"
                old = self.latest[0]
                out.append(Drop(old[3], "no_window", (), f"event offset {offset} left the latest "
                                f"{self.count} before a window was triggered"))
        del self.latest[: -self.count]
        if self.seen >= self.count and self.seen % self.interval == 0:
            ref = WindowRef(start_offset=self.seen - self.count, end_offset=self.seen)
            self.emit(out, ref, list(self.latest), "count", ctx, ctx.wall_ms,
                      row_end_ms=self._row_end(ctx))
            self.last_trigger = self.seen

    def flush(self, ctx: Context, out: list[Output]) -> None:
        fresh = self.seen - self.last_trigger
        if fresh:
            records = self.latest[-min(fresh, self.count):]
            ref = WindowRef(start_offset=self.seen - len(records), end_offset=self.seen)
            self.emit(out, ref, records, "end_of_input", ctx, ctx.wall_ms, partial=True,
                      row_end_ms=self._row_end(ctx))

    def _row_end(self, ctx: Context) -> int | None:
        """window_end() of a count window: none, or the trigger's wall time (count_window_end)."""
        return ctx.wall_ms if self.rules.count_window_end == "trigger_wall" else None
