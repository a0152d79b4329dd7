"""eKuiper windows (rules E1-E12 in docs/semantics.md).

Source: https://ekuiper.org/docs/en/latest/sqls/windows.html

Every eKuiper window is over the whole stream: ``GROUP BY`` keys split a window's rows, they do
not get windows or clocks of their own. The clock is the arrival wall clock (processing time)
or, in event time, the watermark ``max timestamp - lateness`` of the watermark stage
(``watermark.py``), moved by every record: a record behind it is late; kept records reach FILTER
and the window in time order once it reaches them. Windows fire when the clock reaches their end.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from windtunnel.oracle.model.conditions import parse_condition
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef
from windtunnel.oracle.model.spec import (
    CountWindows,
    FixedWindows,
    Query,
    SessionWindows,
    TrailingCountWindows,
    TrailingWindows,
)
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.profiles.ekuiper.spec import (
    EKUIPER_UNITS_MS,
    EkuiperWindows,
    natural_origin_ms,
)
from windtunnel.oracle.profiles.ekuiper.watermark import Record, WatermarkStage
from windtunnel.oracle.windows.driver import Context, Group, Operator, watermark_rejected
from windtunnel.oracle.windows.trace import ClockView
from windtunnel.oracle.windows.window_rows import Rows, require_rules

ERROR_FIELD = "_error"
"""An input event carrying this field is an upstream error event (E11)."""

END_OF_INPUT = "end_of_input"
"""Drop reason: under ``end_of_input: discard`` the record was in no emitted window (E12)."""


def ekuiper_from_fixed(spec: FixedWindows) -> EkuiperWindows:
    """The generic ``fixed`` kind under the ekuiper profile: tumbling or hopping windows in the
    largest unit dividing size and hop; ``tolerance`` is the event-time lateness. Raises InvalidSpec for idle_timeout."""
    if spec.idle_timeout_ms is not None:
        raise InvalidSpec("window.idle_timeout", spec.idle_timeout_ms,
                          "eKuiper windows have no idle timeout", "remove it under ekuiper")
    hopping = spec.every_ms is not None and spec.every_ms != spec.size_ms
    # the largest unit the lengths are whole numbers of: size 1min is TUMBLINGWINDOW(mi, 1),
    # aligned to the hour like the SQL form (E2)
    unit = _unit_of(spec.size_ms, spec.hop_ms)
    return EkuiperWindows(
        "hopping" if hopping else "tumbling", unit=unit, size_ms=spec.size_ms,
        hop_ms=spec.every_ms if hopping else None, on=spec.on, lateness_ms=spec.tolerance_ms,
    )


def _unit_of(*lengths_ms: int) -> str:
    """The largest eKuiper unit every length is a whole number of."""
    return next(u for u, ms in EKUIPER_UNITS_MS.items() if all(n % ms == 0 for n in lengths_ms))


def ekuiper_from_session(spec: SessionWindows) -> EkuiperWindows:
    """The generic ``session`` kind under the ekuiper profile: SESSIONWINDOW(unit,
    max_duration, gap) in event time, tolerance as the lateness. Raises InvalidSpec without a
    ``max_duration`` (SESSIONWINDOW needs one), or with ``max_events`` or ``idle_timeout``."""
    if spec.max_duration_ms is None:
        raise InvalidSpec("window.max_duration", None, "eKuiper's SESSIONWINDOW needs a maximum "
                          "duration", "add max_duration under ekuiper")
    for name, value in (("max_events", spec.max_events), ("idle_timeout", spec.idle_timeout_ms)):
        if value is not None:
            raise InvalidSpec(f"window.{name}", value, "eKuiper sessions have no such option",
                              f"remove {name} under ekuiper")
    return EkuiperWindows(
        "session", unit=_unit_of(spec.gap_ms, spec.max_duration_ms), timeout_ms=spec.gap_ms,
        max_duration_ms=spec.max_duration_ms, on=spec.on, lateness_ms=spec.tolerance_ms,
    )


def as_ekuiper(spec: object) -> EkuiperWindows:
    """An eKuiper spec, or a generic kind translated to one: ``fixed`` (tumbling/hopping),
    ``session``, ``count`` (COUNTWINDOW(count, every)), ``trailing`` (SLIDINGWINDOW in the
    largest unit dividing its size; ``every`` is rejected). Raises InvalidSpec."""
    if isinstance(spec, FixedWindows):
        return ekuiper_from_fixed(spec)
    if isinstance(spec, SessionWindows):
        return ekuiper_from_session(spec)
    if isinstance(spec, CountWindows):
        return EkuiperWindows("count", count=spec.count, interval=spec.every)
    if isinstance(spec, TrailingCountWindows):
        raise InvalidSpec("window.count", spec.count, "eKuiper's SLIDINGWINDOW is a duration "
                          "window", "give size, or use COUNTWINDOW (kind: count)")
    if isinstance(spec, TrailingWindows):
        for option, value in (("tolerance", spec.tolerance_ms), ("trigger", spec.trigger)):
            if value:
                raise InvalidSpec(f"window.{option}", str(value), "eKuiper's SLIDINGWINDOW has "
                                  f"no {option} (Tenzir's trailing windows do)",
                                  f"remove {option} under ekuiper (or use OVER (WHEN))")
        if spec.every_ms is not None:
            raise InvalidSpec("window.every", spec.every_ms, "eKuiper's SLIDINGWINDOW has no "
                              "trigger cadence", "remove every under ekuiper (or use OVER (WHEN))")
        return EkuiperWindows("sliding", unit=_unit_of(spec.size_ms), size_ms=spec.size_ms,
                              on=spec.on)
    assert isinstance(spec, EkuiperWindows)
    return spec


class EkuiperOperator(Operator):
    """Shared by every eKuiper window kind: errors, the watermark stage (event time), FILTER,
    WHERE, HAVING, output, and what end of input loses."""

    def __init__(self, query: Query, ctx: Context) -> None:
        spec = as_ekuiper(query.window)
        self.spec = spec
        self.rules = ctx.rules
        require_rules(
            ctx.rules, "ekuiper", close_at=("reaches",), late_test=("record",),
            clock_scope=("stream",), clock_moves=("event",), clock_floor=("none",),
            alignment=("epoch",), close_order=("window_time",),
        )
        self.rows = Rows(query)
        self.event_time = spec.event_time
        where_first = (spec.where is not None and ctx.rules.where_placement == "per_kind"
                       and not spec.event_time and spec.window in ("tumbling", "hopping",
                                                                   "session"))
        self.before = [c for c in (spec.filter, spec.where if where_first else None) if c]
        self.after = None if where_first else spec.where
        self.emit_empty = ctx.rules.empty_windows == "emit"
        # rule where_emptied: a window a post-window WHERE leaves without rows emits nothing
        self.emptied_emits = ctx.rules.where_emptied == "emit" or self.after is None
        self.stage = WatermarkStage(spec.lateness_ms) if spec.event_time else None
        # HAVING may name a call such as count(*): it reads the column computing it; a call
        # no aggregation computes is an input error (it would silently never hold)
        calls = {} if query.aggregate is None else {
            f"{a.function}({a.field or ('*' if a.function == 'count' else '')})".lower(): a.name
            for a in query.aggregate
        }
        self.having = None if spec.having is None else parse_condition(
            spec.having.text, "window.having", columns=calls)

    # --- E11: errors; E10: the watermark stage; E9: FILTER (and a pre-window WHERE)
    def on_event(
        self, group: Group, event: Event, t_ms: int, ctx: Context, out: list[Output]
    ) -> None:
        payload = event.payload
        if ERROR_FIELD in payload:
            out.append(Drop(event.seq, "error", (), f"error event forwarded to the sink: "
                                                    f"{payload[ERROR_FIELD]}", group.value))
            return
        record = (t_ms, group, payload, event.seq)
        stage = self.stage
        if stage is None:  # processing time: records reach the window as they arrive
            self.deliver(record, ctx, out)
            return
        if stage.late(t_ms):  # late before FILTER sees it
            out.append(Drop(event.seq, "late", (), f"event time {t_ms} is behind the "
                                                   f"watermark {stage.watermark_ms}", group.value))
            return
        stage.hold(record)
        self.watermark_to(stage.target_ms(), ctx, out)

    def on_watermark(self, to_ms: int, ctx: Context, out: list[Output]) -> None:
        """An injected watermark ``{watermark: T}``: the stage moves to T (never back), releases
        what it reaches and fires the windows ending by T. Processing time has no watermark:
        the item is an input error."""
        if self.stage is None:
            raise watermark_rejected(ctx.profile, to_ms, "eKuiper processing-time windows (no "
                                     "`on` field) have no watermark; use {advance: ...}")
        self.watermark_to(to_ms, ctx, out)

    def watermark_to(self, to_ms: int | None, ctx: Context, out: list[Output]) -> None:
        """Move the stage's watermark: released records reach the window in time order, then
        every window the watermark reaches fires."""
        assert self.stage is not None
        released = self.stage.move(to_ms)
        if released is None:
            return
        for record in released:
            self.deliver(record, ctx, out)
        assert self.stage.watermark_ms is not None
        self.advance(self.stage.watermark_ms, ctx, ctx.wall_ms, out)

    def deliver(self, record: Record, ctx: Context, out: list[Output]) -> None:
        """FILTER (and a WHERE placed before the window), then the window."""
        for condition in self.before:
            if not condition.holds(record[2]):
                out.append(Drop(record[3], "filtered", (), f"({condition}) is false before "
                                                           "windowing", record[1].value))
                return
        self.accept(record, ctx, out)

    def on_wall(self, ctx: Context, out: list[Output]) -> None:
        if not self.event_time:
            self.advance(ctx.wall_ms, ctx, ctx.wall_ms, out)

    def accept(self, record: Record, ctx: Context, out: list[Output]) -> None:
        raise NotImplementedError

    def advance(self, clock_ms: int, ctx: Context, wall_ms: int, out: list[Output]) -> None:
        """The clock moved to ``clock_ms``: fire what is due."""

    # --- E9: WHERE after windowing; E8: HAVING; one row set per group
    def emit(self, out: list[Output], ref: WindowRef, records: list[Record], reason: str,
             ctx: Context, wall_ms: int, *, partial: bool = False,
             row_end_ms: int | None = None) -> None:
        """Emissions of ``records`` in window ``ref``; ``row_end_ms`` replaces the window's end
        as the value of ``window_end()`` (count windows under rule count_window_end)."""
        end_ms = ref.end_ms if row_end_ms is None else row_end_ms
        if ctx.trace is not None:
            for _, group, _, seq in records:
                ctx.trace.delivered(seq, group.value, ref)
            groups = {r[1].index: r[1].value for r in records} if records else {0: None}
            for value in groups.values():
                ctx.trace.closed(value, ref, reason)
        kept = [r for r in records if self.after is None or self.after.holds(r[2])]
        by_group: dict[int, tuple[Group, list[Mapping[str, Any]]]] = {}
        for _, group, payload, _ in kept:
            by_group.setdefault(group.index, (group, []))[1].append(payload)
        if not by_group:
            if not self.emit_empty or not self.emptied_emits:
                return
            emitted = [(None, self.rows.rows([], ref.start_ms, end_ms))]
        else:
            emitted = [(g.value, self.rows.rows(p, ref.start_ms, end_ms))
                       for g, p in by_group.values()]
        having = self.having
        for value, rows in emitted:
            for row in rows:
                if having is None or having.holds(row):
                    out.append(Emission(ref, value, row, reason, ctx.after_seq, wall_ms, partial))

    # --- E12: end of input: flush, or report what is lost
    def on_end(self, ctx: Context, out: list[Output]) -> None:
        if self.rules.end_of_input == "flush":
            if self.stage is not None:  # the source ended: nothing more can be late
                for record in self.stage.release_all():
                    self.deliver(record, ctx, out)
            self.flush(ctx, out)
            return
        if self.stage is not None:
            watermark = self.stage.watermark_ms
            for record in self.stage.held:
                out.append(Drop(record[3], END_OF_INPUT, (), f"lost at end of input: the "
                                f"watermark {watermark} never reached time {record[0]} "
                                "(rule end_of_input: discard)", record[1].value))
        for record, windows in self.unfinished():
            if ctx.trace is not None:  # held by windows never emitted
                for window in windows:
                    ctx.trace.delivered(record[3], record[1].value, window)
            out.append(Drop(record[3], END_OF_INPUT, windows, "lost at end of input: no window "
                            f"holding time {record[0]} was emitted (rule end_of_input: discard)", record[1].value))

    def clock_view(self, ctx: Context) -> ClockView | None:
        """The watermark stage's watermark (event time); None in processing time."""
        if self.stage is None:
            return None
        return ClockView(False, self.stage.watermark_ms, self.stage.watermark_ms)

    def unfinished(self) -> list[tuple[Record, tuple[WindowRef, ...]]]:
        """Records the window holds that no emitted window held, with their open windows."""
        return []

    def flush(self, ctx: Context, out: list[Output]) -> None:
        """Emit what is open at end of input (rule ``end_of_input: flush``; eKuiper loses it)."""


