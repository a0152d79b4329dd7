"""What a trigger does over time, per window: Beam's trigger contract (B5-B9 in
docs/semantics.md).

Beam's ``TriggerFn`` (https://beam.apache.org/releases/pydoc/current/apache_beam.transforms.trigger.html)
has five steps, and so does :class:`TriggerMachine`: ``on_element`` (an element joined the
window), ``on_merge`` (sessions merged into it), ``should_fire`` (is a pane due now, on a
watermark or processing-time event at time ``t``), ``on_fire`` (a pane went out: returns
whether the trigger finished) and ``reset`` (start over, for ``Repeatedly``). Each part of a
composite trigger keeps its state under its own path (``trigger``, ``triggerearly``,
``trigger0/``, ...). ``should_fire`` answers with the reason a pane is due (a sentence) or
None; composites ask their parts in order and stop at the first answer that settles them.

Rule ``beam_processing_time`` (B9): under ``engine`` (the Python SDK's driver) a
processing-time event's time ``t`` is compared with the window's end as if it were the
watermark, and a composite's ``on_fire`` asks its parts again on the watermark, so a
processing-time part never counts as fired there; under ``guide`` processing time only
satisfies ``AfterProcessingTime`` parts, and a part fired by it counts as fired.
"""

from __future__ import annotations

from windtunnel.oracle.model.timefmt import time_text
from windtunnel.oracle.profiles.beam.triggers import (
    AfterAll,
    AfterAny,
    AfterCount,
    AfterEach,
    AfterProcessingTime,
    AfterWatermark,
    Always,
    Default,
    Never,
    OrFinally,
    Repeatedly,
    Trigger,
)
from windtunnel.oracle.profiles.beam.window_state import PROCESSING, WATERMARK, WindowState

ROOT = "trigger"
"""The path of the whole trigger's state (Beam's ``NestedContext(..., 'trigger')``)."""


def _parts(trigger: AfterAny | AfterAll | OrFinally) -> tuple[Trigger, ...]:
    return (trigger.main, trigger.final) if isinstance(trigger, OrFinally) else trigger.parts


def _repeated(trigger: Trigger | None) -> Trigger | None:
    """Early and late firings repeat: Beam wraps them in ``Repeatedly``."""
    if trigger is None or isinstance(trigger, Repeatedly):
        return trigger
    return Repeatedly(trigger)


def has_ontime_pane(trigger: Trigger) -> bool:
    """Whether the trigger always fires a pane when the watermark passes the window's end
    (then an output-time hold is kept until that pane: B11)."""
    if isinstance(trigger, Default | AfterWatermark):
        return True
    if isinstance(trigger, Repeatedly):
        return has_ontime_pane(trigger.underlying)
    if isinstance(trigger, AfterAny | AfterAll | OrFinally):
        return any(has_ontime_pane(p) for p in _parts(trigger))
    if isinstance(trigger, AfterEach):
        return any(has_ontime_pane(p) for p in trigger.parts)
    return False


