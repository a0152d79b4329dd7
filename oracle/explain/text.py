"""The account in plain words: one line per input item, or one per selected event.

Times read in the scenario's own unit (:mod:`windtunnel.oracle.model.timefmt`); clocks and
batches are named as the profile names them (:mod:`windtunnel.oracle.explain.words`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from windtunnel.oracle.explain.values import window_key
from windtunnel.oracle.model.results import Emission, WindowRef, pane_of
from windtunnel.oracle.model.timefmt import time_text, window_text

if TYPE_CHECKING:
    from windtunnel.oracle.explain.values import (
        Account,
        ClockChange,
        Closing,
        EventFate,
        ItemAccount,
        StepView,
        WindowKey,
    )
    from windtunnel.oracle.explain.words import Words


def value_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def group_text(group: Any) -> str:
    """`` of a`` (or `` of a/10.0.0.1``); empty when ungrouped."""
    if group is None:
        return ""
    if isinstance(group, list):
        return " of " + "/".join(value_text(v) for v in group)
    return f" of {value_text(group)}"


def payload_text(payload: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={value_text(v)}" for k, v in payload.items())


def _window(window: WindowRef, words: Words) -> str:
    return window_text(window, words.unit_ms, closed_end=words.closed_end)


def _time(ms: int | None, words: Words) -> str:
    return time_text(ms, words.unit_ms)


def event_head(fate: EventFate, words: Words) -> str:
    arrived = "" if fate.arrived_ms is None else f" (arrived {_time(fate.arrived_ms, words)})"
    return f"#{fate.seq} {payload_text(fate.payload)}".rstrip() + arrived


def emission_text(emission: Emission, words: Words) -> str:
    row = ", ".join(f"{k}={value_text(v)}" for k, v in emission.row.items())
    how = emission.reason
    if emission.reason in ("idle_timeout", "timer"):
        how += f" at wall time {_time(emission.wall_ms, words)}"
    if emission.partial:
        how += ", partial"
    pane = pane_of(emission)
    if pane is not None:  # beam: which firing, its output time, and why it fired
        flags = "".join(f", {n}" for n, on in (("first", pane.first), ("last", pane.last)) if on)
        how += f"; pane {pane.index} {pane.timing}{flags}, at {_time(pane.timestamp_ms, words)}"
        if pane.fired_by:
            how += f"; fired by {pane.fired_by}"
    return f"emitted {_window(emission.window, words)}{group_text(emission.group)}: {row} ({how})"


def clock_text(change: ClockChange, words: Words) -> str:
    if not change.per_key:
        name = words.clock
    elif change.group is None:
        name = f"the {words.clock}"
    else:
        name = f"{group_text(change.group)[4:]}'s {words.clock}"
    before, after = _time(change.before_ms, words), _time(change.after_ms, words)
    text = f"{name} stays {after}" if before == after else f"{name} {before} -> {after}"
    if words.micro_batches:
        text += " (after this micro-batch)"
    return text


def _moved(changes: tuple[ClockChange, ...], group: Any = ...) -> list[ClockChange]:
    """The changes to show: the event's key (``group``) or stream; else those that moved."""
    if group is not ...:
        return [c for c in changes if not c.per_key or c.group == group]
    return [c for c in changes if not c.per_key or c.before_ms != c.after_ms]


def miss_reasons(
    fate: EventFate, closings: Mapping[WindowKey, Closing], steps: StepView, words: Words
) -> tuple[str, ...]:
    """Why event ``fate`` missed each window of its drop, from the closings recorded."""

    drop = fate.drop
    assert drop is not None
    if not drop.windows or words.profile == "beam":  # beam: the drop says which rule
        return (words.said(drop.message),)
    reasons = []
    for window in drop.windows:
        name = f"its window {_window(window, words)}{group_text(fate.group)}"
        closing = closings.get(window_key(fate.group, window))
        if closing is None:
            reasons.append(f"{name}: {words.said(drop.message)}")
        elif closing.reason == "idle_timeout":
            reasons.append(
                f"{name} was force-closed by the idle timeout at wall time "
                f"{_time(closing.wall_ms, words)}"
            )
        elif closing.reason in ("close", "evicted"):
            # a micro-batch closes with the watermark it started with (set by earlier batches)
            view = (steps.before if words.micro_batches else steps.after)[closing.item]
            pick = 1 if words.watermark else 0
            reached = None if view is None else view.of(fate.group)[pick]
            verb = "was evicted" if closing.reason == "evicted" else "closed"
            reasons.append(
                f"{name} {verb} when the {words.clock} reached {_time(reached, words)} "
                f"{steps.labels[closing.item]}"
            )
        else:
            reasons.append(f"{name} was emitted ({closing.reason}) {steps.labels[closing.item]}")
    return tuple(reasons)


