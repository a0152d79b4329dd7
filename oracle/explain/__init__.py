"""``explain``: a true account of a run under any profile, from the oracle itself.

``explain(scenario)`` returns an :class:`Explanation` (every input item: the clock or
watermark before and after, deliveries, drops and why, emissions, and the windows never
emitted); ``explain(scenario, "spark")`` runs it under another profile. The older form
``explain(scenario, seq)`` (an int) returns that event's :class:`EventFate`.
"""

from __future__ import annotations

from typing import overload

from windtunnel.oracle.explain.account import explain as _explain
from windtunnel.oracle.explain.explanation import Explanation
from windtunnel.oracle.explain.values import (
    ClockChange,
    Closing,
    EventFate,
    ItemAccount,
    LostWindow,
)
from windtunnel.oracle.scenario import Scenario

__all__ = [
    "ClockChange",
    "Closing",
    "EventFate",
    "Explanation",
    "ItemAccount",
    "LostWindow",
    "explain",
]


@overload
def explain(scenario: Scenario, profile: str | None = None) -> Explanation: ...


@overload
def explain(scenario: Scenario, profile: int) -> EventFate: ...


def explain(scenario: Scenario, profile: str | int | None = None) -> Explanation | EventFate:
    """The account of ``scenario`` under its own profile or ``profile``; given an int
    instead, the fate of that event seq (raises InvalidInput when there is none)."""
    if isinstance(profile, int):
        return _explain(scenario).event(profile)
    return _explain(scenario, profile)
