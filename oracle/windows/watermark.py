"""Event-time clocks: the one :class:`Clock` every window kind keeps, per key or per stream.

A clock is moved per event or per batch (rule ``clock_moves``), optionally starting at the
epoch (rule ``clock_floor``), and never moves back; :func:`inject` moves clocks for an
injected watermark. :class:`Clocks` applies those rules for the kinds whose windows change
shape (sessions, Spark's output modes); fixed windows move their clocks themselves.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from windtunnel.oracle.model.rules import Rules


class Clock:
    """An event-time clock (per key or per stream) and the windows it will close.

    ``now_ms`` is the clock that closes windows: the largest event time seen so far (None
    before the first, or a floor under rule ``clock_floor``); it never moves back.
    ``late_ms`` is the clock the late test uses: equal to ``now_ms`` under ``clock_moves:
    event``, one batch behind under ``batch``, the clock before the current batch under
    ``batch_inclusive``. ``seen_ms`` is the largest event time consumed, the current batch
    included. ``pending`` is a heap of (close point ms, start or first ms, group index,
    tiebreak, window or session).
    """

    __slots__ = ("late_ms", "now_ms", "pending", "seen_ms")

    def __init__(self, start_ms: int | None = None) -> None:
        self.now_ms: int | None = start_ms
        self.late_ms: int | None = start_ms
        self.seen_ms: int | None = start_ms
        self.pending: list[tuple[int, int, int, int, Any]] = []


def inject(
    clocks: Iterable[Clock], clock_ms: int, moves: str, dirty: dict[Clock, None]
) -> list[Clock]:
    """Move ``clocks`` to at least ``clock_ms`` for an injected watermark (docs/semantics.md,
    W1; ``clock_ms`` = watermark + tolerance). A clock already there or past it is left
    alone: watermarks never go back. Returns the clocks whose ``now_ms`` moved at once, which
    the caller closes; under ``clock_moves: batch`` (Spark) the value is the watermark of the
    next micro-batch instead: the clock is marked in ``dirty`` and closes at that batch's end
    (or the final no-data one), and the late test catches up one batch later, as for data.
    """
    moved = []
    for clock in clocks:
        if clock.seen_ms is None or clock_ms > clock.seen_ms:
            clock.seen_ms = clock_ms
        if clock.now_ms is not None and clock_ms <= clock.now_ms:
            continue
        clock.now_ms = clock_ms
        if moves == "batch":
            dirty[clock] = None
        else:
            clock.late_ms = clock_ms
            moved.append(clock)
    return moved


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

    def inject(self, clock_ms: int, key_clocks: Iterable[Clock]) -> list[Clock]:
        """An injected watermark (:func:`inject`): the stream's clock, or every key's clock
        (``key_clocks``) with keys first seen later starting at ``clock_ms``."""
        if self._stream is not None:
            return inject((self._stream,), clock_ms, self.moves, self._dirty)
        if self._floor_ms is None or clock_ms > self._floor_ms:
            self._floor_ms = clock_ms
        return inject(key_clocks, clock_ms, self.moves, self._dirty)

    def end(self) -> list[Clock]:
        """At end of input under ``clock_moves: batch``: the final no-data batch's clocks."""
        if self.moves != "batch":
            return []
        clocks = list(self._dirty)
        for clock in clocks:
            clock.now_ms = clock.seen_ms
        self._dirty.clear()
        return clocks
