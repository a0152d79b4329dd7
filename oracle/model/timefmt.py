"""Times and windows as people read them: in the scenario's own ``time_unit``.

``12000`` with ``time_unit: s`` reads ``12s``; with ``time_unit: ms`` it stays ``12000``;
values that look like calendar dates (after 1973) read as ISO-8601 UTC. Windows are
written ``[start,end)`` when half-open and ``[start,end]`` when both ends are included
(trailing windows, and sessions reporting their first and last event times); count
windows as event offsets ``#[4,6)``.
"""

from __future__ import annotations

from datetime import UTC, datetime

from windtunnel.oracle.model.results import WindowRef
from windtunnel.oracle.model.timeparse import UNIT_MS

EPOCH_SCALE_MS = 10**11
"""Times at or above this (March 1973) are shown as ISO-8601 dates."""
BEAM_MIN_MS = -9_223_372_036_854_775
"""Beam's ``MIN_TIMESTAMP`` in ms: its watermark before anything, its global window's start."""
BEAM_MAX_MS = 9_223_372_036_854_775
"""Beam's ``MAX_TIMESTAMP`` in ms: its watermark at the end of input."""
GLOBAL_END_MS = 9_223_371_950_454_775
"""The end of Beam's global window in ms (one day before ``MAX_TIMESTAMP``)."""
ENDS_OF_TIME = {BEAM_MIN_MS: "-inf", BEAM_MAX_MS: "+inf", GLOBAL_END_MS: "+inf"}
"""Beam's ends of time, shown as such (every other time beyond the calendar as a number)."""


def time_text(ms: int | None, unit_ms: int = 1) -> str:
    """``ms`` in the unit of ``unit_ms`` (``12s``), plain for milliseconds, ISO when epoch-scale."""
    if ms is None:
        return "none"
    if ms in ENDS_OF_TIME:
        return ENDS_OF_TIME[ms]
    if abs(ms) >= EPOCH_SCALE_MS:
        return iso_text(ms)
    return duration_text(ms, unit_ms)


def iso_text(ms: int) -> str:
    """``ms`` since the epoch as ISO-8601 UTC (``1970-01-01T00:00:30Z``); plain milliseconds
    beyond the calendar (years 1..9999), which no date can show."""
    try:
        moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, ValueError, OSError):
        return str(ms)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if ms % 1000:
        text += f".{ms % 1000:03d}"
    return text + "Z"


def duration_text(ms: int, unit_ms: int = 1) -> str:
    """A duration in the unit of ``unit_ms``: ``90s``, ``1.5min``; plain for milliseconds."""
    if unit_ms == 1:
        return str(ms)
    suffix = next((name for name, size in UNIT_MS.items() if size == unit_ms and name != "m"), "ms")
    if suffix == "ms":
        return str(ms)
    if ms % unit_ms == 0:
        return f"{ms // unit_ms}{suffix}"
    whole, rest = divmod(abs(ms), unit_ms)
    digits = len(str(unit_ms)) - 1
    fraction = f"{rest * 10**digits // unit_ms:0{digits}d}".rstrip("0")
    return f"{'-' if ms < 0 else ''}{whole}.{fraction}{suffix}"


def interval_text(start_ms: int, end_ms: int, unit_ms: int = 1, *, closed_end: bool = False) -> str:
    """``[start,end)`` (half-open) or ``[start,end]`` (``closed_end``) in the scenario's unit."""
    bracket = "]" if closed_end else ")"
    return f"[{time_text(start_ms, unit_ms)},{time_text(end_ms, unit_ms)}{bracket}"


def window_text(window: WindowRef, unit_ms: int = 1, *, closed_end: bool = False) -> str:
    """A window: its times (see :func:`interval_text`) and/or its event offsets ``#[4,6)``."""
    parts = []
    if window.start_offset is not None and window.end_offset is not None:
        parts.append(f"#[{window.start_offset},{window.end_offset})")
    if window.start_ms is not None and window.end_ms is not None:
        parts.append(interval_text(window.start_ms, window.end_ms, unit_ms, closed_end=closed_end))
    return " ".join(parts)
