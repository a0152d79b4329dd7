"""Timeplus streaming windows with emit policies (https://docs.timeplus.com/tumble-aggregation).

Rules TP1-TP10 in docs/semantics.md. The watermark belongs to the stream (rule ``clock_scope``)
and advances once per inserted batch (rule ``clock_moves: batch_inclusive``; ``event``: per
record): ``watermark = max event time - delay``. A window
``[start, end)`` closes when ``watermark >= end``; records of one batch are never late to each
other. Windows are per ``group_by`` key.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.fields import hashable
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef
from windtunnel.oracle.model.spec import NOW, FixedWindows, Query, SessionWindows
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.profiles.timeplus.spec import (
    TimeplusWindows,
    timeplus_from_fixed,
    timeplus_from_session,
)
from windtunnel.oracle.windows.driver import Context, Group, Operator, watermark_rejected
from windtunnel.oracle.windows.stages import filtered_drop, where_truth
from windtunnel.oracle.windows.trace import ClockView, deliver_all
from windtunnel.oracle.windows.window_rows import Rows, require_rules


class _Window:
    __slots__ = ("changed", "end_ms", "first_ms", "group", "last_ms", "last_rows", "payloads",
                 "start_ms", "state", "update_due_ms")

    def __init__(self, group: Group, start_ms: int, end_ms: int, state: Any) -> None:
        self.group = group
        self.start_ms = start_ms
        self.end_ms = end_ms  # sessions: last + timeout (or start + max_size when capped)
        self.first_ms = start_ms
        self.last_ms = start_ms  # sessions: the latest event time in it
        self.state = state
        self.changed = False  # received events since its last update emission
        self.update_due_ms: int | None = None  # rule update_delay: delayed: when it may go out
        self.last_rows: list[dict[str, Any]] | None = None
        self.payloads: list[tuple[int, Any]] = []  # (seq, payload), kept for session merges


class _Stream:
    """A watermark and the windows it closes (one per stream, or per key)."""

    __slots__ = ("batch_max_ms", "closed_until_ms", "last_event_wall_ms", "max_ms", "windows")

    def __init__(self) -> None:
        self.max_ms: int | None = None
        self.batch_max_ms: int | None = None
        self.closed_until_ms: int | None = None  # windows ending at or before it are closed
        self.last_event_wall_ms: int | None = None
        self.windows: list[_Window] = []


class TimeplusOperator(Operator):
    """Tumble, hop and session windows under every EMIT policy of the page."""

    def __init__(self, query: Query, ctx: Context) -> None:
        spec = query.window
        if isinstance(spec, FixedWindows):
            spec = timeplus_from_fixed(spec)
        elif isinstance(spec, SessionWindows):
            spec = timeplus_from_session(spec)
        assert isinstance(spec, TimeplusWindows)
        self.spec = spec
        self.emit = spec.emit
        self.rules = ctx.rules
        require_rules(
            ctx.rules, "timeplus", close_at=("reaches",), late_test=("window",),
            clock_moves=("batch_inclusive", "event"), clock_floor=("none",), alignment=("epoch",),
            empty_windows=("skip",), every_greater_than_size=("reject",),
            idle_closed_window=("late",), close_order=("window_time",),
        )
        if spec.window == "session":
            require_rules(
                ctx.rules, "timeplus session", session_close_at=("reaches",),
                session_late=("own",), closed_session=("late",), session_ends=("gap",),
            )
        self.per_event = ctx.rules.clock_moves == "event"
        self.rows = Rows(query)
        self.aggregator = (
            None if query.aggregate is None else Aggregator(query.aggregate, query.aggregate_by)
        )
        if self.aggregator is None and spec.emit.mode == "update":
            raise InvalidSpec("aggregate", None, "EMIT ON UPDATE needs an aggregation",
                              "add aggregate: {n: count()}")
        self.session = spec.window == "session"
        self._shared = _Stream() if ctx.rules.clock_scope == "stream" else None
        self._streams: list[_Stream] = [] if self._shared is None else [self._shared]
        self._batch_ms = spec.emit.batch_ms
        self._next_batch_tick_ms = None if self._batch_ms is None else ctx.wall_ms + self._batch_ms
        self._strict_gap = ctx.rules.session_gap == "exclusive"
        self._injected_ms: int | None = None  # the highest injected watermark (W1)
        # TP11: PARTITION BY: one watermark per value of the leading group_by fields
        self._partitions: dict[Any, _Stream] | None = None
        if spec.partition_by:
            if query.group_by[: len(spec.partition_by)] != spec.partition_by:
                raise InvalidSpec("group_by", list(query.group_by),
                                  f"must start with the PARTITION BY keys {list(spec.partition_by)}",
                                  "list the partition keys first")
            self._partitions = {}
            self._shared = None
            self._streams = []
        self._single_key = len(query.group_by) == 1
        self._version = 0  # TP11: emit_version(), one number per emitted window

    def _stream(self, group: Group) -> _Stream:
        if group.state is None:
            stream = self._shared
            if self._partitions is not None:
                values = [group.value] if self._single_key else list(group.value)
                key = hashable(values[: len(self.spec.partition_by)])
                stream = self._partitions.get(key)
                if stream is None:
                    stream = self._partitions[key] = _Stream()
                    stream.closed_until_ms = self._injected_ms
                    self._streams.append(stream)
            elif stream is None:
                stream = _Stream()
                stream.closed_until_ms = self._injected_ms  # W1: a new key starts there
                self._streams.append(stream)
            group.state = stream
        assert isinstance(group.state, _Stream)
        return group.state

    # --- TP2: assignment; late against the watermark of the previous batches
    def on_event(
        self, group: Group, event: Event, t_ms: int, ctx: Context, out: list[Output]
    ) -> None:
        where = self.spec.where
        if where is not None:  # TP11: WHERE, before windows, as the where stage (D1)
            verdict = where_truth(where, event.payload, ctx.rules)
            if verdict is not True:
                out.append(filtered_drop(event.seq, where, verdict, group.value, "WHERE"))
                return
        stream = self._stream(group)
        stream.last_event_wall_ms = ctx.wall_ms
        if stream.batch_max_ms is None or t_ms > stream.batch_max_ms:
            stream.batch_max_ms = t_ms
        targets = self._session_for(stream, group, t_ms) if self.session else self._fixed_for(
            stream, group, t_ms)
        if not targets:
            out.append(self._late(event.seq, t_ms, stream, group.value))
            return
        trace = ctx.trace
        for window in targets:
            if trace is not None and (self.aggregator is None or not self.session):
                trace.delivered(event.seq, group.value, WindowRef(window.start_ms, window.end_ms))
            if self.aggregator is None:
                out.append(Emission(WindowRef(window.start_ms, window.end_ms), group.value,
                                    dict(event.payload), "event", event.seq, ctx.wall_ms))
            else:
                self.aggregator.add(window.state, event.payload)
                if self.session:
                    window.payloads.append((event.seq, event.payload))
            window.changed = True
        if self.per_event:  # rule clock_moves: event: every record is its own insert
            self.on_batch_end(ctx, out)

    def _new(self, stream: _Stream, group: Group, start: int, end: int) -> _Window:
        window = _Window(group, start, end, None if self.aggregator is None else
                         self.aggregator.new())
        stream.windows.append(window)
        return window

    def _fixed_for(self, stream: _Stream, group: Group, t_ms: int) -> list[_Window]:
        closed = stream.closed_until_ms
        size = self.spec.size_ms
        targets = []
        for start in self.spec.starts_containing(t_ms):
            if closed is not None and start + size <= closed:
                continue
            window = next((w for w in stream.windows if w.group is group and w.start_ms == start),
                          None)
            targets.append(window or self._new(stream, group, start, start + size))
        return targets

    def _joins(self, gap_ms: int) -> bool:
        """Rule session_gap: a gap equal to the timeout splits (exclusive) or joins."""
        timeout = self.spec.size_ms
        return gap_ms < timeout if self._strict_gap else gap_ms <= timeout

    def _session_for(self, stream: _Stream, group: Group, t_ms: int) -> list[_Window]:
        timeout, cap = self.spec.size_ms, self.spec.max_size_ms
        joined = [w for w in stream.windows if w.group is group and self._joins(
            max(t_ms - w.last_ms, w.first_ms - t_ms, 0)) and (cap is None or (
                max(w.last_ms, t_ms) - min(w.first_ms, t_ms) < cap))]
        if not joined:
            closed = stream.closed_until_ms
            if closed is not None and t_ms + timeout <= closed:
                return []
            window = self._new(stream, group, t_ms, t_ms + timeout)
            window.last_ms = t_ms
            return [window]
        keep = joined[0]
        for other in joined[1:]:  # an event bridging sessions merges them
            if self.aggregator is not None:
                self._merge_state(keep, other)
            keep.first_ms = min(keep.first_ms, other.first_ms)
            keep.last_ms = max(keep.last_ms, other.last_ms)
            stream.windows.remove(other)
        keep.first_ms = keep.start_ms = min(keep.first_ms, t_ms)
        keep.last_ms = max(keep.last_ms, t_ms)
        keep.end_ms = keep.last_ms + timeout
        if cap is not None:
            keep.end_ms = min(keep.end_ms, keep.start_ms + cap)
        return [keep]

    def _merge_state(self, into: _Window, other: _Window) -> None:
        """Fold ``other``'s events into ``into``, in stream order."""
        assert self.aggregator is not None
        into.payloads = sorted(into.payloads + other.payloads, key=lambda p: p[0])
        into.state = self.aggregator.new()
        for _, payload in into.payloads:
            self.aggregator.add(into.state, payload)

    def _late(self, seq: int, t_ms: int, stream: _Stream, group: Any) -> Drop:
        if self.session:
            refs: tuple[WindowRef, ...] = (WindowRef(t_ms, t_ms + self.spec.size_ms),)
        else:
            refs = tuple(WindowRef(s, s + self.spec.size_ms)
                         for s in self.spec.starts_containing(t_ms))
        return Drop(seq, "late", refs,
                    f"event time {t_ms}: its windows closed when the watermark reached "
                    f"{stream.closed_until_ms}", group)

    # --- TP3/TP4/TP5: per inserted batch: advance the watermark, emit updates, close windows
    def on_batch_end(self, ctx: Context, out: list[Output]) -> None:
        first = len(out)
        for stream in self._streams:
            top = stream.batch_max_ms
            if top is None:
                continue
            stream.batch_max_ms = None
            if stream.max_ms is None or top > stream.max_ms:
                stream.max_ms = top
            if self.emit.mode == "update" and self._batch_ms is None:
                for window in self._ordered(self._updates_due(stream)):
                    self._update(window, ctx, ctx.wall_ms, out)
            watermark = stream.max_ms - self.emit.delay_ms
            self._close_until(stream, watermark, ctx, ctx.wall_ms, out)
        self._stamp(out, first)

    def _stamp(self, out: list[Output], first: int) -> None:
        """TP11: ``emit_version()``: the emissions from ``out[first]`` on get the next numbers
        from 0, one per emitted window (rows of one window share it)."""
        column = self.spec.emit_version
        if column is None:
            return
        previous = None
        for index in range(first, len(out)):
            emission = out[index]
            if not isinstance(emission, Emission):
                continue
            if previous is not None and emission.window != previous:
                self._version += 1
            previous = emission.window
            out[index] = replace(emission, row={**emission.row, column: self._version})
        if previous is not None:
            self._version += 1

    # --- W1: an injected watermark closes what it reaches, on every key's stream
    def on_watermark(self, to_ms: int, ctx: Context, out: list[Output]) -> None:
        if self.spec.on == NOW:
            raise watermark_rejected(
                ctx.profile, to_ms, "processing-time windows (on: now()) follow the wall clock, "
                "which watermarks do not move; use {advance: ...}")
        if self._injected_ms is None or to_ms > self._injected_ms:
            self._injected_ms = to_ms
        first = len(out)
        for stream in self._streams:
            self._close_until(stream, to_ms, ctx, ctx.wall_ms, out)
        self._stamp(out, first)

    def _updates_due(self, stream: _Stream) -> list[_Window]:
        """TP7, rule update_delay: the changed windows whose update goes out at this insert:
        all (immediate), or those whose clock is ``delay`` past their change (delayed)."""
        changed = [w for w in stream.windows if w.changed]
        if self.rules.update_delay == "immediate":
            return changed
        assert stream.max_ms is not None
        for window in changed:
            if window.update_due_ms is None:
                window.update_due_ms = stream.max_ms + self.emit.delay_ms
        return [w for w in changed if w.update_due_ms is not None and w.update_due_ms <= stream.max_ms]

    def _close_until(self, stream: _Stream, watermark: int, ctx: Context, wall_ms: int,
                     out: list[Output], reason: str = "close") -> None:
        if stream.closed_until_ms is None or watermark > stream.closed_until_ms:
            stream.closed_until_ms = watermark
        due = [w for w in stream.windows if w.end_ms <= stream.closed_until_ms]
        for window in self._ordered(due):
            stream.windows.remove(window)
            self._final(window, reason, ctx, wall_ms, out, partial=reason != "close")

    def _final(self, window: _Window, reason: str, ctx: Context, wall_ms: int,
               out: list[Output], *, partial: bool) -> None:
        trace = ctx.trace
        if trace is not None:  # a session's bounds are final only now
            ref = WindowRef(window.start_ms, window.end_ms)
            if self.session and self.aggregator is not None:
                deliver_all(trace, (seq for seq, _ in window.payloads), window.group.value, ref)
            trace.closed(window.group.value, ref, reason)
        if self.aggregator is None:
            return
        if self.emit.mode == "update":
            # a finalized window is not re-emitted; an update still pending (WITH BATCH, or a
            # window the wall clock closes inside an insert) is flushed
            if window.changed:
                self._update(window, ctx, wall_ms, out)
            return
        ref = WindowRef(window.start_ms, window.end_ms)
        for row in self.aggregator.rows(window.state, window.start_ms, window.end_ms):
            out.append(Emission(ref, window.group.value, row, reason, ctx.after_seq, wall_ms,
                                partial))

    def _update(self, window: _Window, ctx: Context, wall_ms: int, out: list[Output]) -> None:
        assert self.aggregator is not None
        window.changed = False
        window.update_due_ms = None
        end = window.last_ms + 1 if self.session else window.end_ms  # open session: max_ts + 1
        rows = self.aggregator.rows(window.state, window.start_ms, end)
        if self._batch_ms is not None and rows == window.last_rows:
            return  # WITH BATCH: emitted only "if they have changed"
        window.last_rows = rows
        for row in rows:
            out.append(Emission(WindowRef(window.start_ms, end), window.group.value, row,
                                "update", ctx.after_seq, wall_ms, True))

    @staticmethod
    def _ordered(windows: Any) -> list[_Window]:
        return sorted(windows, key=lambda w: (w.end_ms, w.start_ms, w.group.index))

    # --- TP6: EMIT TIMEOUT; TP8: ON UPDATE WITH BATCH ticks
    def on_wall(self, ctx: Context, out: list[Output]) -> None:
        first = len(out)
        self._on_wall(ctx, out)
        self._stamp(out, first)

    def _on_wall(self, ctx: Context, out: list[Output]) -> None:
        if self.spec.on == NOW:  # TP10: processing time: the wall clock is the event time
            delay = self.emit.delay_ms
            for stream in self._streams:
                due = sorted({w.end_ms for w in stream.windows if w.end_ms + delay <= ctx.wall_ms})
                for end in due:  # each closes when the wall clock reaches it (plus the delay)
                    self._close_until(stream, end, ctx, end + delay, out)
        timeout = self.emit.timeout_ms
        if timeout is not None:
            for stream in self._streams:
                last = stream.last_event_wall_ms
                if last is None or ctx.wall_ms < last + timeout or not stream.windows:
                    continue
                stream.last_event_wall_ms = None  # one force-close per quiet period
                self._timeout(stream, ctx, last + timeout, out)
        batch = self._batch_ms
        if batch is not None:
            assert self._next_batch_tick_ms is not None
            while self._next_batch_tick_ms <= ctx.wall_ms:
                tick = self._next_batch_tick_ms
                pending = [w for s in self._streams for w in s.windows if w.changed]
                if not pending:
                    tick += (ctx.wall_ms - tick) // batch * batch
                for window in self._ordered(pending):
                    self._update(window, ctx, tick, out)
                self._next_batch_tick_ms = tick + batch

    def _timeout(self, stream: _Stream, ctx: Context, wall_ms: int, out: list[Output]) -> None:
        newest = max(w.end_ms for w in stream.windows)
        if self.rules.timeout_closes == "all":
            forced = list(stream.windows)
        else:  # the page: "force-close the most recent window"
            forced = [w for w in stream.windows if w.end_ms == newest]
        for window in self._ordered(forced):
            stream.windows.remove(window)
            self._final(window, "idle_timeout", ctx, wall_ms, out, partial=True)
        # "Once the window is closed, the internal watermark (event time) advances as well."
        self._close_until(stream, newest, ctx, wall_ms, out)

    def clock_view(self, ctx: Context) -> ClockView:
        """The watermark (windows ending at or before it are closed) of the stream or of each
        key; ``clock_ms`` is the largest event time seen."""
        if self._shared is not None:
            return ClockView(False, self._shared.max_ms, self._shared.closed_until_ms)
        streams = [(g.value, g.state) for g in ctx.groups.values() if g.state is not None]
        return ClockView(True, keys=tuple((v, s.max_ms, s.closed_until_ms) for v, s in streams))

    def on_end(self, ctx: Context, out: list[Output]) -> None:
        if self.rules.end_of_input == "discard":
            if ctx.trace is not None and self.session and self.aggregator is not None:
                for window in (w for stream in self._streams for w in stream.windows):
                    ref = WindowRef(window.start_ms, window.end_ms)  # sessions lost at the end
                    deliver_all(ctx.trace, (q for q, _ in window.payloads), window.group.value, ref)
            return
        first = len(out)
        for stream in self._streams:
            for window in self._ordered(stream.windows):
                self._final(window, "end_of_input", ctx, ctx.wall_ms, out, partial=True)
            stream.windows = []
        self._stamp(out, first)
