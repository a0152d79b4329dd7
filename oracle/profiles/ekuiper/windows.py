"""eKuiper SLIDINGWINDOW, SESSIONWINDOW and COUNTWINDOW (E4-E6, E13-E15 in docs/semantics.md)."""

from __future__ import annotations

from windtunnel.oracle.model.results import Drop, Output, WindowRef
from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.profiles.ekuiper.operator import EkuiperOperator
from windtunnel.oracle.profiles.ekuiper.spec import natural_origin_ms
from windtunnel.oracle.profiles.ekuiper.watermark import Record
from windtunnel.oracle.windows.driver import Context
from windtunnel.oracle.windows.window_rows import require_rules


class SlidingOperator(EkuiperOperator):
    """E4: one window ``[t - size, t + delay]`` (both ends included; rule sliding_delay_end:
    open leaves ``t + delay`` out when there is a delay) per triggering event.

    Processing time without a delay: the window is emitted when its event arrives, holding the
    events seen so far. Otherwise when the clock (the watermark in event time, which has then
    released every record up to it) reaches ``t + delay``. ``OVER (WHEN c)``: only events for
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
        self.open_end = self.delay_ms > 0 and ctx.rules.sliding_delay_end == "open"

    def accept(self, record: Record, ctx: Context, out: list[Output]) -> None:
        self.buffer.append(record)
        when = self.spec.when
        if when is not None and not when.holds(record[2]):
            return
        if self.delay_ms == 0 and not self.event_time:
            self._fire(record[0], ctx, ctx.wall_ms, out)
        else:
            self.pending.append(record[0])
            self.pending.sort()

    def _fire(self, t_ms: int, ctx: Context, wall_ms: int, out: list[Output],
              reason: str = "close", partial: bool = False) -> None:
        lo, hi = t_ms - self.size_ms, t_ms + self.delay_ms
        last_ms = hi - 1 if self.open_end else hi  # rule sliding_delay_end
        records = [r for r in self.buffer if lo <= r[0] <= last_ms]
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
                                f"time {record[0]}", record[1].value))
        self.covered.difference_update(r[3] for r in self.buffer if r[0] < oldest)
        self.buffer = [r for r in self.buffer if r[0] >= oldest]

    def flush(self, ctx: Context, out: list[Output]) -> None:
        for t_ms in self.pending:
            self._fire(t_ms, ctx, ctx.wall_ms, out, "end_of_input", partial=True)
        self.pending = []

    def on_end(self, ctx: Context, out: list[Output]) -> None:
        super().on_end(ctx, out)
        for record in self.buffer:  # held by no emitted window nor one still waiting
            if record[3] not in self.covered and not self._waiting(record):
                out.append(Drop(record[3], "no_window", (), "no triggering event's window held "
                                f"time {record[0]} before the input ended",
                                record[1].value))

    def _waiting(self, record: Record) -> bool:
        """Whether a window still waiting for its delay would hold ``record``."""
        return any(t - self.size_ms <= record[0] <= t + self.delay_ms for t in self.pending)

    def unfinished(self) -> list[tuple[Record, tuple[WindowRef, ...]]]:
        """Records only windows still waiting for the clock would hold (end_of_input: discard)."""
        return [(r, tuple(WindowRef(t - self.size_ms, t + self.delay_ms) for t in self.pending
                          if t - self.size_ms <= r[0] <= t + self.delay_ms))
                for r in self.buffer if r[3] not in self.covered and self._waiting(r)]


class SessionOperator(EkuiperOperator):
    """E5: a session grows while events are at most ``timeout`` apart and closes when the clock
    passes ``last + timeout``. The maximum duration is checked only at ticks on the natural-time
    grid every ``max_duration``; at a tick T the session's records before T are emitted as
    ``[start, T)`` and the session goes on from T. Rule ``session_tick_cut``: ``lasted`` cuts
    when the clock reaches T and the session has lasted at least the maximum since its start;
    ``after_first_record`` cuts when a record after T arrives and ``T - max`` is strictly after
    the first record still buffered (the engine's event-time trigger)."""

    def __init__(self, query: Query, ctx: Context) -> None:
        super().__init__(query, ctx)
        assert self.spec.timeout_ms is not None and self.spec.max_duration_ms is not None
        require_rules(ctx.rules, "ekuiper session", session_close_at=("passes",),
                      session_ends=("gap",))
        self.timeout_ms = self.spec.timeout_ms
        self.max_ms_ = self.spec.max_duration_ms
        # rule session_gap: a gap equal to the timeout stays in the session (inclusive) or not
        self.split_gap_ms = self.timeout_ms + (1 if ctx.rules.session_gap == "inclusive" else 0)
        self.from_record = ctx.rules.session_tick_cut == "after_first_record"
        self.records: list[Record] = []
        self.start_ms: int | None = None
        self.last_ms: int | None = None
        self.origin_ms: int | None = None

    def _next_tick(self, after_ms: int) -> int:
        """The first tick strictly after ``after_ms``."""
        assert self.origin_ms is not None
        step = self.max_ms_
        return after_ms + step - (after_ms - self.origin_ms) % step

    def _due_tick(self) -> int | None:
        """The tick at which the open session is cut, if the clock and records allow it."""
        if self.start_ms is None or not self.records:
            return None
        if self.from_record:  # strictly more than the maximum after the first buffered record
            return self._next_tick(self.records[0][0] + self.max_ms_)
        tick = self._next_tick(self.start_ms)
        while tick - self.start_ms < self.max_ms_:
            tick += self.max_ms_
        return tick

    def _cut(self, tick: int, ctx: Context, wall_ms: int, out: list[Output]) -> None:
        before = [r for r in self.records if r[0] < tick]
        if before:
            assert self.start_ms is not None
            self.emit(out, WindowRef(self.start_ms, tick), before, "close", ctx, wall_ms)
        self.records = [r for r in self.records if r[0] >= tick]
        self.start_ms = tick

    def _cut_ticks(self, upto_ms: int, ctx: Context, wall_ms: int, out: list[Output],
                   *, record_ms: int | None = None) -> None:
        """Apply the ticks that are due before the session's timeout: under ``lasted`` those the
        clock ``upto_ms`` reached; under ``after_first_record`` those before ``record_ms``, the
        time of an arriving record."""
        while self.last_ms is not None:
            tick = self._due_tick()
            if tick is None or tick >= self.last_ms + self.timeout_ms + (
                    0 if self.from_record else 1):
                return
            if self.from_record:
                if record_ms is None or record_ms <= tick:
                    return
            elif tick > upto_ms:
                return
            self._cut(tick, ctx, wall_ms, out)

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
        self._cut_ticks(t_ms, ctx, ctx.wall_ms, out, record_ms=t_ms)
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

    def unfinished(self) -> list[tuple[Record, tuple[WindowRef, ...]]]:
        """The open session's records (end_of_input: discard)."""
        if self.start_ms is None or self.last_ms is None:
            return []
        ref = WindowRef(self.start_ms, self.last_ms + self.timeout_ms)
        return [(r, (ref,)) for r in self.records]

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
                                f"{self.count} before a window was triggered", old[1].value))
        del self.latest[: -self.count]
        if self.seen >= self.count and self.seen % self.interval == 0:
            ref = WindowRef(start_offset=self.seen - self.count, end_offset=self.seen)
            self.emit(out, ref, list(self.latest), "count", ctx, ctx.wall_ms,
                      row_end_ms=self._row_end(ctx))
            self.last_trigger = self.seen

    def unfinished(self) -> list[tuple[Record, tuple[WindowRef, ...]]]:
        """Records after the last trigger that no window held (end_of_input: discard)."""
        fresh = min(self.seen - self.last_trigger, self.count)
        return [(r, ()) for r in self.latest[len(self.latest) - fresh:]]

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