class TriggerMachine:
    """The steps of one trigger over a window's :class:`WindowState`; ``now_ms`` is the
    processing time (the scenario's wall clock) when an element arrives; ``guide`` selects
    the ``guide`` reading of rule ``beam_processing_time``; ``unit_ms`` is the unit the
    reasons write times in (the scenario's)."""

    def __init__(self, trigger: Trigger, *, guide: bool = False, unit_ms: int = 1) -> None:
        self.trigger = trigger
        self.guide = guide
        self.unit_ms = unit_ms

    def _at(self, domain: str, t_ms: int, ws: WindowState) -> str:
        end = time_text(ws.end_ms, self.unit_ms)
        if domain == WATERMARK:
            return f"the watermark passed the window's end {end}"
        return f"processing time {time_text(t_ms, self.unit_ms)} is past the window's end {end}"

    # --- on_element ------------------------------------------------------------------
    def on_element(self, ws: WindowState, now_ms: int) -> None:
        self._element(self.trigger, ROOT, ws, now_ms)

    def _element(self, trigger: Trigger, path: str, ws: WindowState, now_ms: int) -> None:
        if isinstance(trigger, Default):
            ws.set_timer(self._default_timer(path, ws), WATERMARK, ws.end_ms)
        elif isinstance(trigger, AfterWatermark):
            late = _repeated(trigger.late)
            if late is not None and ws.get(path + "is_late"):
                self._element(late, path + "late", ws, now_ms)
                return
            ws.set_timer(path, WATERMARK, ws.end_ms)
            early = _repeated(trigger.early)
            if early is not None:
                self._element(early, path + "early", ws, now_ms)
        elif isinstance(trigger, AfterCount):
            ws.add(path + "#count")
        elif isinstance(trigger, AfterProcessingTime):
            if not ws.get(path + "has_timer"):
                ws.set_timer(path, PROCESSING, now_ms + trigger.delay_ms)
            ws.add(path + "has_timer")
        elif isinstance(trigger, Repeatedly):
            self._element(trigger.underlying, path, ws, now_ms)
        elif isinstance(trigger, AfterAny | AfterAll | OrFinally):
            for index, part in enumerate(_parts(trigger)):
                self._element(part, f"{path}{index}/", ws, now_ms)
        elif isinstance(trigger, AfterEach):
            index = ws.get(path + "index")
            if index < len(trigger.parts):
                self._element(trigger.parts[index], f"{path}{index}/", ws, now_ms)

    @staticmethod
    def _default_timer(path: str, ws: WindowState) -> str:
        """The default trigger names its timer after the window (Beam: ``str(window)``)."""
        return f"{path}[{ws.start_ms}, {ws.end_ms})"

    # --- on_merge --------------------------------------------------------------------
    def on_merge(self, ws: WindowState, merged: list[tuple[int, int]]) -> None:
        """``merged`` (the windows' bounds before the merge) became ``ws``."""
        self._merge(self.trigger, ROOT, ws, merged)

    def _merge(self, trigger: Trigger, path: str, ws: WindowState,
               merged: list[tuple[int, int]]) -> None:
        if isinstance(trigger, Default):
            for start, end in merged:
                ws.clear_timer(f"{path}[{start}, {end})", WATERMARK)
        elif isinstance(trigger, AfterWatermark):
            late = _repeated(trigger.late)
            if late is not None and ws.get(path + "is_late"):
                self._merge(late, path + "late", ws, merged)
                return
            if any(end != ws.end_ms for _, end in merged):
                ws.clear_timer(path, WATERMARK)
            early = _repeated(trigger.early)
            if early is not None:
                self._merge(early, path + "early", ws, merged)
        elif isinstance(trigger, Repeatedly):
            self._merge(trigger.underlying, path, ws, merged)
        elif isinstance(trigger, AfterAny | AfterAll | OrFinally):
            for index, part in enumerate(_parts(trigger)):
                self._merge(part, f"{path}{index}/", ws, merged)
        elif isinstance(trigger, AfterEach):
            index = ws.get(path + "index")
            if index < len(trigger.parts):
                self._merge(trigger.parts[index], f"{path}{index}/", ws, merged)

    # --- should_fire -----------------------------------------------------------------
    def should_fire(self, ws: WindowState, domain: str, t_ms: int) -> str | None:
        """Why a pane is due on an event of ``domain`` at ``t_ms`` (None: it is not). An
        on-time check that succeeds clears the watermark timer, as Beam's does."""
        return self._should(self.trigger, ROOT, ws, domain, t_ms)

    def _passed(self, domain: str, t_ms: int, ws: WindowState) -> bool:
        """The watermark passed the window's end (``t >= end``); under the engine reading a
        processing-time event's time counts too."""
        return t_ms >= ws.end_ms and (domain == WATERMARK or not self.guide)

    def _should(self, trigger: Trigger, path: str, ws: WindowState, domain: str,
                t_ms: int) -> str | None:
        if isinstance(trigger, Default):
            if self._passed(domain, t_ms, ws):
                ws.clear_timer(self._default_timer(path, ws), WATERMARK)
                return f"Default: {self._at(domain, t_ms, ws)}"
            return None
        if isinstance(trigger, AfterWatermark):
            late = _repeated(trigger.late)
            if late is not None and ws.get(path + "is_late"):
                why = self._should(late, path + "late", ws, domain, t_ms)
                return None if why is None else f"AfterWatermark late: {why}"
            if self._passed(domain, t_ms, ws):
                ws.clear_timer(path, WATERMARK)
                return f"AfterWatermark: {self._at(domain, t_ms, ws)}"
            early = _repeated(trigger.early)
            if early is not None:
                why = self._should(early, path + "early", ws, domain, t_ms)
                return None if why is None else f"AfterWatermark early: {why}"
            return None
        if isinstance(trigger, AfterCount):
            count = ws.get(path + "#count")
            return (f"{trigger}: {count} element{'' if count == 1 else 's'} in the pane"
                    if count >= trigger.count else None)
        if isinstance(trigger, AfterProcessingTime):
            return (f"{trigger}: processing time {time_text(t_ms, self.unit_ms)}"
                    if domain == PROCESSING else None)
        if isinstance(trigger, Repeatedly):
            return self._should(trigger.underlying, path, ws, domain, t_ms)
        if isinstance(trigger, AfterAny | OrFinally):
            for index, part in enumerate(_parts(trigger)):
                why = self._should(part, f"{path}{index}/", ws, domain, t_ms)
                if why is not None:  # the first satisfied part settles it (Python's any())
                    return why
            return None
        if isinstance(trigger, AfterAll):
            reasons = []
            for index, part in enumerate(trigger.parts):
                why = self._should(part, f"{path}{index}/", ws, domain, t_ms)
                if why is None:  # the first unsatisfied part settles it (Python's all())
                    return None
                reasons.append(why)
            return "AfterAll: " + "; ".join(reasons)
        if isinstance(trigger, AfterEach):
            index = ws.get(path + "index")
            if index >= len(trigger.parts):
                return None
            why = self._should(trigger.parts[index], f"{path}{index}/", ws, domain, t_ms)
            return None if why is None else f"AfterEach step {index}: {why}"
        if isinstance(trigger, Always):
            return "Always"
        return None  # Never

    # --- on_fire ---------------------------------------------------------------------
    def on_fire(self, ws: WindowState, domain: str, t_ms: int) -> bool:
        """A pane went out; returns whether the trigger finished."""
        return self._fire(self.trigger, ROOT, ws, domain, t_ms)

    def _fire(self, trigger: Trigger, path: str, ws: WindowState, domain: str,
              t_ms: int) -> bool:
        if isinstance(trigger, AfterWatermark):
            late = _repeated(trigger.late)
            if late is not None and ws.get(path + "is_late"):
                return self._fire(late, path + "late", ws, domain, t_ms)
            if self._passed(domain, t_ms, ws):
                ws.add(path + "is_late")
                return late is None
            early = _repeated(trigger.early)
            if early is not None:
                self._fire(early, path + "early", ws, domain, t_ms)
            return False
        if isinstance(trigger, AfterCount | AfterProcessingTime | Never):
            return True
        if isinstance(trigger, Repeatedly):
            if self._fire(trigger.underlying, path, ws, domain, t_ms):
                self._reset(trigger.underlying, path, ws)
            return False
        if isinstance(trigger, AfterAny | AfterAll | OrFinally):
            asked = domain if self.guide else WATERMARK  # B9: the engine asks on the watermark
            finished = []
            for index, part in enumerate(_parts(trigger)):
                sub = f"{path}{index}/"
                if self._should(part, sub, ws, asked, t_ms) is not None:
                    finished.append(self._fire(part, sub, ws, domain, t_ms))
            return any(finished) if isinstance(trigger, AfterAny | OrFinally) else all(finished)
        if isinstance(trigger, AfterEach):
            index = ws.get(path + "index")
            if index >= len(trigger.parts):
                return False
            if self._fire(trigger.parts[index], f"{path}{index}/", ws, domain, t_ms):
                index += 1
                ws.add(path + "index", index)
            return index == len(trigger.parts)
        return False  # Default, Always

    # --- reset -----------------------------------------------------------------------
    def _reset(self, trigger: Trigger, path: str, ws: WindowState) -> None:
        if isinstance(trigger, Default):
            ws.clear_timer(self._default_timer(path, ws), WATERMARK)
        elif isinstance(trigger, AfterWatermark):
            early, late = _repeated(trigger.early), _repeated(trigger.late)
            if late is not None:
                ws.clear(path + "is_late")
            if early is not None:
                self._reset(early, path + "early", ws)
            if late is not None:
                self._reset(late, path + "late", ws)
        elif isinstance(trigger, AfterCount):
            ws.clear(path + "#count")
        elif isinstance(trigger, AfterProcessingTime):
            ws.clear(path + "has_timer")
        elif isinstance(trigger, Repeatedly):
            self._reset(trigger.underlying, path, ws)
        elif isinstance(trigger, AfterAny | AfterAll | OrFinally):
            for index, part in enumerate(_parts(trigger)):
                self._reset(part, f"{path}{index}/", ws)
        elif isinstance(trigger, AfterEach):
            ws.clear(path + "index")
            for index, part in enumerate(trigger.parts):
                self._reset(part, f"{path}{index}/", ws)
