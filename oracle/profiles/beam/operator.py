"""The ``beam`` operator: Beam's windowing, triggers and panes over one stream (B1-B14 in
docs/semantics.md).

Per key (``group_by``, Beam's key), each window keeps a :class:`WindowState`. A scenario's
event is a bundle of one, a ``batch`` one bundle. A bundle is processed at the watermark
before it (the *input watermark*): elements whose every window is expired are dropped
(``late``), sessions merge, each window takes its elements and asks its trigger whether to
fire (reason ``element``). Then timers that are due fire: event-time timers when the
watermark reaches them (``watermark``; ``end_of_input`` for the final watermark), processing-
time timers when the wall clock does (``processing_time``). The watermark is one for the
stream (rule ``beam_watermark``); end of input moves it to +inf.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.results import Drop, Output, Pane, PaneEmission, WindowRef
from windtunnel.oracle.model.spec import NOW, FixedWindows, Query, SessionWindows
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.model.timefmt import BEAM_MAX_MS, BEAM_MIN_MS
from windtunnel.oracle.profiles.beam.rules import check_beam_rules
from windtunnel.oracle.profiles.beam.spec import BeamWindows, WindowFn
from windtunnel.oracle.profiles.beam.trigger_state import TriggerMachine, has_ontime_pane
from windtunnel.oracle.profiles.beam.window_state import (
    PROCESSING,
    WATERMARK,
    Element,
    Timer,
    WindowState,
)
from windtunnel.oracle.profiles.beam.windows import Bounds, assign, merges
from windtunnel.oracle.windows.driver import Context, Group, Operator
from windtunnel.oracle.windows.trace import ClockView
from windtunnel.oracle.windows.window_rows import Rows


def beam_windows(spec: object) -> BeamWindows:
    """The spec as ``beam.WindowInto`` arguments: the generic ``fixed`` kind is
    ``FixedWindows(size)`` (``SlidingWindows(size, every)`` with ``every``), ``session`` is
    ``Sessions(gap)``; both with the default trigger, ``tolerance`` as the watermark's delay."""
    if isinstance(spec, BeamWindows):
        return spec
    lateness = getattr(spec, "allowed_lateness_ms", None) or 0
    if isinstance(spec, FixedWindows):
        sliding = spec.every_ms is not None and spec.every_ms != spec.size_ms
        fn = (WindowFn("sliding", size_ms=spec.size_ms, period_ms=spec.every_ms) if sliding
              else WindowFn("fixed", size_ms=spec.size_ms))
        return BeamWindows(fn, on=spec.on, tolerance_ms=spec.tolerance_ms,
                           allowed_lateness_ms=lateness)
    assert isinstance(spec, SessionWindows)
    return BeamWindows(WindowFn("sessions", gap_ms=spec.gap_ms), on=spec.on,
                       tolerance_ms=spec.tolerance_ms, allowed_lateness_ms=lateness)


_COMBINE: dict[str, Callable[[int, int], int]] = {
    "end_of_window": max, "earliest": min, "latest": max,
}


@dataclass(slots=True)
class _Key:
    """One key's windows, in the order Beam first saw them."""

    group: Group
    windows: dict[Bounds, WindowState] = field(default_factory=dict)


