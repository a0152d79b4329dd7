"""Scenarios one after another in one streaming query: where each goes in time and in
micro-batches (the reasoning is in :mod:`windtunnel.spark_impl.harness.user_job`'s docstring).

Scenario ``k``'s event times are shifted by ``offset_ms`` (a multiple of
:func:`shift_unit_ms`, at least :func:`separation_ms` past the previous scenario); its
micro-batches follow the previous scenario's, and its first is that scenario's no-data
micro-batch; one empty micro-batch ends the query (:func:`shifted_batches`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from windtunnel.oracle.model.spec import FixedWindows, Query, SessionWindows
from windtunnel.spark_impl.harness.stock_replay import StockPlan
from windtunnel.spark_impl.schema import to_json_text

DAY_MS = 86_400_000
MAX_TIMESTAMP_MS = 253_402_300_799_999
"""9999-12-31T23:59:59.999Z, Spark's largest timestamp."""
MAX_PER_QUERY = 200
"""Scenarios in one query at most."""


@dataclass(frozen=True, slots=True)
class ShiftedPlan:
    """One scenario's part of a shared query: its micro-batches (``plan``), the shift of
    its event times, its first micro-batch id, and the stretch of (shifted) time its
    windows lie in, ``[low_ms, high_ms)``."""

    plan: StockPlan
    offset_ms: int
    first_batch: int
    low_ms: int
    high_ms: int

    @property
    def last_batch(self) -> int:
        """Id of its no-data micro-batch (the next scenario's first, or the query's last,
        empty one)."""
        return self.first_batch + len(self.plan.feed.batches)


def _event_time(row: tuple[Any, ...]) -> int | None:
    """The event time (ms) of a plan row: its payload is ``{"t": ms or null, "p": event}``."""
    time: int | None = json.loads(str(row[5]))["t"]
    return time


def _times(plan: StockPlan) -> list[int]:
    times = (_event_time(r) for b in plan.feed.batches for r in b)
    return [t for t in times if t is not None]


def shift_unit_ms(query: Query) -> int:
    """Offsets are multiples of this: a day and the spec's hop (windows start at multiples
    of the hop), or the hop alone when their least common multiple passes a thousand days."""
    window = query.window
    if not isinstance(window, FixedWindows):
        return DAY_MS
    unit = math.lcm(DAY_MS, window.hop_ms)
    return unit if unit <= 1000 * DAY_MS else window.hop_ms


def separation_ms(query: Query) -> int:
    """Time left free between two scenarios' events: more than any window of a day."""
    window = query.window
    longest = window.size_ms if isinstance(window, FixedWindows) else (
        window.gap_ms if isinstance(window, SessionWindows) else 0)
    tolerance = getattr(window, "tolerance_ms", 0)
    return 2 * (DAY_MS + longest + int(tolerance))


def shifted_plans(plans: Sequence[StockPlan], query: Query) -> list[list[ShiftedPlan]]:
    """Queries of scenarios placed one after another in time (see the module docstring):
    each a list of ShiftedPlan. A session scenario with an event time before the epoch, or one
    that would pass Spark's largest timestamp, starts a new query."""
    unit, gap = shift_unit_ms(query), separation_ms(query)
    queries: list[list[ShiftedPlan]] = []
    high = 0
    batch = 0
    for plan in plans:
        times = _times(plan) or [0]
        low_t, high_t = min(times), max(times)
        offset = 0
        floor_matters = low_t < 0 and not isinstance(query.window, FixedWindows)
        if queries and not floor_matters and len(queries[-1]) < MAX_PER_QUERY:
            offset = -(-(high + gap - low_t) // unit) * unit
            if offset + high_t + gap > MAX_TIMESTAMP_MS:
                offset = 0
        if offset == 0:
            queries.append([])
            batch = 0
        lo = offset + low_t - gap // 2
        hi = offset + high_t + gap // 2
        queries[-1].append(ShiftedPlan(plan, offset, batch, lo, hi))
        batch += len(plan.feed.batches)
        high = offset + high_t
    return queries


def shifted_batches(plans: Sequence[ShiftedPlan]) -> list[list[tuple[Any, ...]]]:
    """The query's micro-batches: each scenario's (times shifted), then an empty one."""
    out: list[list[tuple[Any, ...]]] = []
    for shifted in plans:
        for rows in shifted.plan.feed.batches:
            moved = []
            for row in rows:
                body = json.loads(str(row[5]))
                if body["t"] is not None:
                    body["t"] += shifted.offset_ms
                moved.append((*row[:5], to_json_text(body)))
            out.append(moved)
    out.append([])
    return out
