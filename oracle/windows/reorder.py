"""The per-key reorder buffer of Tenzir's session and trailing windows (docs/semantics.md S8,
T3).

A key's events wait in the buffer until its watermark (``clock - tolerance``, the clock
being the largest event time seen) reaches them, and leave in time order, ties in stream
order. An event before the watermark, or before the last event released, is late: the
events released form a sequence in time order.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping
from typing import Any

Entry = tuple[int, int, Mapping[str, Any]]
"""A buffered event: time ms, seq and payload (heap order: time, then stream order)."""


class ReorderBuffer:
    """One key's clock, buffered events and last released time (all ms; None: none yet)."""

    __slots__ = ("clock_ms", "entries", "released_ms")

    def __init__(self, clock_ms: int | None = None) -> None:
        self.clock_ms = clock_ms
        self.entries: list[Entry] = []  # a heap
        self.released_ms: int | None = None

    def watermark(self, tolerance_ms: int) -> int | None:
        """``clock - tolerance``, or None before the first event."""
        return None if self.clock_ms is None else self.clock_ms - tolerance_ms

    def behind(self, t_ms: int, tolerance_ms: int) -> tuple[str, int] | None:
        """Why an event at ``t_ms`` is late: ``("watermark", w)`` when ``t_ms < w``, else
        ``("released", r)`` when an event at ``r > t_ms`` was released; None when on time."""
        watermark = self.watermark(tolerance_ms)
        if watermark is not None and t_ms < watermark:
            return "watermark", watermark
        if self.released_ms is not None and t_ms < self.released_ms:
            return "released", self.released_ms
        return None

    def add(self, t_ms: int, seq: int, payload: Mapping[str, Any]) -> None:
        """Buffer an on-time event; the clock moves to ``t_ms`` when it is later."""
        if self.clock_ms is None or t_ms > self.clock_ms:
            self.clock_ms = t_ms
        heapq.heappush(self.entries, (t_ms, seq, payload))

    def release(self, cutoff_ms: int | None) -> Iterator[Entry]:
        """Take out the events at or before ``cutoff_ms`` (every event when None), in time
        order, ties in stream order."""
        entries = self.entries
        while entries and (cutoff_ms is None or entries[0][0] <= cutoff_ms):
            entry = heapq.heappop(entries)
            self.released_ms = entry[0]
            yield entry
