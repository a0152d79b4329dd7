"""Beam's triggers as values (https://beam.apache.org/documentation/programming-guide/#triggers).

One frozen class per trigger of Beam's Python SDK (``apache_beam.transforms.trigger``):
:class:`Default`, :class:`AfterWatermark` (with optional ``early`` and ``late`` firings),
:class:`AfterCount`, :class:`AfterProcessingTime`, :class:`Repeatedly`, :class:`AfterAny`,
:class:`AfterAll`, :class:`AfterEach`, :class:`OrFinally`, :class:`Never` and
:class:`Always`. :func:`parse_trigger` reads Beam's spelling (``grammar.py``); ``str`` of a
trigger writes it back. What a trigger does over time is in ``trigger_state.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.profiles.beam.grammar import (
    Call,
    Duration,
    check_arguments,
    duration_arg,
    format_seconds,
    parse_call,
)


@dataclass(frozen=True, slots=True)
class Default:
    """Beam's default trigger: fires when the watermark passes the window's end, then once
    per late bundle ("Semantically Repeatedly(AfterWatermark())" in Beam's source)."""

    def __str__(self) -> str:
        return "Default"


@dataclass(frozen=True, slots=True)
class AfterWatermark:
    """Fires once when the watermark passes the window's end; ``early`` fires repeatedly
    before that, ``late`` repeatedly after (Beam wraps both in ``Repeatedly``)."""

    early: Trigger | None = None
    late: Trigger | None = None

    def __str__(self) -> str:
        parts = [f"{k}={v}" for k, v in (("early", self.early), ("late", self.late)) if v]
        return f"AfterWatermark({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class AfterCount:
    """Fires once the pane holds at least ``count`` elements; then finished."""

    count: int

    def __post_init__(self) -> None:
        if isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 1:
            raise InvalidSpec("window.trigger", f"AfterCount({self.count})",
                              "count must be a positive integer", "write AfterCount(3)")

    def __str__(self) -> str:
        return f"AfterCount({self.count})"


@dataclass(frozen=True, slots=True)
class AfterProcessingTime:
    """Fires once ``delay_ms`` of processing time (the scenario's wall clock) after the
    first element of the pane; then finished."""

    delay_ms: int = 0

    def __post_init__(self) -> None:
        if self.delay_ms < 0:
            raise InvalidSpec("window.trigger", str(self), "the delay must not be negative",
                              "write AfterProcessingTime(5)")

    def __str__(self) -> str:
        return f"AfterProcessingTime({format_seconds(self.delay_ms)})"


@dataclass(frozen=True, slots=True)
class Repeatedly:
    """Fires whenever ``underlying`` fires, resetting it each time it finishes; never finishes."""

    underlying: Trigger

    def __str__(self) -> str:
        return f"Repeatedly({self.underlying})"


@dataclass(frozen=True, slots=True)
class AfterAny:
    """Fires when any part fires; finished when any part finished."""

    parts: tuple[Trigger, ...]

    def __str__(self) -> str:
        return f"AfterAny({', '.join(map(str, self.parts))})"


@dataclass(frozen=True, slots=True)
class AfterAll:
    """Fires when every part would fire; finished when every part that fired finished."""

    parts: tuple[Trigger, ...]

    def __str__(self) -> str:
        return f"AfterAll({', '.join(map(str, self.parts))})"


@dataclass(frozen=True, slots=True)
class AfterEach:
    """Runs its parts in sequence: each fires until it finishes, then the next takes over."""

    parts: tuple[Trigger, ...]

    def __str__(self) -> str:
        return f"AfterEach({', '.join(map(str, self.parts))})"


@dataclass(frozen=True, slots=True)
class OrFinally:
    """``main``, until ``final`` fires: fires when either fires, finished when either
    finishes (Beam's ``OrFinally`` is an ``AfterAny`` of the two)."""

    main: Trigger
    final: Trigger

    def __str__(self) -> str:
        return f"OrFinally({self.main}, {self.final})"


@dataclass(frozen=True, slots=True)
class Never:
    """Never fires (Beam's ``_Never``); data still sits in the window."""

    def __str__(self) -> str:
        return "Never"


@dataclass(frozen=True, slots=True)
class Always:
    """Fires on every element and timer; never finishes."""

    def __str__(self) -> str:
        return "Always"


Trigger = (Default | AfterWatermark | AfterCount | AfterProcessingTime | Repeatedly | AfterAny
           | AfterAll | AfterEach | OrFinally | Never | Always)

EXAMPLE: Final = "AfterWatermark(early=AfterCount(3), late=AfterCount(1))"
NAMES: Final = ("Default", "DefaultTrigger", "AfterWatermark", "AfterCount",
                "AfterProcessingTime", "Repeatedly", "AfterAny", "AfterAll", "AfterEach",
                "OrFinally", "Never", "_Never", "Always")


def parse_trigger(text: object, field: str = "window.trigger") -> Trigger:
    """A trigger in Beam's Python spelling; raises InvalidSpec naming ``field``."""
    return trigger_of(parse_call(text, field, EXAMPLE), field)


def trigger_of(call: Call, field: str) -> Trigger:
    """The trigger a parsed call names (its arguments checked)."""
    name = call.name
    if name in ("Default", "DefaultTrigger", "Never", "_Never", "Always"):
        check_arguments(call, 0, (), field)
        return Default() if name.startswith("Default") else Always() if name == "Always" else Never()
    if name == "AfterWatermark":
        check_arguments(call, 0, ("early", "late"), field)
        early, late = call.keyword("early"), call.keyword("late")
        return AfterWatermark(None if early is None else _sub(early, field),
                              None if late is None else _sub(late, field))
    if name == "AfterCount":
        check_arguments(call, 1, ("count",), field)
        value = call.args[0] if call.args else call.keyword("count")
        if not isinstance(value, Duration) or not value.plain or value.ms % 1000:
            raise InvalidSpec(field, str(call), "AfterCount takes a whole number of elements",
                              "write AfterCount(3)")
        return AfterCount(value.ms // 1000)
    if name == "AfterProcessingTime":
        check_arguments(call, 1, ("delay",), field)
        return AfterProcessingTime(duration_arg(call, 0, "delay", field) or 0)
    if name == "Repeatedly":
        check_arguments(call, 1, ("underlying",), field)
        parts = _parts(call, field)
        if len(parts) != 1:
            raise InvalidSpec(field, str(call), "Repeatedly takes one trigger",
                              "write Repeatedly(AfterCount(2))")
        return Repeatedly(parts[0])
    if name in ("AfterAny", "AfterAll", "AfterEach", "OrFinally"):
        check_arguments(call, len(call.args), (), field)
        parts = _parts(call, field)
        if name == "OrFinally":
            if len(parts) != 2:
                raise InvalidSpec(field, str(call), "OrFinally takes two triggers",
                                  "write OrFinally(Repeatedly(AfterCount(2)), AfterCount(5))")
            return OrFinally(parts[0], parts[1])
        if not parts:
            raise InvalidSpec(field, str(call), f"{name} needs at least one trigger",
                              f"write {name}(AfterCount(2), AfterProcessingTime(5))")
        if name == "AfterAny":
            return AfterAny(parts)
        return AfterAll(parts) if name == "AfterAll" else AfterEach(parts)
    raise InvalidSpec(field, str(call), f"unknown trigger {name}",
                      f"use one of {', '.join(NAMES)}")


def _sub(value: object, field: str) -> Trigger:
    if not isinstance(value, Call):
        raise InvalidSpec(field, str(value), "must be a trigger", f"write e.g. {EXAMPLE}")
    return trigger_of(value, field)


def _parts(call: Call, field: str) -> tuple[Trigger, ...]:
    values = [*call.args, *(v for _, v in call.kwargs)]
    return tuple(_sub(v, field) for v in values)


def uses_processing_time(trigger: Trigger) -> bool:
    """Whether any part of ``trigger`` is an :class:`AfterProcessingTime`."""
    return any(isinstance(t, AfterProcessingTime) for t in walk(trigger))


def walk(trigger: Trigger) -> list[Trigger]:
    """``trigger`` and every part inside it, depth first."""
    found: list[Trigger] = [trigger]
    if isinstance(trigger, AfterWatermark):
        for sub in (trigger.early, trigger.late):
            if sub is not None:
                found += walk(sub)
    elif isinstance(trigger, Repeatedly):
        found += walk(trigger.underlying)
    elif isinstance(trigger, AfterAny | AfterAll | AfterEach):
        for part in trigger.parts:
            found += walk(part)
    elif isinstance(trigger, OrFinally):
        found += walk(trigger.main) + walk(trigger.final)
    return found