class BeamOperator(Operator):
    """Beam's ``GroupByKey`` over windowed, triggered input (see the module docstring)."""

    def __init__(self, query: Query, ctx: Context) -> None:
        self.spec = beam_windows(query.window)
        if self.spec.on == NOW:
            raise InvalidSpec("window.on", NOW, "Beam windows read the elements' timestamps",
                              "name the event-time field, e.g. on: ts")
        check_beam_rules(ctx.rules)
        self.rows = Rows(query)
        self.machine = TriggerMachine(
            self.spec.trigger, guide=ctx.rules.beam_processing_time == "guide",
            unit_ms=ctx.time_unit_ms)
        self.ontime = has_ontime_pane(self.spec.trigger)
        self.combine = _COMBINE[self.spec.timestamp_combiner]
        self.injected_only = ctx.rules.beam_watermark == "injected"
        self.expire_at_reach = ctx.rules.beam_expiry == "reaches"
        self.flush = ctx.rules.end_of_input == "flush"
        self.watermark = BEAM_MIN_MS
        self.keys: dict[int, _Key] = {}
        self.bundle: list[tuple[Group, Event, int]] = []

    # --- the driver's calls ------------------------------------------------------------
    def on_event(self, group: Group, event: Event, t_ms: int, ctx: Context,
                 out: list[Output]) -> None:
        self.bundle.append((group, event, t_ms))

    def on_batch_end(self, ctx: Context, out: list[Output]) -> None:
        bundle, self.bundle = self.bundle, []
        if not bundle:
            return
        by_key: dict[int, list[tuple[Event, int]]] = {}
        for group, event, t_ms in bundle:
            self.keys.setdefault(group.index, _Key(group))
            by_key.setdefault(group.index, []).append((event, t_ms))
        for index, elements in by_key.items():
            self._process(self.keys[index], elements, ctx, out)
        self._fire_timers(ctx, out, "watermark")
        if not self.injected_only:  # B3: the watermark follows the largest event time
            top = max(t for _, _, t in bundle) - self.spec.tolerance_ms
            self._advance(top, ctx, out, "watermark")

    def on_wall(self, ctx: Context, out: list[Output]) -> None:
        self._fire_timers(ctx, out, "watermark")

    def on_watermark(self, to_ms: int, ctx: Context, out: list[Output]) -> None:
        self._advance(to_ms, ctx, out, "watermark")

    def on_end(self, ctx: Context, out: list[Output]) -> None:
        self.on_batch_end(ctx, out)
        if self.flush:  # B3: a bounded input ends with the watermark at +inf
            self._advance(BEAM_MAX_MS, ctx, out, "end_of_input")

    def clock_view(self, ctx: Context) -> ClockView | None:
        watermark = None if self.watermark == BEAM_MIN_MS else self.watermark
        return ClockView(False, watermark, watermark)

    # --- the watermark and timers ------------------------------------------------------
    def _advance(self, to_ms: int, ctx: Context, out: list[Output], reason: str) -> None:
        """B3: the watermark never goes back; timers it reaches fire."""
        if to_ms > self.watermark:
            self.watermark = to_ms
            self._fire_timers(ctx, out, reason)

    def _fire_timers(self, ctx: Context, out: list[Output], reason: str) -> None:
        """B10: fire every due timer (event-time ones the watermark reached, processing-time
        ones the wall clock reached), removed first, in the order event time before
        processing time, then time, window, part and name; again until none is due."""
        while True:
            due: list[tuple[tuple[Any, ...], _Key, WindowState, Timer]] = []
            for key in self.keys.values():
                for ws in key.windows.values():
                    for part_index, part in enumerate(ws.parts):
                        for timer in [t for t in part if self._due(t, ctx)]:
                            part.remove(timer)
                            order = (timer.domain != WATERMARK, timer.time_ms, ws.start_ms,
                                     ws.end_ms, part_index, timer.name)
                            due.append((order, key, ws, timer))
            if not due:
                return
            for _, key, ws, timer in sorted(due, key=lambda d: d[0]):
                if ws.finished:
                    continue
                why = self.machine.should_fire(ws, timer.domain, timer.time_ms)
                if why is None:
                    continue
                finished = self.machine.on_fire(ws, timer.domain, timer.time_ms)
                engine = not self.machine.guide or timer.domain == WATERMARK
                seen = timer.time_ms if engine else self.watermark
                label = reason if timer.domain == WATERMARK else "processing_time"
                self._pane(key, ws, finished, seen, timer.domain == WATERMARK, label, why,
                           ctx, out)

    def _due(self, timer: Timer, ctx: Context) -> bool:
        if timer.domain == WATERMARK:
            return timer.time_ms <= self.watermark
        return timer.domain == PROCESSING and timer.time_ms <= ctx.wall_ms

    # --- a bundle of one key -----------------------------------------------------------
    def _expired(self, window: Bounds) -> bool:
        """B4: a window is expired once the watermark passes (or, under rule
        ``beam_expiry: reaches``, reaches) its end plus the allowed lateness."""
        limit = window[1] + self.spec.allowed_lateness_ms
        return self.watermark >= limit if self.expire_at_reach else self.watermark > limit

    def _process(self, key: _Key, elements: list[tuple[Event, int]], ctx: Context,
                 out: list[Output]) -> None:
        group = key.group.value
        taken: dict[Bounds, list[Element]] = {}
        lost: dict[int, tuple[Event, list[Bounds]]] = {}
        for event, t_ms in elements:
            windows = assign(self.spec.window_fn, t_ms)
            live = [w for w in windows if not self._expired(w)]
            if not live:
                out.append(self._lost(event, t_ms, windows, group, "late"))
                continue
            lost[event.seq] = (event, windows)
            for window in live:
                taken.setdefault(window, []).append(Element(event.seq, event.payload, t_ms))
        if self.spec.window_fn.kind == "sessions":
            taken = self._merge(key, taken)
        accepted: set[int] = set()
        for window, news in taken.items():
            ws = key.windows.get(window)
            if ws is None:
                ws = key.windows[window] = WindowState(*window)
            if ws.finished:  # B8: a finished trigger takes nothing more
                continue
            accepted.update(e.seq for e in news)
            self._hold(ws, news)
            for element in news:
                ws.elements.append(element)
                self.machine.on_element(ws, ctx.wall_ms)
                if ctx.trace is not None:
                    ctx.trace.delivered(element.seq, group, WindowRef(*ws.bounds))
            why = self.machine.should_fire(ws, WATERMARK, self.watermark)
            if why is not None:
                finished = self.machine.on_fire(ws, WATERMARK, self.watermark)
                self._pane(key, ws, finished, self.watermark, False, "element", why, ctx, out)
        for seq, (event, windows) in lost.items():
            if seq not in accepted:
                out.append(self._lost(event, None, windows, group, "finished"))

    def _merge(self, key: _Key, taken: dict[Bounds, list[Element]]) -> dict[Bounds, list[Element]]:
        """B2: merge the key's sessions with the new elements' windows; returns the
        elements by merged window."""
        known = key.windows
        if set(taken) <= set(known):
            return taken
        into: dict[Bounds, Bounds] = {}
        for run, result in merges(set(known) | set(taken)):
            for window in run:
                if window != result:
                    into[window] = result
            olds = [known.pop(w) for w in run if w != result and w in known]
            target = known.get(result)
            if target is None and olds:
                target = known[result] = WindowState(*result, parts=[])
            if target is None:
                continue
            for old in olds:
                target.absorb(old, self.combine)
            self.machine.on_merge(target, list(run))
        merged: dict[Bounds, list[Element]] = {}
        for window, news in taken.items():
            merged.setdefault(into.get(window, window), []).extend(news)
        return merged

    def _hold(self, ws: WindowState, news: list[Element]) -> None:
        """B11: the output time the new elements hold: the window's last instant (end of
        window), or the earliest / latest of their times not behind the watermark."""
        if self.spec.timestamp_combiner == "end_of_window":
            held: int | None = ws.end_ms - 1
        else:
            times = [e.t_ms for e in news if e.t_ms >= self.watermark]
            held = None if not times else (min(times) if self.combine is min else max(times))
        if held is not None:
            ws.hold_ms = held if ws.hold_ms is None else self.combine(ws.hold_ms, held)

    # --- panes ---------------------------------------------------------------------------
    def _pane(self, key: _Key, ws: WindowState, finished: bool, seen_ms: int, on_timer: bool,
              reason: str, why: str, ctx: Context, out: list[Output]) -> None:
        """B12-B14: emit the window's pane as of watermark (or timer time) ``seen_ms``."""
        index = ws.index
        ws.index += 1
        if seen_ms <= ws.end_ms - 1:  # the watermark has not passed the window: early
            timing, nonspeculative = "early", -1
            if ws.nonspeculative:
                nonspeculative = ws.nonspeculative
                ws.nonspeculative += 1
        else:
            nonspeculative = ws.nonspeculative
            ws.nonspeculative += 1
            timing = "on_time" if on_timer and nonspeculative == 0 else "late"
        payloads = [e.payload for e in sorted(ws.elements, key=lambda e: e.seq)]
        if finished:
            ws.elements = []
            ws.finished = True
        elif not self.spec.accumulating:
            ws.elements = []
        timestamp = ws.hold_ms
        if timestamp is None:
            timestamp = ws.end_ms - 1
        elif not (seen_ms < ws.end_ms and self.ontime):
            ws.hold_ms = None
        pane = Pane(timing, index, nonspeculative, index == 0, finished, timestamp, why)
        window = WindowRef(*ws.bounds)
        for row in self.rows.rows(payloads, *ws.bounds):
            out.append(PaneEmission(window, key.group.value, row, reason, ctx.after_seq,
                                    ctx.wall_ms, timing == "early", pane))
        if ctx.trace is not None:
            ctx.trace.closed(key.group.value, window, reason)

    def _lost(self, event: Event, t_ms: int | None, windows: list[Bounds], group: Any,
              reason: str) -> Drop:
        refs = tuple(WindowRef(*w) for w in windows)
        if not windows:
            return Drop(event.seq, "no_window", refs,
                        f"event time {t_ms} falls between the sliding windows", group)
        if reason == "late":
            limit = self.spec.allowed_lateness_ms
            return Drop(event.seq, "late", refs,
                        f"every window of event time {t_ms} is expired: the watermark "
                        f"{self.watermark} is past its end + allowed lateness {limit}", group)
        return Drop(event.seq, "finished", refs,
                    "the trigger of every window it joined had finished", group)
