"""Runs read for drawing: the stream's items, the oracle's own account, a Spark replay.

Nothing here decides what an engine does: the oracle panel takes deliveries, drops,
emissions and the clock or watermark after each item from
:func:`windtunnel.oracle.explain.explain`; the Spark panel takes Spark's outputs and
places each emission at the item after which it came (``after_seq``, ``wall_ms``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from windtunnel.cli.plotting.timeline import Arrival, PanelSource
from windtunnel.oracle.explain import explain
from windtunnel.oracle.model.fields import getter
from windtunnel.oracle.model.results import Drop, Emission, Output
from windtunnel.oracle.model.spec import NOW
from windtunnel.oracle.model.stream import Advance, Batch, Event, Item, Watermark, checked
from windtunnel.oracle.model.timeparse import NotATime, timestamp_ms
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.scenario import Scenario
from windtunnel.oracle.windows.driver import group_value


def _kind(item: Item) -> str:
    return {Event: "event", Batch: "batch", Advance: "advance", Watermark: "watermark"}.get(
        type(item), "end"
    )


def arrivals(scenario: Scenario) -> list[Arrival]:
    """Every input item with its events' seqs, event times (ms) and groups, and the wall
    clock after it (as the stream defines it: an event's ``at``, an advance's target)."""
    window = scenario.query.window
    on = window.on
    assigner = getattr(window, "time_assigner", None)
    time_of = getter(on) if assigner is None else assigner
    keys = [getter(p) for p in scenario.query.group_by]
    unit = scenario.time_unit_ms
    wall = scenario.start_wall_ms
    out = []
    for index, item in enumerate(checked(scenario.items, scenario.start_wall_ms)):
        events = (item,) if isinstance(item, Event) else item.events if isinstance(item, Batch) else ()
        times: list[int | None] = []
        for event in events:
            if event.at_ms is not None:
                wall = max(wall, event.at_ms)
            times.append(wall if on == NOW else _time(time_of(event.payload), unit))
        if isinstance(item, Advance):
            wall = max(wall, item.to_ms)
        out.append(
            Arrival(
                index, _kind(item), tuple(e.seq for e in events), wall, tuple(times),
                tuple(group_value(tuple(k(e.payload) for k in keys)) for e in events),
                item.to_ms if isinstance(item, Watermark) else None,
            )
        )
    return out


def _time(raw: Any, unit_ms: int) -> int | None:
    if type(raw) is int:
        return raw * unit_ms
    try:
        return timestamp_ms(raw, unit_ms)
    except NotATime:
        return None


def _key(group: Any) -> Any:
    return tuple(group) if isinstance(group, list) else group


def oracle_source(scenario: Scenario, profile: str | None = None) -> PanelSource:
    """The oracle's account of ``scenario`` under ``profile`` (default: its own)."""
    account = explain(scenario, profile)
    drops: dict[int, Drop] = {}
    delivered = {}
    for fate in account.fates():
        if fate.drop is not None:
            drops[fate.seq] = fate.drop
        delivered[fate.seq] = fate.delivered_to
    clocks: list[dict[Any, int]] = []
    for item in account.items:
        now = dict(clocks[-1]) if clocks else {}
        for change in item.clocks:
            if change.after_ms is not None:
                now[_key(change.group)] = change.after_ms
        clocks.append(now)
    per_key = any(c.per_key for item in account.items for c in item.clocks)
    clock = f"{account.words.clock} per key" if per_key else account.words.clock
    return PanelSource(
        account.profile, clock, tuple(item.emissions for item in account.items), drops,
        delivered, tuple(clocks), tuple((w.group, w.window) for w in account.lost),
        closed_end=account.words.closed_end,
    )


def spark_source(scenario: Scenario, outputs: tuple[Output, ...], stream: list[Arrival],
                 name: str) -> PanelSource:
    """A Spark replay's outputs: each emission under the first item after which the last
    consumed event was ``after_seq`` and the wall clock had reached ``wall_ms`` (end of
    input emissions under the end)."""
    last_seq: list[int | None] = []
    seq: int | None = None
    for arrival in stream:
        seq = arrival.seqs[-1] if arrival.seqs else seq
        last_seq.append(seq)
    emitted: list[list[Emission]] = [[] for _ in stream]
    drops: dict[int, Drop] = {}
    for output in outputs:
        if isinstance(output, Drop):
            drops.setdefault(output.seq, output)
            continue
        emitted[_place(output, stream, last_seq)].append(output)
    stock = scenario.profile.name == "spark"
    note = "Spark does not report its watermark" + (
        "; stock Spark drops late rows silently" if stock else ""
    )
    return PanelSource(name, "watermark", tuple(tuple(e) for e in emitted), drops, note=note)


def _place(emission: Emission, stream: list[Arrival], last_seq: list[int | None]) -> int:
    if emission.reason == "end_of_input":
        return len(stream) - 1
    for i, arrival in enumerate(stream):
        if last_seq[i] == emission.after_seq and arrival.wall_ms >= emission.wall_ms:
            return i
    return len(stream) - 1


def under_profile(scenario: Scenario, name: str) -> Scenario:
    """``scenario`` under profile ``name`` with its own ``rules:`` overrides on top."""
    profile = profile_named(name)
    rules = profile.rules.with_overrides(dict(scenario.rule_overrides))
    return replace(scenario, profile=profile, rules=rules)
