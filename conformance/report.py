"""The divergence report of ``windtunnel check``: what differs, where, and the events behind it.

The cause first, where the target's plan names it (what the job's watermark, window, keys,
aggregates or stages do differently from the spec, :mod:`windtunnel.conformance.cause`).
Then missing and unexpected outputs side by side (two columns: what the
oracle emits under the profile and the target does not, and the reverse; emissions
in the wrong micro-batch below); the first divergent window (smallest bounds); and a
timeline of the shrunk stream built from the oracle's own account of the run
(:func:`windtunnel.oracle.explain.explain` under the profile): one line per event with
its seq, event time, arrival, micro-batch (as the Spark targets are fed), the clock or
watermark after its item (named as the profile names it: the per-key clock for tenzir
and kdb, the watermark for spark, flink, ekuiper and timeplus) and what the oracle
emitted or dropped then. Events inside the first divergent window are marked ``*``.
Times read in the scenario's ``time_unit``, ISO-8601 UTC when epoch-scale
(:mod:`windtunnel.oracle.model.timefmt`). Colour (click.style) only when asked for.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from typing import Any

import click

from windtunnel.conformance.check import CheckResult, Failure, describe_output
from windtunnel.conformance.counterexample import item_json
from windtunnel.conformance.focus import behind, divergent_output, event_ms, same_value
from windtunnel.conformance.targets import micro_batch_of_seq
from windtunnel.oracle.explain import ItemAccount, explain
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.fields import getter
from windtunnel.oracle.model.results import Emission, Output
from windtunnel.oracle.model.stream import Batch, Event, Item
from windtunnel.oracle.model.timefmt import EPOCH_SCALE_MS, time_text
from windtunnel.oracle.model.timeparse import UNIT_MS
from windtunnel.oracle.scenario import Scenario

COLUMN = 46


def _style(text: str, color: bool, **styles: Any) -> str:
    return click.style(text, **styles) if color else text


def side_by_side(left: Sequence[str], right: Sequence[str], width: int = COLUMN) -> list[str]:
    """Two columns of wrapped lines, ``width`` characters each."""
    def wrap(lines: Sequence[str]) -> list[str]:
        out: list[str] = []
        for line in lines:
            out += textwrap.wrap(line, width, subsequent_indent="  ") or [""]
        return out

    a, b = wrap(left), wrap(right)
    rows = max(len(a), len(b))
    a += [""] * (rows - len(a))
    b += [""] * (rows - len(b))
    return [f"  {x:<{width}} | {y}".rstrip() for x, y in zip(a, b, strict=True)]


def unit_note(scenario: Scenario) -> str:
    """How the report's times read: ``times in s``, or ISO-8601 UTC for calendar times."""
    unit = next((n for n, size in UNIT_MS.items() if size == scenario.time_unit_ms and n != "m"),
                "ms")
    calendar = any(
        abs(t) >= EPOCH_SCALE_MS
        for item in scenario.items
        for e in ([item] if isinstance(item, Event) else item.events if isinstance(item, Batch)
                  else [])
        for t in (event_ms(scenario, e), e.at_ms)
        if t is not None
    )
    return "times ISO-8601 UTC" if calendar else f"times in {unit}"


def _time_cell(scenario: Scenario, event: Event, unit_ms: int) -> str:
    """The event time in the report's unit; ``null``, the raw value when not a time, or
    ``-`` when the window runs on arrival (``now()``)."""
    on = getattr(scenario.query.window, "on", None)
    if not isinstance(on, str) or on == "now()":
        return "-"
    t_ms = event_ms(scenario, event)
    if t_ms is not None:
        return time_text(t_ms, unit_ms)
    raw = getter(on)(event.payload)
    return "null" if raw is None else str(raw)


def _clock_after(item: ItemAccount, group: Any) -> int | None:
    """The clock or watermark after ``item``: the stream's, or ``group``'s own."""
    for change in item.clocks:
        if not change.per_key or same_value(change.group, group):
            return change.after_ms
    return None


def _said(item: ItemAccount, unit_ms: int) -> list[str]:
    """What the oracle emitted while consuming ``item`` (pass-through rows included)."""
    return [describe_output(e, unit_ms) for e in item.emissions]


