"""The ``window`` block of a scenario file: one parser per ``window.kind``.

The shared kinds (fixed, cumulate, session, count, trailing) register here; profiles with
operators of their own register theirs with :func:`window_kind` when imported. Every problem
raises InvalidScenario (or InvalidSpec) naming ``window.<key>``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from windtunnel.oracle.model.conditions import parse_condition
from windtunnel.oracle.model.errors import InvalidScenario
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import (
    CountWindows,
    CumulateWindows,
    FixedWindows,
    SessionWindows,
    TrailingCountWindows,
    TrailingWindows,
    WindowSpec,
)
from windtunnel.oracle.model.timeparse import parse_duration_ms

WindowParser = Callable[[Mapping[str, Any], str, Rules], WindowSpec]
WINDOW_KINDS: dict[str, tuple[tuple[str, ...], WindowParser]] = {}


def window_kind(name: str, keys: tuple[str, ...]) -> Callable[[WindowParser], WindowParser]:
    """Register a parser for ``window.kind == name`` accepting ``keys`` (besides ``kind``)."""

    def register(parser: WindowParser) -> WindowParser:
        WINDOW_KINDS[name] = (keys, parser)
        return parser

    return register


def duration(
    block: Mapping[str, Any], key: str, time_unit: str, default: int | None = None
) -> int | None:
    """``window.<key>`` as milliseconds, ``default`` when absent."""
    if block.get(key) is None:
        return default
    return parse_duration_ms(block[key], f"window.{key}", time_unit)


def parse_window(block: Any, time_unit: str, rules: Rules) -> WindowSpec:
    """The ``window`` block as a spec; raises InvalidScenario/InvalidSpec naming ``window.*``."""
    if not isinstance(block, Mapping):
        raise InvalidScenario(
            "window", block, "must be a mapping", "write window: {kind: fixed, size: 1min}"
        )
    kind = block.get("kind", "fixed")
    if kind not in WINDOW_KINDS:
        raise InvalidScenario(
            "window.kind", kind, "unknown window kind", f"use one of {', '.join(WINDOW_KINDS)}"
        )
    keys, parser = WINDOW_KINDS[kind]
    for key in block:
        if key != "kind" and key not in keys:
            raise InvalidScenario(
                f"window.{key}",
                block[key],
                f"not an option of {kind} windows",
                f"use one of {', '.join(keys)}",
            )
    on = block.get("on", "ts")
    if not isinstance(on, str):
        raise InvalidScenario(
            "window.on", on, "must be a field name", 'write on: ts or on: "now()"'
        )
    return parser(block, time_unit, rules)


@window_kind("fixed", ("size", "every", "on", "tolerance", "idle_timeout", "allowed_lateness"))
def _fixed(block: Mapping[str, Any], time_unit: str, rules: Rules) -> FixedWindows:
    size = duration(block, "size", time_unit)
    if size is None:
        raise InvalidScenario(
            "window.size", None, "is required for fixed windows", "add size: 10min"
        )
    return FixedWindows(
        size_ms=size,
        every_ms=duration(block, "every", time_unit),
        on=block.get("on", "ts"),
        tolerance_ms=duration(block, "tolerance", time_unit, 0) or 0,
        idle_timeout_ms=duration(block, "idle_timeout", time_unit),
        allow_gaps=rules.every_greater_than_size == "accept",
        allowed_lateness_ms=duration(block, "allowed_lateness", time_unit),
    )


@window_kind("cumulate", ("step", "size", "on", "tolerance"))
def _cumulate(block: Mapping[str, Any], time_unit: str, rules: Rules) -> CumulateWindows:
    step, size = duration(block, "step", time_unit), duration(block, "size", time_unit)
    for key, value, example in (("step", step, "step: 1h"), ("size", size, "size: 1d")):
        if value is None:
            raise InvalidScenario(
                f"window.{key}", None, "is required for cumulate windows", f"add {example}"
            )
    assert step is not None and size is not None
    return CumulateWindows(
        step_ms=step,
        size_ms=size,
        on=block.get("on", "ts"),
        tolerance_ms=duration(block, "tolerance", time_unit, 0) or 0,
    )


@window_kind(
    "session",
    ("gap", "max_duration", "max_events", "on", "tolerance", "idle_timeout", "allowed_lateness"),
)
def _session(block: Mapping[str, Any], time_unit: str, rules: Rules) -> SessionWindows:
    gap = duration(block, "gap", time_unit)
    if gap is None:
        raise InvalidScenario("window.gap", None, "is required for session windows", "add gap: 30s")
    return SessionWindows(
        gap_ms=gap,
        on=block.get("on", "ts"),
        max_duration_ms=duration(block, "max_duration", time_unit),
        max_events=block.get("max_events"),
        tolerance_ms=duration(block, "tolerance", time_unit, 0) or 0,
        idle_timeout_ms=duration(block, "idle_timeout", time_unit),
        allowed_lateness_ms=duration(block, "allowed_lateness", time_unit),
    )


@window_kind("count", ("count", "every"))
def _count(block: Mapping[str, Any], time_unit: str, rules: Rules) -> CountWindows:
    if block.get("count") is None:
        raise InvalidScenario(
            "window.count", None, "is required for count windows", "add count: 100"
        )
    return CountWindows(
        count=block["count"],
        every=block.get("every"),
        allow_gaps=rules.every_greater_than_size == "accept",
    )


@window_kind("trailing", ("size", "count", "every", "on", "tolerance", "trigger"))
def _trailing(
    block: Mapping[str, Any], time_unit: str, rules: Rules
) -> TrailingWindows | TrailingCountWindows:
    trigger = (
        None if block.get("trigger") is None
        else parse_condition(block["trigger"], "window.trigger")
    )
    if block.get("count") is not None:
        for key in ("size", "on", "tolerance"):
            if block.get(key) is not None:
                raise InvalidScenario(
                    f"window.{key}", block[key],
                    "does not apply to trailing count windows (count: events, no event time)",
                    f"remove {key}, or give size instead of count for a duration window",
                )
        return TrailingCountWindows(count=block["count"], every=block.get("every"), trigger=trigger)
    size = duration(block, "size", time_unit)
    if size is None:
        raise InvalidScenario(
            "window.size", None, "is required for trailing windows",
            "add size: 5min (or count: 10 for the last 10 events)",
        )
    return TrailingWindows(
        size_ms=size, on=block.get("on", "ts"), every_ms=duration(block, "every", time_unit),
        tolerance_ms=duration(block, "tolerance", time_unit, 0) or 0, trigger=trigger,
    )
