"""eKuiper window specs: the five window functions, their time units, natural-time alignment
in a time zone, and the FILTER / WHERE / HAVING / OVER (WHEN) conditions that go with them.

Source: https://ekuiper.org/docs/en/latest/sqls/windows.html
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar, Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from windtunnel.oracle.model.conditions import Condition
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.spec import (
    NOW,
    WindowSpec,
    check_non_negative,
    check_on,
    check_positive,
)

EKUIPER_UNITS_MS: Final[dict[str, int]] = {
    "dd": 86_400_000, "hh": 3_600_000, "mi": 60_000, "ss": 1_000, "ms": 1,
}
"""The page's time units: DD, HH, MI, SS, MS (case-insensitive)."""

_LARGER: Final[dict[str, str]] = {"ms": "ss", "ss": "mi", "mi": "hh", "hh": "dd", "dd": "dd"}

EKUIPER_WINDOWS: Final = ("tumbling", "hopping", "sliding", "session", "count")
TIME_WINDOWS: Final = ("tumbling", "hopping", "sliding", "session")


def unit_of(text: object, where: str) -> str:
    """A time-unit word (``ss``) lower-cased; raises InvalidSpec listing the units."""
    if isinstance(text, str) and text.lower() in EKUIPER_UNITS_MS:
        return text.lower()
    raise InvalidSpec(where, text, "not an eKuiper time unit", "use DD, HH, MI, SS or MS")


def zone(name: str) -> ZoneInfo:
    """The IANA time zone ``name``; raises InvalidSpec for an unknown zone."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise InvalidSpec("window.timezone", name, "unknown time zone",
                          "use an IANA name such as UTC or Asia/Shanghai") from None


def natural_origin_ms(t_ms: int, unit: str, timezone: str) -> int:
    """Start of the next larger unit holding ``t_ms`` in local time (SS windows: the minute;
    DD windows: local midnight). Window grids start there, so a 10 s window ends at :10, :20."""
    tz = zone(timezone)
    local = datetime.fromtimestamp(t_ms / 1000, tz)
    larger = _LARGER[unit]
    if larger == "ss":
        floor = local.replace(microsecond=0)
    elif larger == "mi":
        floor = local.replace(second=0, microsecond=0)
    elif larger == "hh":
        floor = local.replace(minute=0, second=0, microsecond=0)
    else:
        floor = local.replace(hour=0, minute=0, second=0, microsecond=0)
    return round(floor.timestamp() * 1000)


@dataclass(frozen=True, slots=True)
class EkuiperWindows(WindowSpec):
    """One eKuiper window function with its clauses.

    ``tumbling``: ``[s, s + size_ms)``; ``hopping``: the same every ``hop_ms``; ``sliding``:
    one window ``[t - size_ms, t + delay_ms]`` (both ends included) per triggering event;
    ``session``: events at most ``timeout_ms`` apart, cut at ticks every ``max_duration_ms``;
    ``count``: the latest ``count`` events every ``interval`` events. ``on`` is ``now()``
    (processing time, the default) or the timestamp field (event time, with ``lateness_ms``).
    ``filter`` runs before windowing, ``where`` after (rule ``where_placement``), ``having`` on
    output rows, ``when`` decides which events trigger a sliding window. Raises InvalidSpec.
    """

    window: str
    unit: str = "ss"
    size_ms: int | None = None
    hop_ms: int | None = None
    delay_ms: int = 0
    timeout_ms: int | None = None
    max_duration_ms: int | None = None
    count: int | None = None
    interval: int | None = None
    on: str = NOW
    lateness_ms: int = 0
    timezone: str = "UTC"
    filter: Condition | None = None
    where: Condition | None = None
    having: Condition | None = None
    when: Condition | None = None

    kind: ClassVar[str] = "ekuiper"

    def __post_init__(self) -> None:
        if self.window not in EKUIPER_WINDOWS:
            raise InvalidSpec("window.window", self.window, "unknown eKuiper window",
                              f"use one of {', '.join(EKUIPER_WINDOWS)}")
        unit_of(self.unit, "window.unit")
        zone(self.timezone)
        check_on(self.on)
        check_non_negative("window.lateness", self.lateness_ms, "give 0s or a positive duration")
        check_non_negative("window.delay", self.delay_ms, "give 0 or a positive delay")
        if self.window in ("tumbling", "hopping", "sliding"):
            if self.size_ms is None:
                raise InvalidSpec("window.size", None, f"is required for {self.window} windows",
                                  "write e.g. TUMBLINGWINDOW(ss, 10)")
            check_positive("window.size", self.size_ms, "give a positive length")
        if self.window == "hopping":
            if self.hop_ms is None:
                raise InvalidSpec("window.hop", None, "is required for hopping windows",
                                  "write HOPPINGWINDOW(ss, 10, 5)")
            check_positive("window.hop", self.hop_ms, "give a positive hop")
        if self.window == "session":
            if self.timeout_ms is None or self.max_duration_ms is None:
                raise InvalidSpec("window.timeout", self.timeout_ms,
                                  "session windows need a timeout and a maximum duration",
                                  "write SESSIONWINDOW(ss, 10, 2): max duration 10, timeout 2")
            check_positive("window.timeout", self.timeout_ms, "give a positive timeout")
            check_positive("window.max_duration", self.max_duration_ms, "give a positive duration")
        if self.window == "count":
            if self.count is None or isinstance(self.count, bool) or self.count < 1:
                raise InvalidSpec("window.count", self.count, "must be a whole number >= 1",
                                  "write COUNTWINDOW(5)")
            if self.interval is not None and (isinstance(self.interval, bool)
                                              or self.interval < 1):
                raise InvalidSpec("window.interval", self.interval, "must be >= 1",
                                  "write COUNTWINDOW(5, 2)")
            if self.interval is not None and self.interval > self.count:
                raise InvalidSpec(
                    "window.interval", self.interval,
                    f"larger than the count {self.count} (\"should not be larger than the value "
                    "of the 1st parameter\")", "lower the interval",
                )
        if self.when is not None and self.window != "sliding":
            raise InvalidSpec("window.when", str(self.when), "OVER (WHEN ...) is for sliding "
                              "windows only", "remove it or use SLIDINGWINDOW")

    @property
    def event_time(self) -> bool:
        """True when windows use a timestamp field rather than arrival time."""
        return self.on != NOW

    @property
    def step_ms(self) -> int:
        """Distance between window starts of tumbling and hopping windows."""
        assert self.size_ms is not None
        return self.hop_ms if self.hop_ms is not None else self.size_ms
