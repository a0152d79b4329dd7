"""How tables print times: ``--times unit|ms|iso``.

``unit`` (the default) writes times in the scenario's ``time_unit`` (``30s``) and
epoch-scale values (after March 1973) as ISO-8601 UTC, as ``windtunnel explain`` does;
``ms`` writes plain epoch milliseconds; ``iso`` writes every time as ISO-8601 UTC.
Windows read ``[start,end)`` when half-open and ``[start,end]`` when both ends are
included (trailing windows, sessions under ``session_ends: events``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.results import WindowRef
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import SessionWindows, TrailingWindows, WindowSpec
from windtunnel.oracle.model.timefmt import iso_text, time_text
from windtunnel.oracle.profiles.ekuiper.spec import EkuiperWindows

TIME_MODES = ("unit", "ms", "iso")

F = TypeVar("F", bound=Callable[..., Any])


def times_option(command: F) -> F:
    """The ``--times unit|ms|iso`` option (parameter ``times``)."""
    return click.option(
        "--times",
        type=click.Choice(TIME_MODES),
        default="unit",
        show_default=True,
        help="How times print: the scenario's time unit (ISO for epoch-scale values), "
        "plain epoch milliseconds, or ISO-8601 UTC.",
    )(command)


def closed_end(window: WindowSpec, rules: Rules) -> bool:
    """Whether windows of this spec include their end: trailing windows (eKuiper's
    SLIDINGWINDOW, ``[t - size, t]``), and sessions reporting their first and last event
    times (``session_ends: events``)."""
    if isinstance(window, EkuiperWindows):
        return window.window == "sliding"
    return isinstance(window, TrailingWindows) or (
        isinstance(window, SessionWindows) and rules.session_ends == "events"
    )


@dataclass(frozen=True, slots=True)
class TimeStyle:
    """``mode`` (unit, ms, iso), the scenario's ``unit_ms`` and whether windows include
    their end (``closed_end``)."""

    mode: str = "unit"
    unit_ms: int = 1
    closed_end: bool = False

    def __post_init__(self) -> None:
        if self.mode not in TIME_MODES:
            raise InvalidSpec("--times", self.mode, "is not a time style", "use unit, ms or iso")
        if self.unit_ms <= 0:
            raise InvalidSpec("unit_ms", self.unit_ms, "must be positive", "give the time unit in ms")

    def time(self, ms: int | None) -> str:
        """One time (``none`` for a missing one)."""
        if ms is None:
            return "none"
        if self.mode == "ms":
            return str(ms)
        if self.mode == "iso":
            return iso_text(ms)
        return time_text(ms, self.unit_ms)

    def window(self, ref: WindowRef) -> str:
        """``#[4,6)`` for event offsets, then ``[start,end)`` or ``[start,end]`` for times."""
        parts = []
        if ref.start_offset is not None and ref.end_offset is not None:
            parts.append(f"#[{ref.start_offset},{ref.end_offset})")
        if ref.start_ms is not None and ref.end_ms is not None:
            bracket = "]" if self.closed_end else ")"
            parts.append(f"[{self.time(ref.start_ms)},{self.time(ref.end_ms)}{bracket}")
        return " ".join(parts)
