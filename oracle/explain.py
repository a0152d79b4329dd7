"""Explaining what happened to one event: the windows it reached, and when they were emitted.

Uses the oracle itself twice: once as given, and once as a pass-through query (no
aggregate) whose per-delivery emissions reveal exactly which windows received the
event. Nothing here re-implements a rule.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from windtunnel.oracle.engine import replay
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.results import Drop, Emission, WindowRef
from windtunnel.oracle.model.spec import Aggregation
from windtunnel.oracle.model.stream import Batch, Event, events_of
from windtunnel.oracle.scenario import Scenario


@dataclass(frozen=True, slots=True)
class Explanation:
    """The fate of event ``seq``: its payload, where it went, and what came of it."""

    seq: int
    payload: dict[str, object]
    delivered_to: tuple[WindowRef, ...]
    drop: Drop | None
    emissions: tuple[Emission, ...]

    def lines(self) -> list[str]:
        out = [f"event seq {self.seq}: {self.payload}"]
        if self.drop is not None:
            out.append(f"  dropped ({self.drop.reason}): {self.drop.message}")
        for window in self.delivered_to:
            out.append(f"  delivered to {_ref(window)}")
            for emission in self.emissions:
                if emission.window == window:
                    out.append(
                        f"    emitted ({emission.reason}) after seq {emission.after_seq}"
                        f" at wall {emission.wall_ms}: {dict(emission.row)}"
                    )
        if self.drop is None and not self.delivered_to:
            out.append("  reached no window")
        return out


def _ref(window: WindowRef) -> str:
    parts = []
    if window.start_offset is not None:
        parts.append(f"offsets [{window.start_offset}, {window.end_offset})")
    if window.start_ms is not None:
        parts.append(f"[{window.start_ms}, {window.end_ms})")
    return " ".join(parts)


_SEQ_FIELD = "__windtunnel_seq"


def _holding(scenario: Scenario, seq: int) -> tuple[tuple[WindowRef, ...], object]:
    """The windows whose emissions hold event ``seq`` and its group, found by running the
    scenario with each payload tagged with its seq and collected."""

    def tag(event: Event) -> Event:
        return replace(event, payload={**event.payload, _SEQ_FIELD: event.seq})

    items = tuple(
        tag(i) if isinstance(i, Event) else Batch(tuple(tag(e) for e in i.events))
        if isinstance(i, Batch) else i for i in scenario.items
    )
    query = replace(scenario.query, aggregate=(Aggregation(_SEQ_FIELD, "collect", _SEQ_FIELD),),
                    aggregate_by=())
    try:
        tagged = replay(replace(scenario, query=query, items=items))
    except InvalidInput:
        return (), None
    holding = [e for e in tagged.emissions if seq in (e.row.get(_SEQ_FIELD) or ())]
    windows = tuple(dict.fromkeys(e.window for e in holding))
    return windows, (holding[0].group if holding else None)


def explain(scenario: Scenario, seq: int) -> Explanation:
    """Explain event ``seq`` of ``scenario``; raises InvalidInput when there is no such event."""
    events = {e.seq: e for e in events_of(scenario.items)}
    if seq not in events:
        raise InvalidInput("--seq", seq, f"no such event (the stream has {len(events)})", "give a seq from 0")
    result = replay(scenario)
    drop = next((d for d in result.drops if d.seq == seq), None)
    group = None
    delivered: tuple[WindowRef, ...] = ()
    if scenario.query.aggregate is None:
        mine = [e for e in result.emissions if e.reason == "event" and e.after_seq == seq]
    else:
        passthrough = replay(replace(scenario, query=replace(scenario.query, aggregate=None, aggregate_by=())))
        mine = [e for e in passthrough.emissions if e.reason == "event" and e.after_seq == seq]
    if mine:
        delivered = tuple(e.window for e in mine)
        group = mine[0].group
    elif drop is None:  # operators that emit buffered windows whole (kdb, timeplus, ekuiper)
        delivered, group = _holding(scenario, seq)
    emissions = tuple(
        e for e in result.emissions if e.window in delivered and e.group == group and e.reason != "event"
    )
    return Explanation(seq, dict(events[seq].payload), delivered, drop, emissions)