def fate_text(fate: EventFate, words: Words, *, with_emissions: bool) -> str:
    """What happened to one event: delivered to / dropped, and (optionally) what its windows
    emitted."""
    parts = []
    if fate.delivered_to:
        parts.append(
            "delivered to " + ", ".join(_window(w, words) for w in fate.delivered_to)
            + group_text(fate.group)
        )
    if fate.drop is not None:
        parts.append(f"dropped ({fate.drop.reason}): " + "; ".join(fate.misses))
    if not parts:
        parts.append("delivered to no window and not dropped")
    if with_emissions:
        parts += [emission_text(e, words) + f" after #{e.after_seq}" for e in fate.emissions]
    return "; ".join(parts)


def _item_parts(item: ItemAccount, expl: Account) -> list[str]:
    words = expl.words
    parts = []
    group = item.events[0].group if item.kind == "event" else ...
    parts += [clock_text(c, words) for c in _moved(item.clocks, group)]
    emitted = {(json.dumps(e.group, default=str), e.window) for e in item.emissions}
    evicted = []
    for closing in item.closings:
        if closing.reason == "evicted":  # Spark's update mode (oracle/windows/output_modes.py)
            evicted.append(f"evicted {_window(closing.window, words)}{group_text(closing.group)}"
                           " from the state, without a row (update mode: its rows went out "
                           "as updates)")
            continue
        if words.passthrough or (json.dumps(closing.group, default=str), closing.window) in emitted:
            continue
        parts.append(
            f"closed {_window(closing.window, words)}{group_text(closing.group)} without a row "
            f"({closing.reason})"
        )
    parts += [emission_text(e, words) for e in item.emissions if e.reason != "event"]
    return parts + evicted


def _item_head(item: ItemAccount, expl: Account) -> str:
    words = expl.words
    batch = "" if item.batch is None else f"micro-batch {item.batch}: "
    if item.kind == "advance":
        return (f"wall clock {_time(item.wall_before_ms, words)} -> "
                f"{_time(item.wall_after_ms, words)}")
    if item.kind == "watermark":
        return f"watermark item: the {words.clock} is moved to {_time(item.watermark_ms, words)}"
    if item.kind == "end":
        return f"{batch}end of input" + (" (no data)" if batch else "")
    if item.kind == "batch":
        heads = ", ".join(event_head(f, words) for f in item.events)
        return f"{batch or 'batch: '}{heads}"
    return batch + event_head(item.events[0], words)


def item_lines(item: ItemAccount, expl: Account) -> list[str]:
    """One line for an item (an event's fate inline), plus one indented line per event of a
    batch."""
    words = expl.words
    parts = _item_parts(item, expl)
    if item.kind == "event":
        parts.insert(len(_moved(item.clocks, item.events[0].group)),
                     fate_text(item.events[0], words, with_emissions=False))
        return [f"{_item_head(item, expl)}: " + "; ".join(parts)]
    head = _item_head(item, expl)
    lines = [head + (": " + "; ".join(parts) if parts else "")]
    if item.kind == "batch":
        lines += [f"  #{f.seq}: {fate_text(f, words, with_emissions=False)}" for f in item.events]
    return lines


def lost_line(expl: Account, index: int) -> str:
    lost = expl.lost[index]
    seqs = ", ".join(f"#{s}" for s in lost.seqs)
    return (f"window {_window(lost.window, expl.words)}{group_text(lost.group)} (holding {seqs}) "
            f"was never emitted: {lost.why}")


def explanation_lines(expl: Account, seqs: tuple[int, ...], drops: bool) -> list[str]:
    """Every item in order, then the windows never emitted; or, with ``seqs`` or ``drops``,
    one line per selected event with its windows' emissions."""
    words = expl.words
    if seqs or drops:
        chosen = [expl.event(s) for s in seqs] if seqs else expl.fates()
        if drops:
            chosen = [f for f in chosen if f.drop is not None]
        lines = []
        for fate in chosen:
            line = f"{event_head(fate, words)}: {fate_text(fate, words, with_emissions=True)}"
            lost = [w.window for w in expl.lost if fate.seq in w.seqs]
            if lost:
                line += f"; never emitted: {', '.join(_window(w, words) for w in lost)} " \
                        f"({words.lost_why})"
            lines.append(line)
        return lines
    lines = [line for item in expl.items for line in item_lines(item, expl)]
    lines += [lost_line(expl, i) for i in range(len(expl.lost))]
    return lines
