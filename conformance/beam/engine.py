"""A spec's window as Beam's own objects: the ``WindowFn``, the ``TriggerFn`` and the
``Windowing`` that ``beam.WindowInto`` builds (``apache_beam.transforms``), and Beam's
panes back as windtunnel emissions.

Time: a windtunnel millisecond is ``unit_us`` Beam microseconds: 1,000 (real time, what a
user's pipeline sees) or 1,000,000 (one second: Beam's runner API carries processing-time
delays in whole seconds, so the spec's own pipeline runs on a scale where a millisecond is a
second; every comparison Beam makes is the same on both scales). A Beam time comes back
floored to the unit (a window's last instant, ``end - 1 us``, reads ``end_ms - 1``).
Imports ``apache_beam`` (the ``[beam]`` extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from windtunnel.oracle.model.errors import MissingExtra
from windtunnel.oracle.model.results import Pane, PaneEmission, WindowRef
from windtunnel.oracle.model.timefmt import BEAM_MIN_MS, GLOBAL_END_MS
from windtunnel.oracle.profiles.beam import triggers as wt
from windtunnel.oracle.profiles.beam.spec import BeamWindows
from windtunnel.oracle.windows.window_rows import Rows

try:
    from apache_beam.transforms import trigger as bt
    from apache_beam.transforms import window as bw
    from apache_beam.transforms.core import Windowing
    from apache_beam.utils.timestamp import Duration, Timestamp
    from apache_beam.utils.windowed_value import PaneInfoTiming
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise MissingExtra("beam", "apache_beam", "checking against Beam") from exc

TIMINGS = {PaneInfoTiming.EARLY: "early", PaneInfoTiming.ON_TIME: "on_time",
           PaneInfoTiming.LATE: "late"}


REAL_TIME_US = 1_000
"""Beam microseconds per windtunnel millisecond in real time."""
SECONDS_US = 1_000_000
"""Beam microseconds per windtunnel millisecond on the scale where a millisecond is a second."""


def micros(ms: int, unit_us: int = REAL_TIME_US) -> Duration:
    return Duration(micros=ms * unit_us)


def instant(ms: int, unit_us: int = REAL_TIME_US) -> Timestamp:
    return Timestamp(micros=ms * unit_us)


def ms_of(value: Timestamp | Duration, unit_us: int = REAL_TIME_US) -> int:
    """A Beam time in windtunnel milliseconds, floored."""
    return int(value.micros) // unit_us


def trigger_fn(trigger: wt.Trigger, unit_us: int = REAL_TIME_US) -> Any:
    """Beam's ``TriggerFn`` for a windtunnel trigger value (a processing-time delay in whole
    seconds when it is one, as Beam's runner API carries it)."""
    def sub(part: wt.Trigger) -> Any:
        return trigger_fn(part, unit_us)

    if isinstance(trigger, wt.Default):
        return bt.DefaultTrigger()
    if isinstance(trigger, wt.AfterWatermark):
        return bt.AfterWatermark(
            early=None if trigger.early is None else sub(trigger.early),
            late=None if trigger.late is None else sub(trigger.late))
    if isinstance(trigger, wt.AfterCount):
        return bt.AfterCount(trigger.count)
    if isinstance(trigger, wt.AfterProcessingTime):
        delay_us = trigger.delay_ms * unit_us
        whole, rest = divmod(delay_us, SECONDS_US)
        return bt.AfterProcessingTime(delay=Duration(micros=delay_us) if rest else whole)
    if isinstance(trigger, wt.Repeatedly):
        return bt.Repeatedly(sub(trigger.underlying))
    if isinstance(trigger, wt.AfterAny):
        return bt.AfterAny(*map(sub, trigger.parts))
    if isinstance(trigger, wt.AfterAll):
        return bt.AfterAll(*map(sub, trigger.parts))
    if isinstance(trigger, wt.AfterEach):
        return bt.AfterEach(*map(sub, trigger.parts))
    if isinstance(trigger, wt.OrFinally):
        return bt.OrFinally(sub(trigger.main), sub(trigger.final))
    if isinstance(trigger, wt.Always):
        return bt.Always()
    return bt._Never()


def window_fn(spec: BeamWindows, unit_us: int = REAL_TIME_US) -> Any:
    """Beam's ``WindowFn`` for the spec's windowing function."""
    fn, us = spec.window_fn, unit_us
    if fn.kind == "fixed":
        assert fn.size_ms is not None
        return bw.FixedWindows(micros(fn.size_ms, us), instant(fn.offset_ms, us))
    if fn.kind == "sliding":
        assert fn.size_ms is not None and fn.period_ms is not None
        return bw.SlidingWindows(micros(fn.size_ms, us), micros(fn.period_ms, us),
                                 instant(fn.offset_ms, us))
    if fn.kind == "sessions":
        assert fn.gap_ms is not None
        return bw.Sessions(micros(fn.gap_ms, us))
    return bw.GlobalWindows()


def windowing(spec: BeamWindows, unit_us: int = REAL_TIME_US) -> Any:
    """Beam's ``Windowing`` (what ``beam.WindowInto`` sets) for the spec."""
    combiner = {"end_of_window": bw.TimestampCombiner.OUTPUT_AT_EOW,
                "earliest": bw.TimestampCombiner.OUTPUT_AT_EARLIEST,
                "latest": bw.TimestampCombiner.OUTPUT_AT_LATEST}[spec.timestamp_combiner]
    mode = bt.AccumulationMode.ACCUMULATING if spec.accumulating else bt.AccumulationMode.DISCARDING
    return Windowing(window_fn(spec, unit_us), trigger_fn(spec.trigger, unit_us), mode, combiner,
                     micros(spec.allowed_lateness_ms, unit_us))


def bounds(window: Any, unit_us: int = REAL_TIME_US) -> tuple[int, int]:
    """A Beam window's ``[start_ms, end_ms)`` (the global window as the beam profile writes it)."""
    if isinstance(window, bw.GlobalWindow):
        return (BEAM_MIN_MS, GLOBAL_END_MS)
    return (ms_of(window.start, unit_us), ms_of(window.end, unit_us))


def beam_pane(window: Any, timestamp: Any, pane_info: Any,
              unit_us: int = REAL_TIME_US) -> tuple[WindowRef, Pane]:
    """A Beam pane's window and its ``PaneInfo`` and timestamp as a :class:`Pane`."""
    start, end = bounds(window, unit_us)
    # the global window's last instant is Beam's own, on no scale: the profile's end - 1
    at = end - 1 if timestamp == bw.GlobalWindow().max_timestamp() else ms_of(timestamp, unit_us)
    pane = Pane(TIMINGS[pane_info.timing], pane_info.index, pane_info.nonspeculative_index,
                pane_info.is_first, pane_info.is_last, at)
    return WindowRef(start, end), pane


def emissions(
    rows: Rows, group: Any, window: Any, payloads: Sequence[Any], timestamp: Any,
    pane_info: Any, reason: str, after_seq: int | None, wall_ms: int,
    unit_us: int = REAL_TIME_US,
) -> list[PaneEmission]:
    """One Beam pane (its window, payloads in seq order, timestamp and ``PaneInfo``) as the
    emissions the beam profile writes for it: the query's rows over the payloads."""
    ref, pane = beam_pane(window, timestamp, pane_info, unit_us)
    return [PaneEmission(ref, group, row, reason, after_seq, wall_ms, pane.timing == "early", pane)
            for row in rows.rows(payloads, ref.start_ms, ref.end_ms)]
