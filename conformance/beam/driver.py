"""Scenarios on Beam's own trigger driver: ``GeneralTriggerDriver``, the part of Beam's
Python SDK that turns a key's bundles and timers into panes (what its runners call, and
what Beam's ``TriggerDriverTranscriptTest`` drives directly).

A scenario is fed as the ``beam`` profile reads it (docs/semantics.md, B3 and B10): each
event is a bundle of one, each ``batch`` a bundle, processed per key at the input watermark
(``process_elements``); after each step the due timers fire (``process_timer``: event-time
ones the watermark reached, processing-time ones the wall clock reached, event time first,
then by time, window, merged part and name), again until none is due. This module is the
runner around the driver; the windows, triggers, merging, panes and output times are
Beam's. The watermark is the stream's input, computed as the scenario's rules say.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from windtunnel.conformance.beam.engine import bounds, emissions, instant, windowing
from windtunnel.oracle.model.errors import InvalidSpec, MissingExtra
from windtunnel.oracle.model.fields import getter, hashable
from windtunnel.oracle.model.results import Output
from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item, Watermark, checked
from windtunnel.oracle.model.timefmt import BEAM_MAX_MS, BEAM_MIN_MS
from windtunnel.oracle.model.timeparse import NotATime, timestamp_ms
from windtunnel.oracle.profiles.beam.operator import beam_windows
from windtunnel.oracle.scenario import Scenario
from windtunnel.oracle.windows.driver import group_value
from windtunnel.oracle.windows.window_rows import Rows

try:
    from apache_beam.transforms import trigger as bt
    from apache_beam.transforms.timeutil import TimeDomain
    from apache_beam.transforms.window import WindowFn
    from apache_beam.utils.windowed_value import WindowedValue
except ModuleNotFoundError as exc:  # pragma: no cover - without the [beam] extra
    raise MissingExtra("beam", "apache_beam", "checking against Beam") from exc

ENGINE_RULES = {"beam_expiry": "passes", "beam_processing_time": "engine"}
"""The readings Beam's trigger driver implements (the others are the guide's)."""


class _Clock:
    """The processing time Beam's triggers read: the scenario's wall clock."""

    def __init__(self, wall_ms: int) -> None:
        self.wall_ms = wall_ms

    def time(self) -> Any:
        return instant(self.wall_ms)


@dataclass(slots=True)
class _Key:
    group: Any
    state: Any = field(default_factory=bt.InMemoryUnmergedState)


class DriverRun:
    """One scenario through ``GeneralTriggerDriver``; :meth:`outputs` yields its emissions
    with the index of the input item during which each came out."""

    def __init__(self, scenario: Scenario) -> None:
        query: Query = scenario.query
        self.spec = beam_windows(query.window)
        rules = scenario.rules
        for rule, value in ENGINE_RULES.items():
            if getattr(rules, rule) != value:
                raise InvalidSpec(f"rules.{rule}", getattr(rules, rule),
                                  "Beam's trigger driver implements the engine reading",
                                  f"check with {rule}: {value} (the default)")
        self.scenario = scenario
        self.injected_only = rules.beam_watermark == "injected"
        self.flush = rules.end_of_input == "flush"
        self.windowing = windowing(self.spec)
        self.clock = _Clock(scenario.start_wall_ms)
        self.driver = bt.GeneralTriggerDriver(self.windowing, self.clock)
        self.rows = Rows(query)
        self.time_of = getter(self.spec.on)
        self.key_getters = [getter(p) for p in query.group_by]
        self.keys: dict[Any, _Key] = {}
        self.watermark_ms = BEAM_MIN_MS
        self.after_seq: int | None = None

    def outputs(self) -> Iterator[tuple[int, Output]]:
        for index, item in enumerate(checked(self.scenario.items, self.scenario.start_wall_ms)):
            for output in self._item(item):
                yield index, output

    def _item(self, item: Item) -> list[Output]:
        out: list[Output] = []
        if isinstance(item, Event | Batch):
            events = (item,) if isinstance(item, Event) else item.events
            bundle = []
            for event in events:
                if event.at_ms is not None and event.at_ms > self.clock.wall_ms:
                    self.clock.wall_ms = event.at_ms
                    out += self._timers("watermark")
                self.after_seq = event.seq
                t_ms = self._time(event)
                if t_ms is not None:
                    bundle.append((event, t_ms))
            out += self._bundle(bundle)
        elif isinstance(item, Advance):
            if item.to_ms > self.clock.wall_ms:
                self.clock.wall_ms = item.to_ms
                out += self._timers("watermark")
        elif isinstance(item, Watermark):
            out += self._advance(item.to_ms, "watermark")
        elif isinstance(item, End) and self.flush:
            out += self._advance(BEAM_MAX_MS, "end_of_input")
        return out

    def _time(self, event: Event) -> int | None:
        raw = self.time_of(event.payload)
        try:
            return timestamp_ms(raw, self.scenario.time_unit_ms)
        except NotATime:
            return None

    def _bundle(self, bundle: list[tuple[Event, int]]) -> list[Output]:
        if not bundle:
            return []
        fn = self.windowing.windowfn
        by_key: dict[Any, list[Any]] = {}
        for event, t_ms in bundle:
            values = tuple(g(event.payload) for g in self.key_getters)
            key = hashable(list(values))
            self.keys.setdefault(key, _Key(group_value(values)))
            at = instant(t_ms)
            windows = fn.assign(WindowFn.AssignContext(at, (event.seq, event.payload)))
            by_key.setdefault(key, []).append(
                WindowedValue((event.seq, event.payload), at, windows))
        out: list[Output] = []
        watermark = instant(self.watermark_ms)
        for key, windowed in by_key.items():
            entry = self.keys[key]
            for pane in self.driver.process_elements(entry.state, windowed, watermark, watermark):
                out += self._emissions(entry.group, pane, "element")
        out += self._timers("watermark")
        if not self.injected_only:
            top = max(t for _, t in bundle) - self.spec.tolerance_ms
            out += self._advance(top, "watermark")
        return out

    def _advance(self, to_ms: int, reason: str) -> list[Output]:
        if to_ms <= self.watermark_ms:
            return []
        self.watermark_ms = to_ms
        return self._timers(reason)

    def _timers(self, reason: str) -> list[Output]:
        """Fire every due timer of every key, in the beam profile's order (B10), until none."""
        out: list[Output] = []
        watermark, now = instant(self.watermark_ms), instant(self.clock.wall_ms)
        while True:
            due = []
            for entry in self.keys.values():
                expired, _ = entry.state.get_timers(clear=True, watermark=watermark,
                                                    processing_time=now)
                merged = bt.MergeableStateAdapter(entry.state)
                for window_id, (name, domain, time, _tag) in expired:
                    window = merged.get_window(window_id)
                    part = merged.window_ids[window].index(window_id)
                    order = (domain != TimeDomain.WATERMARK, time, *bounds(window), part, name)
                    due.append((order, entry, window_id, name, domain, time))
            if not due:
                return out
            for _, entry, window_id, name, domain, time in sorted(due, key=lambda d: d[0]):
                label = reason if domain == TimeDomain.WATERMARK else "processing_time"
                for pane in self.driver.process_timer(window_id, name, domain, time, entry.state):
                    out += self._emissions(entry.group, pane, label)

    def _emissions(self, group: Any, pane: Any, reason: str) -> list[Output]:
        (window,) = pane.windows
        payloads = [payload for _, payload in sorted(pane.value, key=lambda v: v[0])]
        return list(emissions(self.rows, group, window, payloads, pane.timestamp,
                              pane.pane_info, reason, self.after_seq, self.clock.wall_ms))


def driver_outputs(scenario: Scenario) -> tuple[list[Output], list[int]]:
    """The scenario's emissions on Beam's trigger driver, and per emission the index of the
    input item it came out during. Raises InvalidSpec for a guide reading of a rule."""
    found = list(DriverRun(scenario).outputs())
    return [o for _, o in found], [i for i, _ in found]
