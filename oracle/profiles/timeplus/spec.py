"""Timeplus window specs and emit policies (https://docs.timeplus.com/tumble-aggregation).

``tumble(stream, ts, size)``, ``hop(stream, ts, hop, size)`` and ``session(stream, ts,
timeout[, max_size])``; windows are half-open ``[window_start, window_end)``. Week windows
start on Monday; other sizes are aligned to the Unix epoch. The generic ``fixed`` and
``session`` kinds run under the timeplus profile as the specs :func:`timeplus_from_fixed`
and :func:`timeplus_from_session` give.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar, Final

from windtunnel.oracle.model.assignment import starts_containing
from windtunnel.oracle.model.conditions import Condition
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.spec import (
    FixedWindows,
    SessionWindows,
    WindowSpec,
    check_non_negative,
    check_on,
    check_positive,
)
from windtunnel.oracle.model.timeparse import format_duration

WEEK_MS: Final = 7 * 86_400_000
MONDAY_OFFSET_MS: Final = 4 * 86_400_000
"""1970-01-01 was a Thursday: Monday-aligned weeks start 4 days after the epoch modulo 7 days."""

TIMEPLUS_UNITS_MS: Final[dict[str, int]] = {
    "ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": WEEK_MS,
}
_INTERVAL: Final = re.compile(r"^\s*(\d+)\s*(ms|s|m|h|d|w)\s*$", re.IGNORECASE)


def interval_ms(text: str, field_name: str) -> int:
    """A Timeplus interval (``5s``, ``1m``, ``2h``, ``1d``, ``1w``, ``250ms``) in milliseconds.
    Raises InvalidSpec naming ``field_name``."""
    match = _INTERVAL.match(text)
    if match is None:
        raise InvalidSpec(
            field_name, text, "not a Timeplus interval", "write e.g. 5s, 1m, 2h, 1d or 1w"
        )
    return int(match.group(1)) * TIMEPLUS_UNITS_MS[match.group(2).lower()]


EMIT_MODES: Final = ("close", "update")


@dataclass(frozen=True, slots=True)
class EmitPolicy:
    """An ``EMIT`` clause.

    ``mode`` ``close``: AFTER WINDOW CLOSE [WITH DELAY ``delay_ms``], or TIMEOUT
    ``timeout_ms``. ``mode`` ``update``: ON UPDATE [WITH BATCH ``batch_ms`` | WITH DELAY
    ``delay_ms``]. Raises InvalidSpec for non-positive durations or options of the other mode.
    """

    mode: str = "close"
    delay_ms: int = 0
    timeout_ms: int | None = None
    batch_ms: int | None = None

    def __post_init__(self) -> None:
        if self.mode not in EMIT_MODES:
            raise InvalidSpec("emit", self.mode, "unknown emit mode", "use close or update")
        check_non_negative("emit.delay", self.delay_ms, "give 0s or a positive delay")
        if self.timeout_ms is not None:
            check_positive("emit.timeout", self.timeout_ms, "give a positive timeout such as 3s")
            if self.mode != "close":
                raise InvalidSpec("emit.timeout", self.timeout_ms, "only with AFTER WINDOW CLOSE",
                                  "write EMIT TIMEOUT 3s")
        if self.batch_ms is not None:
            check_positive("emit.batch", self.batch_ms, "give a positive interval such as 1s")
            if self.mode != "update":
                raise InvalidSpec("emit.batch", self.batch_ms, "only with ON UPDATE",
                                  "write EMIT ON UPDATE WITH BATCH 1s")

    def __str__(self) -> str:
        if self.mode == "update":
            text = "EMIT ON UPDATE"
            if self.batch_ms is not None:
                return f"{text} WITH BATCH {format_duration(self.batch_ms)}"
        elif self.timeout_ms is not None:
            text = f"EMIT TIMEOUT {format_duration(self.timeout_ms)}"
        else:
            text = "EMIT AFTER WINDOW CLOSE"
        return f"{text} WITH DELAY {format_duration(self.delay_ms)}" if self.delay_ms else text


_EMIT: Final = re.compile(
    r"^\s*(?:EMIT\s+)?(?:"
    r"(?P<close>AFTER\s+WINDOW\s+CLOSE)(?:\s+WITH\s+DELAY\s+(?P<close_delay>[^\s;]+))?"
    r"|TIMEOUT\s+(?P<timeout>[^\s;]+)"
    r"|(?P<update>ON\s+UPDATE)"
    r"(?:\s+WITH\s+(?:BATCH\s+(?P<batch>[^\s;]+)|DELAY\s+(?P<update_delay>[^\s;]+)))?"
    r")\s*;?\s*$",
    re.IGNORECASE,
)


def parse_emit(text: object, field_name: str = "window.emit") -> EmitPolicy:
    """An EMIT clause (the leading ``EMIT`` optional); raises InvalidSpec listing the policies."""
    match = _EMIT.match(text) if isinstance(text, str) else None
    if match is None:
        raise InvalidSpec(
            field_name, text, "not a Timeplus emit policy",
            "use AFTER WINDOW CLOSE [WITH DELAY 2s], TIMEOUT 3s, or ON UPDATE "
            "[WITH BATCH 1s | WITH DELAY 2s]",
        )
    groups = match.groupdict()
    if groups["update"]:
        return EmitPolicy(
            "update",
            delay_ms=interval_ms(groups["update_delay"], field_name) if groups["update_delay"] else 0,
            batch_ms=interval_ms(groups["batch"], field_name) if groups["batch"] else None,
        )
    if groups["timeout"]:
        return EmitPolicy("close", timeout_ms=interval_ms(groups["timeout"], field_name))
    delay = groups["close_delay"]
    return EmitPolicy("close", delay_ms=interval_ms(delay, field_name) if delay else 0)


TIMEPLUS_WINDOWS: Final = ("tumble", "hop", "session")


@dataclass(frozen=True, slots=True)
class TimeplusWindows(WindowSpec):
    """A Timeplus window function with its emit policy.

    ``tumble``: ``[s, s + size_ms)``; ``hop``: the same with ``s`` a multiple of ``hop_ms``
    (a hop larger than the size is rejected); ``session``: events less than ``size_ms`` (the
    timeout) apart (rule ``session_gap``), capped at ``max_size_ms`` from its start. Week sizes
    align to Monday. ``where``
    filters events before the window (drop reason ``filtered``), ``partition_by`` gives each
    value of those fields its own watermark (PARTITION BY), ``emit_version`` names the column of
    ``emit_version()``. Raises InvalidSpec for bad sizes.
    """

    window: str
    size_ms: int
    on: str = "_tp_time"
    hop_ms: int | None = None
    max_size_ms: int | None = None
    emit: EmitPolicy = field(default_factory=EmitPolicy)
    where: Condition | None = None
    partition_by: tuple[str, ...] = ()
    emit_version: str | None = None

    kind: ClassVar[str] = "timeplus"

    def __post_init__(self) -> None:
        if self.window not in TIMEPLUS_WINDOWS:
            raise InvalidSpec("window.window", self.window, "unknown Timeplus window",
                              f"use one of {', '.join(TIMEPLUS_WINDOWS)}")
        check_positive("window.size", self.size_ms, "give an interval such as 5s")
        if self.window == "hop":
            if self.hop_ms is None:
                raise InvalidSpec("window.hop", None, "is required for hop windows",
                                  "write hop(stream, ts, 1s, 5s)")
            check_positive("window.hop", self.hop_ms, "give an interval such as 1s")
            if self.hop_ms > self.size_ms:
                raise InvalidSpec(
                    "window.hop", format_duration(self.hop_ms),
                    f"larger than the window size {format_duration(self.size_ms)}",
                    "hop(stream, ts, hop, size) takes the hop first: make hop <= size",
                )
        elif self.hop_ms is not None:
            raise InvalidSpec("window.hop", self.hop_ms, f"not an option of {self.window}",
                              "remove it")
        if self.max_size_ms is not None:
            if self.window != "session":
                raise InvalidSpec("window.max_size", self.max_size_ms, "only for session windows",
                                  "remove it")
            check_positive("window.max_size", self.max_size_ms, "give an interval such as 1m")
        check_on(self.on)

    @property
    def step_ms(self) -> int:
        """Distance between window starts (tumble and hop)."""
        return self.size_ms if self.hop_ms is None else self.hop_ms

    @property
    def offset_ms(self) -> int:
        """Where the grid starts: Monday for week multiples, the epoch otherwise."""
        return MONDAY_OFFSET_MS if self.step_ms % WEEK_MS == 0 else 0

    def starts_containing(self, t_ms: int) -> range:
        """Starts of every tumble/hop window ``[s, s + size_ms)`` holding ``t_ms``, ascending."""
        return starts_containing(t_ms, self.size_ms, self.step_ms, offset=self.offset_ms)


def timeplus_from_fixed(spec: FixedWindows) -> TimeplusWindows:
    """The generic ``fixed`` kind under the timeplus profile: tumble or hop, tolerance as
    ``WITH DELAY``, idle_timeout as ``EMIT TIMEOUT``."""
    emit = EmitPolicy("close", delay_ms=spec.tolerance_ms, timeout_ms=spec.idle_timeout_ms)
    if spec.every_ms is None or spec.every_ms == spec.size_ms:
        return TimeplusWindows("tumble", spec.size_ms, on=spec.on, emit=emit)
    return TimeplusWindows("hop", spec.size_ms, on=spec.on, hop_ms=spec.every_ms, emit=emit)


def timeplus_from_session(spec: SessionWindows) -> TimeplusWindows:
    """The generic ``session`` kind under the timeplus profile: ``session(s, ts, gap,
    max_duration)``, tolerance as ``WITH DELAY``, idle_timeout as ``EMIT TIMEOUT``. Raises
    InvalidSpec for ``max_events`` (Timeplus sessions have no event cap)."""
    if spec.max_events is not None:
        raise InvalidSpec("window.max_events", spec.max_events,
                          "Timeplus sessions have no event cap", "remove max_events under timeplus")
    emit = EmitPolicy("close", delay_ms=spec.tolerance_ms, timeout_ms=spec.idle_timeout_ms)
    return TimeplusWindows("session", spec.gap_ms, on=spec.on, max_size_ms=spec.max_duration_ms,
                           emit=emit)
