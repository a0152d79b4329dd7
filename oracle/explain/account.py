"""The account of a run, item by item, as data: what the oracle itself did.

:func:`explain` drives the scenario through the profile's own operator one input item at
a time with a recording :class:`~windtunnel.oracle.windows.trace.Trace` attached, and
reads the operator's clock before and after each item. Deliveries, closings, drops and
emissions are the operator's own; nothing here re-implements a rule. The fast paths of
:mod:`windtunnel.oracle.engine` are not used (they produce the same outputs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from windtunnel.oracle.engine import operator_for
from windtunnel.oracle.explain.explanation import Explanation
from windtunnel.oracle.explain.text import miss_reasons
from windtunnel.oracle.explain.values import (
    ClockChange,
    Closing,
    EventFate,
    ItemAccount,
    LostWindow,
    StepView,
    WindowKey,
    window_key,
)
from windtunnel.oracle.explain.words import Words, words_for
from windtunnel.oracle.model.fields import getter
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item, Watermark, checked
from windtunnel.oracle.model.timefmt import time_text
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.scenario import Scenario
from windtunnel.oracle.windows.driver import Context, Driver, group_value
from windtunnel.oracle.windows.trace import ClockView


class _Recorder:
    """The :class:`Trace` explain attaches: deliveries per seq, closings in order."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.item = 0
        self.deliveries: dict[int, list[tuple[Any, WindowRef]]] = {}
        self.closings: list[Closing] = []
        self.seq_of: dict[int, int] = {}  # id(payload) -> seq, for ``holding``

    def delivered(self, seq: int, group: Any, window: WindowRef) -> None:
        known = self.deliveries.setdefault(seq, [])
        if (group, window) not in known:
            known.append((group, window))

    def holding(self, payloads: Sequence[Mapping[str, Any]], group: Any, window: WindowRef) -> None:
        for payload in payloads:
            self.delivered(self.seq_of[id(payload)], group, window)

    def closed(self, group: Any, window: WindowRef, reason: str) -> None:
        self.closings.append(Closing(group, window, reason, self.item, self.ctx.wall_ms))


@dataclass(frozen=True, slots=True)
class _Step:
    index: int
    item: Item
    batch: int | None
    wall_before_ms: int
    wall_after_ms: int
    before: ClockView | None
    after: ClockView | None
    outputs: tuple[Output, ...]
    closings: tuple[Closing, ...]


def _batch_numbers(items: list[Item], end_batch: bool = True) -> list[int | None]:
    """Micro-batch numbers as windtunnel feeds Spark: each ``Batch`` one, lone events one
    each, ``advance`` items joining the micro-batch being built (one right before a batch is
    a micro-batch of its own); end of input runs one more, with no data (``end_batch``;
    Spark's complete mode runs none)."""
    numbers: list[int | None] = []
    index = 0
    pending = False
    for item in items:
        if isinstance(item, Advance):
            pending = True
            numbers.append(None)
        elif isinstance(item, Batch | Event):
            if isinstance(item, Batch) and pending:
                index += 1
            numbers.append(index)
            index += 1
            pending = False
        elif isinstance(item, End):
            numbers.append(index if end_batch else None)
        else:
            numbers.append(None)
    return numbers


def _events(item: Item) -> tuple[Event, ...]:
    if isinstance(item, Event):
        return (item,)
    if isinstance(item, Batch):
        return item.events
    return ()


def _changes(before: ClockView | None, after: ClockView | None, words: Words) -> list[ClockChange]:
    if after is None:
        return []
    pick = 1 if words.watermark else 0
    if not after.per_key:
        old = None if before is None else before.of(None)[pick]
        return [ClockChange(None, False, old, after.of(None)[pick])]
    changes = []
    for value, *now in after.keys:
        old = None if before is None else before.of(value)[pick]
        changes.append(ClockChange(value, True, old, now[pick]))
    return changes


def _kind(item: Item) -> str:
    return {Event: "event", Batch: "batch", Advance: "advance", Watermark: "watermark"}.get(
        type(item), "end"
    )


