"""Parsing durations and timestamps into integer milliseconds.

Durations: ``250ms``, ``10s``, ``5min`` (also ``5m``), ``2h``, ``1d``, or a plain
number in the caller's ``time_unit``. Timestamps: a number in ``time_unit``
since the Unix epoch, an ISO-8601 string with a zone, or ``None``.
Finer input is floored to the millisecond.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any, Final

from windtunnel.oracle.model.errors import InvalidInput

UNIT_MS: Final[dict[str, int]] = {
    "ms": 1,
    "s": 1_000,
    "min": 60_000,
    "m": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
}
_DURATION = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(ms|s|min|m|h|d)\s*$")
_DURATION_FIX = "use a number with a unit such as 250ms, 10s, 5min, 2h or 1d"


def unit_ms(time_unit: str, field: str = "time_unit") -> int:
    """Milliseconds in one ``time_unit``; raises InvalidInput for an unknown unit."""
    try:
        return UNIT_MS[time_unit]
    except (KeyError, TypeError):
        raise InvalidInput(
            field, time_unit, "unknown time unit", f"use one of {', '.join(UNIT_MS)}"
        ) from None


def parse_duration_ms(value: Any, field: str, time_unit: str = "ms") -> int:
    """A duration as integer milliseconds (floored).

    Raises InvalidInput naming ``field`` when ``value`` is not a duration.
    Negative durations are returned as such; callers decide what they accept.
    """
    if isinstance(value, bool) or value is None:
        raise InvalidInput(field, value, "not a duration", _DURATION_FIX)
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidInput(field, value, "not a finite duration", _DURATION_FIX)
        return math.floor(value * unit_ms(time_unit))
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match is None:
            raise InvalidInput(field, value, "not a duration", _DURATION_FIX)
        number, unit = match.groups()
        if "." in number:
            return math.floor(float(number) * UNIT_MS[unit])
        return int(number) * UNIT_MS[unit]
    raise InvalidInput(field, value, "not a duration", _DURATION_FIX)


class NotATime(ValueError):
    """Raised by :func:`timestamp_ms` for a value that is not a timestamp."""


def timestamp_ms(value: Any, time_unit_ms: int = 1) -> int | None:
    """An event-time value as epoch milliseconds, ``None`` for null.

    Numbers count ``time_unit_ms`` milliseconds since the epoch; strings must be
    ISO-8601 with a zone. ``datetime`` objects must be zone-aware.
    Raises NotATime (with the reason as message) for anything else.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise NotATime("a boolean is not a timestamp")
    if isinstance(value, int):
        return value * time_unit_ms
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotATime("a non-finite number is not a timestamp")
        return math.floor(value * time_unit_ms)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("z", "Z"))
        except ValueError:
            raise NotATime("the string is not an ISO-8601 timestamp") from None
        return _aware_ms(parsed)
    if isinstance(value, datetime):
        return _aware_ms(value)
    raise NotATime(f"a {type(value).__name__} is not a timestamp")


def _aware_ms(moment: datetime) -> int:
    """Exact integer milliseconds of a zone-aware datetime, floored."""
    offset = moment.utcoffset()
    if offset is None:
        raise NotATime("the timestamp has no time zone (add Z or an offset such as +02:00)")
    local_us = (moment.toordinal() - _EPOCH_ORDINAL) * 86_400_000_000 + (
        (moment.hour * 3600 + moment.minute * 60 + moment.second) * 1_000_000 + moment.microsecond
    )
    offset_us = (offset.days * 86_400 + offset.seconds) * 1_000_000 + offset.microseconds
    return (local_us - offset_us) // 1000


_EPOCH_ORDINAL: Final[int] = datetime(1970, 1, 1).toordinal()


def parse_timestamp_ms(value: Any, field: str, time_unit: str = "ms") -> int:
    """A timestamp from a file or the command line; raises InvalidInput instead of NotATime."""
    try:
        result = timestamp_ms(value, unit_ms(time_unit))
    except NotATime as exc:
        raise InvalidInput(
            field,
            value,
            f"not a timestamp ({exc})",
            "use a number since the epoch or an ISO-8601 string with a zone",
        ) from None
    if result is None:
        raise InvalidInput(field, value, "a timestamp is required", "give a number or ISO string")
    return result


def format_duration(ms: int) -> str:
    """The shortest exact unit spelling of ``ms`` (``90000`` -> ``90s``)."""
    for unit in ("d", "h", "min", "s"):
        if ms and ms % UNIT_MS[unit] == 0:
            return f"{ms // UNIT_MS[unit]}{unit}"
    return f"{ms}ms"
