"""kdb Insights event-time windows: ``.qsp.window.tumbling`` and ``.qsp.window.sliding``.

Source: https://code.kx.com/insights/1.11/api/stream-processor/q/windows.html; every rule is
cited in docs/semantics.md (K1-K10, K14).
Windows are half-open ``[start_ms, start_ms + duration_ms)`` with ``start_ms`` a multiple of
``period_ms`` (epoch-aligned). Records are buffered; a window is *triggered* (emitted whole) when a
published batch holds a timestamp at or past its end plus ``lateness`` ("per published batch":
rule ``clock_moves: batch_inclusive``; ``event`` evaluates after every record).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from windtunnel.oracle.model.results import Drop, Output, WindowRef
from windtunnel.oracle.model.spec import FixedWindows, Query
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.profiles.kdb.spec import KdbTimeWindows, kdb_from_fixed
from windtunnel.oracle.windows.driver import Context, Group, Operator
from windtunnel.oracle.windows.trace import ClockView, deliver_all
from windtunnel.oracle.windows.window_rows import Rows, require_rules

LATE_PASSTHROUGH = "late_passthrough"
"""Emission reason of the separate batch of late records (kdb's ``isLatePassthrough`` flag)."""


class _Record:
    __slots__ = ("payload", "seq", "t_ms")

    def __init__(self, t_ms: int, seq: int, payload: Mapping[str, Any]) -> None:
        self.t_ms = t_ms
        self.seq = seq
        self.payload = payload


class _Frontier:
    """The trigger state shared by the keys on one clock (rule ``clock_scope``).

    ``next_start_ms``: start of the earliest window not yet triggered (records before it are
    late); set by the earliest record of the first batch, as is ``first_start_ms`` (the first
    window's start). ``max_ms``: largest timestamp seen in finished batches.
    """

    __slots__ = (
        "batch_max_ms", "buffers", "first_start_ms", "last_emit_wall_ms", "max_ms",
        "next_start_ms", "settled",
    )

    def __init__(self, wall_ms: int) -> None:
        self.next_start_ms: int | None = None
        self.first_start_ms: int | None = None
        self.max_ms: int | None = None
        self.batch_max_ms: int | None = None
        self.last_emit_wall_ms = wall_ms
        self.buffers: list[_Buffer] = []
        self.settled = False  # True once a batch has been processed: the first window is fixed


class _Buffer:
    """One key's buffered records (``records``), late records held for passthrough (``late``)."""

    __slots__ = ("dirty", "frontier", "group", "late", "records")

    def __init__(self, group: Group, frontier: _Frontier) -> None:
        self.group = group
        self.frontier = frontier
        self.records: list[_Record] = []
        self.late: list[_Record] = []
        self.dirty = False


class KdbTimeOperator(Operator):
    """Tumbling and sliding windows as the kdb Insights page documents them."""

    def __init__(self, query: Query, ctx: Context) -> None:
        spec = query.window
        if isinstance(spec, FixedWindows):
            spec = kdb_from_fixed(spec)
        assert isinstance(spec, KdbTimeWindows)
        self.spec = spec
        self.rules = ctx.rules
        require_rules(
            ctx.rules, "kdb tumbling and sliding",
            close_at=("reaches", "passes"), late_test=("window",),
            clock_moves=("batch_inclusive", "event"), clock_floor=("none",),
            alignment=("epoch",), close_order=("window_time",),
            every_greater_than_size=("reject",),
        )
        self.rows = Rows(query)
        self.period_ms = spec.period_ms
        self.size_ms = spec.size_ms
        per_record = ctx.rules.clock_moves == "event"
        self.per_record = per_record
        # K3/K5: close point offset after the window end
        passthrough_end = spec.passthrough and ctx.rules.passthrough_close == "end"
        offset = 0 if passthrough_end else spec.lateness_ms
        self.close_offset_ms = offset + (1 if ctx.rules.close_at == "passes" else 0)
        self.skip_empty = spec.skip_empty_windows or ctx.rules.empty_windows == "skip"
        # K2's alternative (rule hopping_first_windows): the first window starts at the period
        # holding the first record, and no earlier window exists
        self.from_first_hop = ctx.rules.hopping_first_windows == "from_first_hop"
        self._stream = _Frontier(ctx.wall_ms) if ctx.rules.clock_scope == "stream" else None
        self._frontiers: list[_Frontier] = [] if self._stream is None else [self._stream]
        self._touched: list[_Buffer] = []
        self._start_wall_ms = ctx.wall_ms
        self._next_tick_ms = ctx.wall_ms + spec.period_ms

    def _buffer(self, group: Group, ctx: Context) -> _Buffer:
        buffer = group.state
        if buffer is None:
            frontier = self._stream
            if frontier is None:
                frontier = _Frontier(ctx.wall_ms)
                self._frontiers.append(frontier)
            buffer = group.state = _Buffer(group, frontier)
            frontier.buffers.append(buffer)
        assert isinstance(buffer, _Buffer)
        return buffer

    # --- K2/K4: assignment, late records, per-batch triggering
    def on_event(
        self, group: Group, event: Event, t_ms: int, ctx: Context, out: list[Output]
    ) -> None:
        buffer = self._buffer(group, ctx)
        frontier = buffer.frontier
        record = _Record(t_ms, event.seq, event.payload)
        if not frontier.settled:  # the first window holds the first batch's earliest record
            first = t_ms - t_ms % self.period_ms if self.from_first_hop else self.spec.first_start(t_ms)
            if frontier.next_start_ms is None or first < frontier.next_start_ms:
                frontier.next_start_ms = frontier.first_start_ms = first
        next_start = frontier.next_start_ms
        assert next_start is not None and frontier.first_start_ms is not None
        if self.from_first_hop and t_ms < frontier.first_start_ms:
            out.append(Drop(record.seq, "no_window", (), f"event time {t_ms} is before the first "
                            f"window, which starts at the first record's period "
                            f"{frontier.first_start_ms} (rule hopping_first_windows: "
                            "from_first_hop)", group.value))
        elif t_ms < next_start:
            if self.spec.passthrough:
                buffer.late.append(record)
            else:
                out.append(self._late_drop(record, next_start, group.value))
        else:
            buffer.records.append(record)
            buffer.dirty = True
        if frontier.batch_max_ms is None or t_ms > frontier.batch_max_ms:
            frontier.batch_max_ms = t_ms
        self._touched.append(buffer)
        if self.per_record:
            self.on_batch_end(ctx, out)

    def on_batch_end(self, ctx: Context, out: list[Output]) -> None:
        touched, self._touched = self._touched, []
        frontiers: list[_Frontier] = []
        for buffer in touched:
            if buffer.frontier not in frontiers:
                frontiers.append(buffer.frontier)
        for frontier in frontiers:
            batch_max = frontier.batch_max_ms
            if batch_max is not None and (frontier.max_ms is None or batch_max > frontier.max_ms):
                frontier.max_ms = batch_max
            frontier.batch_max_ms = None
            frontier.settled = True
            self._trigger(frontier, ctx, out)
        if self.spec.count_trigger is not None:
            seen: list[_Buffer] = []
            for buffer in touched:
                if buffer not in seen:
                    seen.append(buffer)
                    self._count_trigger(buffer, ctx, out)

    def _trigger(self, frontier: _Frontier, ctx: Context, out: list[Output]) -> None:
        start = frontier.next_start_ms
        top = frontier.max_ms
        if start is None or top is None:
            return
        while start + self.size_ms + self.close_offset_ms <= top:
            if self.skip_empty:
                start = self._skip_empty_from(frontier, start, top)
                frontier.next_start_ms = start
                if start + self.size_ms + self.close_offset_ms > top:
                    break
            for buffer in frontier.buffers:
                self._emit_late(buffer, ctx, out)
                window = self._window_records(buffer, start)
                if window or not self.skip_empty:
                    self._emit(buffer, start, window, "close", ctx, out, partial=False)
                # records before the next window's start belong to no later window
                cut = start + self.period_ms
                buffer.records = [r for r in buffer.records if r.t_ms >= cut]
            start += self.period_ms
            frontier.next_start_ms = start
            frontier.last_emit_wall_ms = ctx.wall_ms
            for buffer in frontier.buffers:  # the new current window was never emitted
                buffer.dirty = bool(buffer.records)

    def _skip_empty_from(self, frontier: _Frontier, start: int, top: int) -> int:
        """The first window start >= ``start`` holding a record (or past every closable one)."""
        earliest = min(
            (r.t_ms for b in frontier.buffers for r in b.records), default=None
        )
        if earliest is None:
            last = top - self.close_offset_ms - self.size_ms
            return last - last % self.period_ms + self.period_ms
        return max(start, self.spec.first_start(earliest))

    def _window_records(self, buffer: _Buffer, start: int) -> list[_Record]:
        end = start + self.size_ms
        records = [r for r in buffer.records if start <= r.t_ms < end]
        if self.spec.sort:  # K7: "Sort the window in ascending time order" (stable)
            records.sort(key=lambda r: r.t_ms)
        return records

    def _emit(
        self,
        buffer: _Buffer,
        start: int,
        records: list[_Record],
        reason: str,
        ctx: Context,
        out: list[Output],
        *,
        partial: bool,
    ) -> None:
        if ctx.trace is not None:
            ref = WindowRef(start, start + self.size_ms)
            deliver_all(ctx.trace, (r.seq for r in records), buffer.group.value, ref)
            ctx.trace.closed(buffer.group.value, ref, reason)
        self.rows.emit(
            out,
            WindowRef(start, start + self.size_ms),
            buffer.group.value,
            [r.payload for r in records],
            reason,
            ctx.after_seq,
            ctx.wall_ms,
            partial=partial,
        )
        buffer.dirty = False

    # --- K5: passthrough of late records, "in a single batch", before the next window
    def _emit_late(self, buffer: _Buffer, ctx: Context, out: list[Output]) -> None:
        if not buffer.late:
            return
        late, buffer.late = buffer.late, []
        if self.spec.sort:
            late.sort(key=lambda r: r.t_ms)
        first = min(self.spec.first_start(r.t_ms) for r in late)
        last = max(r.t_ms - r.t_ms % self.period_ms for r in late)
        if ctx.trace is not None:
            ref = WindowRef(first, last + self.size_ms)
            deliver_all(ctx.trace, (r.seq for r in late), buffer.group.value, ref)
            ctx.trace.closed(buffer.group.value, ref, LATE_PASSTHROUGH)
        self.rows.emit(
            out,
            WindowRef(first, last + self.size_ms),
            buffer.group.value,
            [r.payload for r in late],
            LATE_PASSTHROUGH,
            ctx.after_seq,
            ctx.wall_ms,
        )

    def _late_drop(self, record: _Record, next_start_ms: int, group: Any) -> Drop:
        first = self.spec.first_start(record.t_ms)
        refs = tuple(
            WindowRef(s, s + self.size_ms)
            for s in range(first, record.t_ms + 1, self.period_ms)
        )
        return Drop(
            record.seq,
            "late",
            refs,
            f"event time {record.t_ms} is before the current window start {next_start_ms}: "
            "its windows were already triggered",
            group,
        )

    # --- K8: countTrigger ("the threshold at which the entire buffer will be flushed")
    def _count_trigger(self, buffer: _Buffer, ctx: Context, out: list[Output]) -> None:
        limit = self.spec.count_trigger
        assert limit is not None
        if len(buffer.records) + len(buffer.late) < limit:
            return
        self._emit_late(buffer, ctx, out)  # "a cleanup of any late data"
        if len(buffer.records) < limit:
            return
        self._flush_partial(buffer, "count", ctx, out)
        buffer.records = []

    def _flush_partial(self, buffer: _Buffer, reason: str, ctx: Context, out: list[Output]) -> None:
        """Emit every untriggered window holding buffered records, flagged partial."""
        frontier = buffer.frontier
        if not buffer.records or frontier.next_start_ms is None:
            return
        start = frontier.next_start_ms
        last = max(r.t_ms for r in buffer.records)
        while start <= last:
            records = self._window_records(buffer, start)
            if records:
                self._emit(buffer, start, records, reason, ctx, out, partial=True)
            start += self.period_ms
        frontier.last_emit_wall_ms = ctx.wall_ms

    # --- K9: the idle timer, every period of wall time
    def _timer_elapsed(self, since_ms: int) -> bool:
        """K9, rule idle_timer_elapsed: has the time since the last emission "exceeded" the period?"""
        if self.rules.idle_timer_elapsed == "passes":
            return since_ms > self.period_ms
        return since_ms >= self.period_ms

    def on_wall(self, ctx: Context, out: list[Output]) -> None:
        period = self.period_ms
        while self._next_tick_ms <= ctx.wall_ms:
            tick = self._next_tick_ms
            if not any(b.dirty for f in self._frontiers for b in f.buffers):
                # nothing changed: jump to the last tick not after the wall clock
                self._next_tick_ms = tick + (ctx.wall_ms - tick) // period * period + period
                continue
            for frontier in self._frontiers:
                start = frontier.next_start_ms
                if start is None or not self._timer_elapsed(tick - frontier.last_emit_wall_ms):
                    continue
                emitted = False
                for buffer in frontier.buffers:
                    records = self._window_records(buffer, start)
                    if buffer.dirty and records:
                        if ctx.trace is not None:
                            ref = WindowRef(start, start + self.size_ms)
                            deliver_all(ctx.trace, (r.seq for r in records), buffer.group.value, ref)
                            ctx.trace.closed(buffer.group.value, ref, "timer")
                        self.rows.emit(
                            out,
                            WindowRef(start, start + self.size_ms),
                            buffer.group.value,
                            [r.payload for r in records],
                            "timer",
                            ctx.after_seq,
                            tick,
                            partial=True,
                        )
                        buffer.dirty = False
                        emitted = True
                if emitted:
                    frontier.last_emit_wall_ms = tick
            self._next_tick_ms = tick + period

    def clock_view(self, ctx: Context) -> ClockView:
        """The largest event time seen (``max_ms``) of the stream or of each key."""
        if self._stream is not None:
            return ClockView(False, self._stream.max_ms, self._stream.max_ms)
        buffers = [g.state for g in ctx.groups.values() if isinstance(g.state, _Buffer)]
        return ClockView(
            True, keys=tuple((b.group.value, b.frontier.max_ms, b.frontier.max_ms) for b in buffers)
        )

    # --- K10: teardown emits partial windows and held late records
    def on_end(self, ctx: Context, out: list[Output]) -> None:
        if self.rules.end_of_input == "discard":
            return
        for frontier in self._frontiers:
            for buffer in frontier.buffers:
                self._emit_late(buffer, ctx, out)
                self._flush_partial(buffer, "end_of_input", ctx, out)
                buffer.records = []