class GridOperator(EkuiperOperator):
    """TUMBLINGWINDOW and HOPPINGWINDOW: windows on a grid aligned to natural time (E2, E3)."""

    def __init__(self, query: Query, ctx: Context) -> None:
        super().__init__(query, ctx)
        assert self.spec.size_ms is not None
        self.size_ms = self.spec.size_ms
        self.step_ms = self.spec.step_ms
        if self.step_ms > self.size_ms and ctx.rules.every_greater_than_size == "reject":
            raise InvalidSpec("window.hop", self.step_ms, f"larger than the size {self.size_ms} "
                              "(rule every_greater_than_size: reject)", "make hop <= size")
        self.buffer: list[Record] = []
        self.origin_ms: int | None = None
        self.next_start_ms: int | None = None
        self.first_reported = False
        # rule hopping_first_windows (event time): no window starts before the first record's hop
        self.from_first_hop = (self.event_time
                               and ctx.rules.hopping_first_windows == "from_first_hop")
        self.by_ends = ctx.rules.hopping_layout == "ends"
        if not self.event_time:  # processing time: windows run from the rule's start
            self._start_grid(ctx.wall_ms)

    def _start_grid(self, t_ms: int) -> None:
        self.origin_ms = natural_origin_ms(t_ms, self.spec.unit, self.spec.timezone)
        if self.by_ends:  # rule hopping_layout: ends on the grid, so starts sit size before
            self.origin_ms -= self.size_ms
        self.next_start_ms = self._first_start(t_ms)
        self.first_ms = t_ms
        if self.from_first_hop:  # the start of the hop holding the first event
            # (records reach the window in time order, so none comes before it)
            self.next_start_ms = t_ms - (t_ms - self.origin_ms) % self.step_ms

    def _first_start(self, t_ms: int) -> int:
        """Start of the earliest grid window ``[s, s + size)`` holding ``t_ms``."""
        assert self.origin_ms is not None
        first = t_ms - self.size_ms + 1
        return first + (self.origin_ms - first) % self.step_ms

    def accept(self, record: Record, ctx: Context, out: list[Output]) -> None:
        if self.next_start_ms is None:
            self._start_grid(record[0])
        assert self.origin_ms is not None
        if (record[0] - self.origin_ms) % self.step_ms >= self.size_ms:  # a gap (hop > size)
            out.append(Drop(record[3], "no_window", (), f"time {record[0]} falls between "
                            f"hopping windows of {self.size_ms} ms every {self.step_ms} ms",
                            record[1].value))
            return
        self.buffer.append(record)

    def advance(self, clock_ms: int, ctx: Context, wall_ms: int, out: list[Output]) -> None:
        start = self.next_start_ms
        if start is None:
            return
        while start + self.size_ms <= clock_ms:
            if not self.emit_empty and not any(start <= r[0] for r in self.buffer):
                # nothing left to emit: jump past every due window
                start += (clock_ms - start - self.size_ms) // self.step_ms * self.step_ms
                start += self.step_ms
                break
            end = start + self.size_ms
            records = [r for r in self.buffer if start <= r[0] < end]
            fired = wall_ms if self.event_time else end  # processing time: the timer at the end
            self.emit(out, self._ref(start, end), records, "close", ctx, fired)
            start += self.step_ms
            self.buffer = [r for r in self.buffer if r[0] >= start]
        self.next_start_ms = start

    def _ref(self, start: int, end: int) -> WindowRef:
        """E12: the first event-time window reports the first event's time (rule first_window)."""
        if (self.event_time and not self.first_reported
                and self.rules.first_window == "first_event"):
            self.first_reported = True
            if self.spec.window == "tumbling":
                return WindowRef(self.first_ms, end)
            return WindowRef(self.first_ms - self.step_ms, end)
        self.first_reported = True
        return WindowRef(start, end)

    def unfinished(self) -> list[tuple[Record, tuple[WindowRef, ...]]]:
        """Buffered records past every fired window (the last fired one starts a hop before
        the next start), with the windows still open that hold them."""
        start = self.next_start_ms
        if start is None:
            return []
        lost = []
        for record in self.buffer:
            if record[0] - self.size_ms >= start - self.step_ms:
                first = self._first_start(record[0])
                open_refs = tuple(WindowRef(s, s + self.size_ms)
                                  for s in range(max(first, start), record[0] + 1, self.step_ms))
                lost.append((record, open_refs))
        return lost

    def flush(self, ctx: Context, out: list[Output]) -> None:
        start = self.next_start_ms
        while start is not None and self.buffer and start <= max(r[0] for r in self.buffer):
            records = [r for r in self.buffer if start <= r[0] < start + self.size_ms]
            if records:
                self.emit(out, self._ref(start, start + self.size_ms), records, "end_of_input",
                          ctx, ctx.wall_ms, partial=True)
            start += self.step_ms
