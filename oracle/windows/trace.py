"""Read-only observation of a run, for ``windtunnel explain``.

An operator reports, through ``ctx.trace`` when one is attached (``None`` otherwise, so
an ordinary run pays one ``None`` check per hook), which events went into which window
and when a window was closed; and it shows its event-time clock through
:meth:`Operator.clock_view <windtunnel.oracle.windows.driver.Operator.clock_view>`.
Nothing here changes what a run outputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.results import WindowRef


class Trace(Protocol):
    """What operators tell an observer. ``group`` is the contract's group value."""

    def delivered(self, seq: int, group: Any, window: WindowRef) -> None:
        """Event ``seq`` was added to ``window`` of ``group`` (operators that keep a window's
        events and shape it later, such as sessions, report this when the window closes,
        with its final bounds)."""

    def holding(self, payloads: Sequence[Mapping[str, Any]], group: Any, window: WindowRef) -> None:
        """Like :meth:`delivered` for operators that buffer payloads only: the events whose
        payload objects (by identity) are ``payloads`` went into ``window``."""

    def closed(self, group: Any, window: WindowRef, reason: str) -> None:
        """``window`` of ``group`` was closed (or flushed) for ``reason`` (``close``,
        ``idle_timeout``, ``end_of_input``, ``count``, ``timer``, ...), whether or not it
        produced rows."""


def deliver_all(trace: Trace, seqs: Iterable[int], group: Any, window: WindowRef) -> None:
    """Report every event of ``seqs`` as delivered to ``window`` of ``group``."""
    for seq in seqs:
        trace.delivered(seq, group, window)


@dataclass(frozen=True, slots=True)
class ClockView:
    """An operator's event-time clock at one moment, in milliseconds (None: not started).

    ``clock_ms`` is the value that closes windows (for most operators the largest event
    time seen; a window closes once it reaches the window's close point);
    ``watermark_ms`` is the same clock as the engine's watermark (the clock minus the
    tolerance, or the operator's own watermark). ``per_key`` says whether each group has
    its own clock; then ``keys`` holds ``(group value, clock_ms, watermark_ms)`` per key
    seen, in first-seen order, and the stream fields are None.
    """

    per_key: bool
    clock_ms: int | None = None
    watermark_ms: int | None = None
    keys: tuple[tuple[Any, int | None, int | None], ...] = ()

    def __post_init__(self) -> None:
        if not self.per_key and self.keys:
            raise InvalidSpec(
                "ClockView.keys", len(self.keys), "a stream clock has no per-key clocks",
                "give per_key=True or no keys",
            )

    def of(self, group: Any) -> tuple[int | None, int | None]:
        """(clock_ms, watermark_ms) that applies to ``group``."""
        if not self.per_key:
            return self.clock_ms, self.watermark_ms
        for value, clock_ms, watermark_ms in self.keys:
            if value == group:
                return clock_ms, watermark_ms
        return None, None


def stream_view(clock_ms: int | None, tolerance_ms: int) -> ClockView:
    """A stream clock whose watermark is the clock minus ``tolerance_ms``."""
    return ClockView(False, clock_ms, None if clock_ms is None else clock_ms - tolerance_ms)


def keyed_view(clocks: Iterable[tuple[Any, int | None]], tolerance_ms: int) -> ClockView:
    """Per-key clocks (group value, clock_ms) whose watermarks are clock - ``tolerance_ms``."""
    return ClockView(
        True,
        keys=tuple(
            (value, ms, None if ms is None else ms - tolerance_ms) for value, ms in clocks
        ),
    )