def timeline(scenario: Scenario, profile: str, focus: Output | None) -> list[str]:
    """One line per event of ``scenario`` from the oracle's account under ``profile``: seq,
    event time, arrival, micro-batch, the clock or watermark after its item (of ``focus``'s
    group when clocks are per key, else of the event's), and what was emitted or dropped;
    idle gaps, watermark items and end of input get lines of their own."""
    try:
        account = explain(scenario, profile)
    except InvalidInput:
        return [f"timeline under profile {profile}: not available (the oracle rejects the stream)"]
    unit_ms = scenario.time_unit_ms
    clock = account.words.clock
    focus_group = focus.group if isinstance(focus, Emission) else None
    batches = micro_batch_of_seq(scenario.items)
    by_seq = {e.seq: e for e in _events(scenario.items)}

    def text(ms: int | None) -> str:
        return "-" if ms is None else time_text(ms, unit_ms)

    rows: list[tuple[str, str, str, str, str, str, list[str]]] = []
    for item in account.items:
        said = _said(item, unit_ms)
        if item.kind in ("event", "batch"):
            for index, fate in enumerate(item.events):
                event = by_seq[fate.seq]
                star = "*" if focus is not None and behind(scenario, focus, event, fate.group) else ""
                last = index == len(item.events) - 1
                group = fate.group if focus_group is None else focus_group
                time = _time_cell(scenario, event, unit_ms)
                notes = [f"dropped ({fate.drop.reason})"] if fate.drop is not None else []
                notes += said if last else []
                rows.append((star, str(fate.seq), time, text(fate.arrived_ms),
                             str(batches.get(fate.seq, "")), text(_clock_after(item, group))
                             if last else "", notes))
            continue
        group = focus_group
        after = text(_clock_after(item, group))
        if item.kind == "advance":
            rows.append(("", "idle", "", text(item.wall_after_ms), "", after,
                         [f"wall clock -> {text(item.wall_after_ms)}", *said]))
        elif item.kind == "watermark":
            rows.append(("", "wm", "", "", "", after,
                         [f"{clock} moved to {text(item.watermark_ms)}", *said]))
        elif said:
            rows.append(("", "end", "", "", "", after, said))
    per_key = any(c.per_key for item in account.items for c in item.clocks)
    whose = ("" if not per_key else " of the event's key" if focus_group is None
             else f" of {json.dumps(focus_group, default=str)}")
    title = (f"timeline under profile {profile} (* = behind that window; {clock}{whose} after "
             f"each item; batch = micro-batch; {unit_note(scenario)}):")
    head = ("", "seq", "time", "arrival", "batch", clock, ["outputs"])
    table = [(row[:6], row[6]) for row in (head, *rows)]
    widths = [max(len(cells[i]) for cells, _ in table) for i in range(6)]
    lines = [title]
    for cells, said_then in table:
        lead = "  " + " ".join(
            [cells[0].ljust(1)] + [cells[i].rjust(widths[i]) for i in range(1, 6)]) + "  "
        outputs = said_then or [""]
        lines.append((lead + outputs[0]).rstrip())
        lines += [" " * len(lead) + more for more in outputs[1:]]
    return lines


def _events(items: Sequence[Item]) -> list[Event]:
    return [e for i in items for e in ([i] if isinstance(i, Event) else
                                       i.events if isinstance(i, Batch) else [])]


def render(result: CheckResult, failure: Failure, *, color: bool = False) -> str:
    """The full divergence report for ``failure``."""
    target, profile = result.target, result.profile
    mismatch = failure.mismatch
    scenario = failure.scenario
    n_events = sum(1 if isinstance(i, Event) else len(i.events) if isinstance(i, Batch) else 0
                   for i in scenario.items)
    head = (f"divergence: {target} differs from the oracle (profile {profile}); "
            f"shrunk to {n_events} event(s) in {failure.shrink_rounds} rounds, "
            f"{failure.shrink_calls} calls, {failure.shrink_seconds:.1f} s on {failure.shrunk_on}")
    lines = [_style(head, color, fg="red", bold=True), ""]
    if failure.cause:
        lines.append(_style("cause, from the job's plan:", color, bold=True))
        lines += [f"  {line}" for line in failure.cause]
        lines.append("")
    unit_ms = scenario.time_unit_ms
    left = [f"- {describe_output(o, unit_ms)}" for o in mismatch.missing] or ["(none)"]
    right = [f"+ {describe_output(o, unit_ms)}" for o in mismatch.unexpected] or ["(none)"]
    lines.append(_style(
        f"  {'missing: oracle ' + profile + ' emits, ' + target + ' not':<{COLUMN}} | "
        f"unexpected: {target} emits, oracle not", color, bold=True))
    for row in side_by_side(left, right):
        lines.append(_style(row, color, fg="yellow"))
    for late in mismatch.timing:
        lines.append(f"  ~ {describe_output(late.output, unit_ms)}: micro-batch {late.actual_batch}, "
                     f"expected {late.expected_batch}")
    focus = divergent_output(mismatch)
    if focus is not None:
        lines += ["", _style(f"first divergent window: {describe_output(focus, unit_ms)}", color, bold=True)]
    lines += ["", *timeline(scenario, profile, focus)]
    return "\n".join(lines)


def summary(result: CheckResult) -> str:
    """The last line: scenarios checked, time, rate as ``<R> scenarios/min``, divergences."""
    found = 1 if result.failure is not None else 0
    return (f"checked {result.checked} scenarios against {result.target} (profile "
            f"{result.profile}) in {result.seconds:.1f} s ({_rate(result.rate_per_min)} "
            f"scenarios/min): {found} divergence{'s' if found != 1 else ''}")


def _rate(per_min: float) -> str:
    """A rate with two significant digits or more (0.19, 4.2, 35, 1743)."""
    return f"{per_min:.0f}" if per_min >= 10 else f"{per_min:.2g}"


def input_lines(items: Sequence[Item], unit_ms: int = 1) -> list[str]:
    """The stream as compact JSON, one item a line, times in the file's unit (``unit_ms``)."""
    return [f"  {json.dumps(item_json(i, unit_ms), default=str)}" for i in items]
