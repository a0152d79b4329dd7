"""The divergence report of ``windtunnel check``: what differs, where, and the events behind it.

Three parts: missing and unexpected outputs side by side (two columns: what the
oracle emits under the profile and the target does not, and the reverse; emissions
in the wrong micro-batch below); the first divergent window (smallest bounds); and a
timeline of the shrunk stream, one line per event with its seq, event time, arrival,
micro-batch and the event-time clock and watermark (clock minus tolerance) of the
window's group after it, read from the oracle's own operator under the profile, with
the outputs the oracle produced at that point. Events inside the first divergent
window are marked ``*``. Colour (click.style) only when asked for (a terminal).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from typing import Any

import click

from windtunnel.conformance.check import CheckResult, Failure, describe_output
from windtunnel.conformance.counterexample import item_json
from windtunnel.conformance.targets import micro_batch_of_seq
from windtunnel.oracle.engine import operator_for
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.fields import getter
from windtunnel.oracle.model.results import Drop, Emission, Output
from windtunnel.oracle.model.stream import Advance, Batch, Event, Item, checked
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.scenario import Scenario
from windtunnel.oracle.windows.driver import Context, Driver, Operator

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


def _first(outputs: Sequence[Output]) -> Output | None:
    def order(o: Output) -> tuple[int, int, int]:
        if isinstance(o, Drop):
            return (1, o.seq, 0)
        w = o.window
        start = w.start_ms if w.start_ms is not None else (w.start_offset or 0)
        end = w.end_ms if w.end_ms is not None else (w.end_offset or 0)
        return (0, start, end)

    return min(outputs, key=order) if outputs else None


def _group_of(scenario: Scenario, event: Event) -> Any:
    values = [getter(g)(event.payload) for g in scenario.query.group_by]
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def _behind(scenario: Scenario, output: Output, event: Event) -> bool:
    """Whether ``event`` is one of the events behind ``output`` (in its window and group)."""
    if isinstance(output, Drop):
        return event.seq == output.seq
    if _group_of(scenario, event) != output.group:
        return False
    window = output.window
    on = getattr(scenario.query.window, "on", None)
    if window.start_ms is None or window.end_ms is None or not isinstance(on, str):
        return True
    raw = getter(on)(event.payload)
    if not isinstance(raw, int) or isinstance(raw, bool):
        return False
    t_ms = raw * scenario.time_unit_ms
    return window.start_ms <= t_ms < window.end_ms or t_ms == window.end_ms == window.start_ms


def _clock_of(operator: Operator, ctx: Context, group: Any) -> int | None:
    """The event-time clock of ``group`` in the oracle's operator (None if it has none)."""
    for candidate in ctx.groups.values():
        if candidate.value == group or json.dumps(candidate.value, default=str) == json.dumps(
            group, default=str
        ):
            clock = getattr(getattr(candidate, "state", None), "clock", None)
            return getattr(clock, "now_ms", None)
    stream = getattr(operator, "_stream_clock", None)
    return getattr(stream, "now_ms", None)


def timeline(scenario: Scenario, profile: str, focus: Output | None) -> list[str]:
    """One line per event of ``scenario``: seq, time, arrival, micro-batch, the clock and
    watermark of ``focus``'s group after it under ``profile``, and the oracle's outputs."""
    rules = profile_named(profile).rules.with_overrides(dict(scenario.rule_overrides))
    tolerance_ms = getattr(scenario.query.window, "tolerance_ms", 0) or 0
    group = focus.group if isinstance(focus, Emission) else None
    try:
        driver = Driver(
            scenario.query,
            lambda q, ctx: operator_for(q, ctx, profile),
            rules,
            time_unit_ms=scenario.time_unit_ms,
            start_wall_ms=scenario.start_wall_ms,
            profile=profile,
        )
    except InvalidInput:
        return []
    on = getattr(scenario.query.window, "on", None)
    batches = micro_batch_of_seq(scenario.items)
    lines = [f"  {'':1} {'seq':>4} {'time':>10} {'arrival':>9} {'batch':>5} {'clock':>10} "
             f"{'watermark':>10}  outputs"]

    def fmt(value: int | None) -> str:
        return "-" if value is None else str(value)

    for item in checked(scenario.items, scenario.start_wall_ms):
        out: list[Output] = []
        driver.feed(item, out)
        said = "; ".join(describe_output(o) for o in out)
        clock = _clock_of(driver.operator, driver.ctx, group)
        mark = clock if clock is None else clock - tolerance_ms
        events: list[Event] = (
            [item] if isinstance(item, Event) else list(item.events) if isinstance(item, Batch) else []
        )
        if isinstance(item, Advance):
            lines.append(f"    {'':>4} {'':>10} {item.to_ms:>9} {'':>5} {fmt(clock):>10} "
                         f"{fmt(mark):>10}  idle until {item.to_ms} {said}".rstrip())
        elif not events and said:
            lines.append(f"    {'end':>4} {'':>10} {'':>9} {'':>5} {fmt(clock):>10} "
                         f"{fmt(mark):>10}  {said}")
        for index, event in enumerate(events):
            star = "*" if focus is not None and _behind(scenario, focus, event) else " "
            raw = getter(on)(event.payload) if isinstance(on, str) else None
            time = "null" if raw is None and on is not None else fmt(raw) if isinstance(
                raw, int) else str(raw)
            arrival = fmt(event.at_ms) if event.at_ms is not None else "."
            last = index == len(events) - 1
            lines.append(
                f"  {star} {event.seq:>4} {time:>10} {arrival:>9} {batches.get(event.seq, 0):>5} "
                f"{fmt(clock) if last else '':>10} {fmt(mark) if last else '':>10}"
                f"  {said if last else ''}".rstrip()
            )
    return lines


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
    left = [f"- {describe_output(o)}" for o in mismatch.missing] or ["(none)"]
    right = [f"+ {describe_output(o)}" for o in mismatch.unexpected] or ["(none)"]
    lines.append(_style(
        f"  {'missing: oracle ' + profile + ' emits, ' + target + ' not':<{COLUMN}} | "
        f"unexpected: {target} emits, oracle not", color, bold=True))
    for row in side_by_side(left, right):
        lines.append(_style(row, color, fg="yellow"))
    for late in mismatch.timing:
        lines.append(f"  ~ {describe_output(late.output)}: micro-batch {late.actual_batch}, "
                     f"expected {late.expected_batch}")
    focus = _first([*mismatch.missing, *mismatch.unexpected]) or (
        mismatch.timing[0].output if mismatch.timing else None
    )
    if focus is not None:
        lines += ["", _style(f"first divergent window: {describe_output(focus)}", color, bold=True)]
    lines += ["", f"timeline under profile {profile} (* = behind that window; clock after "
              "its micro-batch, watermark = clock - tolerance, in ms; time as written):"]
    lines += timeline(scenario, profile, focus)
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


def input_lines(items: Sequence[Item]) -> list[str]:
    """The stream as compact JSON, one item a line (for the report's last part)."""
    return [f"  {json.dumps(item_json(i), default=str)}" for i in items]
