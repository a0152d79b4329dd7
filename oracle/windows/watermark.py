"""Event-time clocks for window kinds whose windows change shape (sessions).

One :class:`Clock` per key or per stream (rule ``clock_scope``), moved per event or
per batch (rule ``clock_moves``), optionally starting at the epoch (rule
``clock_floor``). A clock never moves back. Its ``pending`` heap holds the windows
waiting for it: (close point ms, first ms, group index, tiebreak, window).
"""

from __future__ import annotations

from typing import Any

from windtunnel.oracle.model.rules import Rules


class Clock:
    """``now_ms`` closes windows, ``late_ms`` is what the late test compares against,
    ``seen_ms`` the largest event time consumed (all None before the first event unless
    the clock has a floor). Under ``clock_moves: event`` the three are equal."""

    __slots__ = ("late_ms", "now_ms", "pending", "seen_ms")

    def __init__(self, start_ms: int | None = None) -> None:
        self.now_ms: int | None = start_ms
        self.late_ms: int | None = start_ms
        self.seen_ms: int | None = start_ms
        self.pending: list[tuple[int, int, int, int, Any]] = []


class Clocks:
    """Makes clocks and moves them according to the rules.

    ``observe`` returns True when the clock's ``now_ms`` moved at once (per-event
    clocks): the caller then closes what is due. Batch clocks move in ``batch_end``
    (which returns the clocks to check) and, under ``clock_moves: batch``, once more in
    ``end`` (Spark's final no-data micro-batch).
    """

    __slots__ = ("_dirty", "_floor_ms", "_stream", "moves")

    def __init__(self, rules: Rules, tolerance_ms: int) -> None:
        self.moves = rules.clock_moves
        # rule clock_floor: Spark's watermark (clock - tolerance) starts at 0
        self._floor_ms = tolerance_ms if rules.clock_floor == "epoch" else None
        self._stream = Clock(self._floor_ms) if rules.clock_scope == "stream" else None
        self._dirty: dict[Clock, None] = {}

    def new(self) -> Clock:
        """The clock for a new key: the stream's clock, or a fresh one per key."""
        return self._stream if self._stream is not None else Clock(self._floor_ms)

    def observe(self, clock: Clock, t_ms: int) -> bool:
        if clock.seen_ms is not None and t_ms <= clock.seen_ms:
            return False
        clock.seen_ms = t_ms
        if self.moves == "event":
            clock.now_ms = clock.late_ms = t_ms
            return True
        self._dirty[clock] = None
        return False

    def batch_end(self) -> list[Clock]:
        """Move batch clocks at the end of a batch; the clocks whose ``now_ms`` to check."""
        if self.moves == "event" or not self._dirty:
            return []
        clocks = list(self._dirty)
        if self.moves == "batch_inclusive":
            for clock in clocks:
                clock.now_ms = clock.late_ms = clock.seen_ms
            self._dirty.clear()
            return clocks
        # batch (Spark): the caller closes with now_ms (the previous batches) first
        return clocks

    def after_batch_close(self, clocks: list[Clock]) -> None:
        """Under ``clock_moves: batch``: after closing, both clocks move one batch on."""
        if self.moves != "batch":
            return
        for clock in clocks:
            clock.late_ms = clock.now_ms
            clock.now_ms = clock.seen_ms
            if clock.late_ms == clock.now_ms:
                self._dirty.pop(clock, None)

    def end(self) -> list[Clock]:
        """At end of input under ``clock_moves: batch``: the final no-data batch's clocks."""
        if self.moves != "batch":
            return []
        clocks = list(self._dirty)
        for clock in clocks:
            clock.now_ms = clock.seen_ms
        self._dirty.clear()
        return clocks