def explain(scenario: Scenario, profile: str | None = None) -> Explanation:
    """The account of ``scenario`` under its profile, or ``profile`` (with the scenario's
    own ``rules:`` overrides on top); raises InvalidInput as ``replay`` would."""
    name = profile or scenario.profile.name
    rules = profile_named(name).rules.with_overrides(dict(scenario.rule_overrides))
    driver = Driver(
        scenario.query,
        lambda q, c: operator_for(q, c, name),
        rules,
        time_unit_ms=scenario.time_unit_ms,
        start_wall_ms=scenario.start_wall_ms,
        profile=name,
    )
    ctx = driver.ctx
    recorder = _Recorder(ctx)
    ctx.trace = recorder
    words = words_for(name, scenario, rules)
    items = list(checked(scenario.items, scenario.start_wall_ms))
    recorder.seq_of = {id(e.payload): e.seq for item in items for e in _events(item)}
    numbers = _batch_numbers(items, scenario.query.output_mode != "complete") if (
        words.micro_batches) else [None] * len(items)
    steps = []
    for index, item in enumerate(items):
        recorder.item = index
        before, wall_before = driver.operator.clock_view(ctx), ctx.wall_ms
        out: list[Output] = []
        driver.feed(item, out)
        closings = tuple(c for c in recorder.closings if c.item == index)
        steps.append(
            _Step(index, item, numbers[index], wall_before, ctx.wall_ms, before,
                  driver.operator.clock_view(ctx), tuple(out), closings)
        )
    return _assemble(scenario, name, words, steps, recorder)


def _assemble(
    scenario: Scenario, profile: str, words: Words, steps: list[_Step], recorder: _Recorder
) -> Explanation:

    outputs = [o for s in steps for o in s.outputs]
    drops: dict[int, Drop] = {}
    for output in outputs:
        if isinstance(output, Drop):
            drops.setdefault(output.seq, output)
    keys = [getter(p) for p in scenario.query.group_by]
    closings = {window_key(c.group, c.window): c for c in recorder.closings}
    by_window: dict[WindowKey, list[Emission]] = {}
    for output in outputs:
        if isinstance(output, Emission) and output.reason != "event":
            by_window.setdefault(window_key(output.group, output.window), []).append(output)
    passed: set[WindowKey] = {  # rows out already: pass-through, Spark's update/complete rows
        window_key(o.group, o.window)
        for o in outputs
        if isinstance(o, Emission) and o.reason in ("event", "update", "complete")
    }
    accounts = []
    view = steps_view(steps, words.unit_ms)
    for step in steps:
        fates = []
        for event in _events(step.item):
            group = group_value(tuple(k(event.payload) for k in keys))
            delivered = recorder.deliveries.get(event.seq, [])
            drop = drops.get(event.seq)
            if drop is not None and drop.group is None and group is not None:
                drop = replace(drop, group=group)
            fate = EventFate(
                event.seq, dict(event.payload), group, event.at_ms, step.index,
                tuple(w for _, w in delivered), drop, (),
                tuple(e for g, w in delivered for e in by_window.get(window_key(g, w), ())),
            )
            if drop is not None:
                fate = replace(fate, misses=miss_reasons(fate, closings, view, words))
            fates.append(fate)
        accounts.append(
            ItemAccount(
                step.index, _kind(step.item), step.batch, step.wall_before_ms, step.wall_after_ms,
                tuple(_changes(step.before, step.after, words)), tuple(fates), step.closings,
                tuple(o for o in step.outputs if isinstance(o, Emission)),
                step.item.to_ms if isinstance(step.item, Watermark) else None,
            )
        )
    lost: dict[WindowKey, LostWindow] = {}
    for seq, pairs in recorder.deliveries.items():
        for group, window in pairs:
            key = window_key(group, window)
            if key in closings or key in passed:
                continue
            known = lost.get(key)
            seqs = (*known.seqs, seq) if known else (seq,)
            lost[key] = LostWindow(group, window, tuple(sorted(seqs)), words.lost_why)
    return Explanation(
        scenario.name, profile, words, tuple(accounts),
        tuple(sorted(lost.values(), key=lambda w: (w.window.start_ms or 0, w.seqs))),
    )


def _label(step: _Step, unit_ms: int) -> str:
    item = step.item
    if step.batch is not None:
        return f"in micro-batch {step.batch}" + (" (at end of input)" if isinstance(item, End) else "")
    if isinstance(item, Event):
        return f"at #{item.seq}"
    if isinstance(item, Batch):
        return f"at the batch #{item.events[0].seq}..#{item.events[-1].seq}"
    if isinstance(item, Advance):
        return f"when the wall clock reached {time_text(step.wall_after_ms, unit_ms)}"
    if isinstance(item, Watermark):
        return "at the watermark item"
    return "at end of input"


def steps_view(steps: list[_Step], unit_ms: int) -> StepView:
    return StepView(
        tuple(s.after for s in steps), tuple(_label(s, unit_ms) for s in steps),
        tuple(s.before for s in steps),
    )
