"""Stable ``idle_timeout`` scenarios for a real engine that runs in wall time.

The tenzir target paces ``idle_timeout`` scenarios through ``delay`` (each event released
at its arrival wall time), so a window is force-closed by the engine's own timer. Whether
a timer fires before an event that arrives close to ``last delivery + idle_timeout`` is
a race, so only scenarios with no such near miss are stable. :func:`paced_variant`
rewrites a generated scenario's arrival times: every gap between consecutive arrivals
becomes ``short`` (when the original gap was shorter than the idle timeout) or ``long``
(``idle_timeout + long_extra_ms``), and :func:`stable` keeps it only when no two
arrivals (nor an arrival and the end) lie within ``margin_ms`` of the idle timeout. Every
scenario ends with an idle period, so its windows are force-closed before the shared run
ends. Tenzir's idle timer fires late by up to a few hundred ms, never early
(docs/engines.md), hence the long ``long_extra_ms``; short gaps need only the margin.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item
from windtunnel.oracle.scenario import Scenario


@dataclass(frozen=True, slots=True)
class Pacing:
    """Gaps in wall ms: ``short_ms`` between close arrivals, ``idle_ms + long_extra_ms``
    across an idle period; ``margin_ms`` the distance from ``idle_ms`` a stable scenario keeps."""

    idle_ms: int
    short_ms: int = 20
    long_extra_ms: int = 700
    margin_ms: int = 100

    def __post_init__(self) -> None:
        if not 0 < self.short_ms < self.margin_ms < self.long_extra_ms:
            raise ValueError(
                f"Pacing: need 0 < short_ms={self.short_ms} < margin_ms={self.margin_ms} < "
                f"long_extra_ms={self.long_extra_ms}; widen the gaps"
            )


def paced_variant(scenario: Scenario, pacing: Pacing) -> Scenario | None:
    """``scenario`` with its events one by one at rewritten arrival times and an idle
    period at the end when the original ended with one; None when not :func:`stable`."""
    idle = getattr(scenario.query.window, "idle_timeout_ms", None)
    if idle is None:
        return None
    wall = 0
    last_original: int | None = None
    items: list[Item] = []
    original = 0
    for item in scenario.items:
        if isinstance(item, End):
            break
        if isinstance(item, Advance):
            original = max(original, item.to_ms)
            continue
        for event in item.events if isinstance(item, Batch) else (item,):
            if not isinstance(event, Event):
                continue
            if event.at_ms is not None:
                original = max(original, event.at_ms)
            if last_original is not None:
                long = original - last_original >= idle
                wall += pacing.idle_ms + pacing.long_extra_ms if long else pacing.short_ms
            last_original = original
            items.append(replace(event, at_ms=wall))
    if not items:
        return None
    # an idle period at the end: every window is force-closed before the run ends (the
    # scenarios of one run share its end, which comes when the last of them is done)
    wall += pacing.idle_ms + pacing.long_extra_ms
    items.append(Advance(wall))
    window = replace(scenario.query.window, idle_timeout_ms=pacing.idle_ms)  # type: ignore[type-var]
    paced = replace(scenario, items=tuple(items), query=replace(scenario.query, window=window))
    return paced if stable(paced, pacing) else None


def stable(scenario: Scenario, pacing: Pacing) -> bool:
    """No two arrival times (the end included) are within ``margin_ms`` of ``idle_ms``."""
    instants = [i.at_ms if isinstance(i, Event) else i.to_ms for i in scenario.items
                if isinstance(i, Event | Advance)]
    times = [t for t in instants if t is not None]
    return all(
        abs((later - earlier) - pacing.idle_ms) >= pacing.margin_ms
        for index, earlier in enumerate(times) for later in times[index + 1:]
    )
