"""The ``beam`` window spec: a windowing function, a trigger, an accumulation mode, an
allowed lateness and a timestamp combiner, as ``beam.WindowInto`` takes them
(https://beam.apache.org/documentation/programming-guide/#windowing).

Times are integer milliseconds; windows are half-open ``[start_ms, end_ms)`` and a window's
last instant (Beam's ``max_timestamp()``) is ``end_ms - 1``: Beam's time grain is the
microsecond, windtunnel's the millisecond, and Beam's own transcripts count in "integral
units of the finest granularity".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Final

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.spec import WindowSpec, check_non_negative, check_on, check_positive
from windtunnel.oracle.profiles.beam.grammar import (
    check_arguments,
    duration_arg,
    format_seconds,
    parse_call,
)
from windtunnel.oracle.profiles.beam.triggers import Default, Trigger

WINDOW_FNS: Final = ("fixed", "sliding", "sessions", "global")
ACCUMULATION_MODES: Final = ("accumulating", "discarding")
TIMESTAMP_COMBINERS: Final = ("end_of_window", "earliest", "latest")
_COMBINER_NAMES: Final = {
    "end_of_window": "end_of_window", "output_at_eow": "end_of_window",
    "earliest": "earliest", "output_at_earliest": "earliest",
    "latest": "latest", "output_at_latest": "latest",
}
WINDOW_FN_EXAMPLE: Final = "FixedWindows(60)"


@dataclass(frozen=True, slots=True)
class WindowFn:
    """A Beam windowing function: ``fixed`` (``FixedWindows(size, offset)``), ``sliding``
    (``SlidingWindows(size, period, offset)``), ``sessions`` (``Sessions(gap)``) or
    ``global`` (``GlobalWindows()``). Offsets are normalized into ``[0, size)`` (fixed) and
    ``[0, period)`` (sliding), as Beam does. Raises InvalidSpec for non-positive sizes."""

    kind: str
    size_ms: int | None = None
    period_ms: int | None = None
    offset_ms: int = 0
    gap_ms: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in WINDOW_FNS:
            raise InvalidSpec("window.window_fn", self.kind, "unknown windowing function",
                              f"use one of {', '.join(WINDOW_FNS)}")
        needs = {"fixed": ("size_ms",), "sliding": ("size_ms", "period_ms"),
                 "sessions": ("gap_ms",), "global": ()}[self.kind]
        for name in ("size_ms", "period_ms", "gap_ms"):
            value = getattr(self, name)
            label = f"window.window_fn.{name.removesuffix('_ms')}"
            if name in needs:
                if value is None:
                    raise InvalidSpec(label, None, f"is required for {self.kind} windows",
                                      f"write e.g. {WINDOW_FN_EXAMPLE}")
                check_positive(label, value, "give a positive duration, e.g. 60 (seconds)")
            elif value is not None:
                raise InvalidSpec(label, value, f"not an option of {self.kind} windows", "remove it")
        modulus = self.period_ms if self.kind == "sliding" else self.size_ms
        if modulus is not None:
            object.__setattr__(self, "offset_ms", self.offset_ms % modulus)
        elif self.offset_ms:
            raise InvalidSpec("window.window_fn.offset", self.offset_ms,
                              f"not an option of {self.kind} windows", "remove it")

    def __str__(self) -> str:
        s = format_seconds
        offset = f", offset={s(self.offset_ms)}" if self.offset_ms else ""
        if self.kind == "fixed":
            assert self.size_ms is not None
            return f"FixedWindows({s(self.size_ms)}{offset})"
        if self.kind == "sliding":
            assert self.size_ms is not None and self.period_ms is not None
            return f"SlidingWindows({s(self.size_ms)}, {s(self.period_ms)}{offset})"
        if self.kind == "sessions":
            assert self.gap_ms is not None
            return f"Sessions({s(self.gap_ms)})"
        return "GlobalWindows()"


def parse_window_fn(text: object, field: str = "window.window_fn") -> WindowFn:
    """A windowing function in Beam's Python spelling (``FixedWindows(60)``,
    ``SlidingWindows(30, 5)``, ``Sessions(gap_size=10min)``, ``GlobalWindows()``); numbers
    are seconds. Raises InvalidSpec naming ``field``."""
    call = parse_call(text, field, WINDOW_FN_EXAMPLE)
    if call.name == "FixedWindows":
        check_arguments(call, 2, ("size", "offset"), field)
        return WindowFn("fixed", size_ms=duration_arg(call, 0, "size", field),
                        offset_ms=duration_arg(call, 1, "offset", field) or 0)
    if call.name == "SlidingWindows":
        check_arguments(call, 3, ("size", "period", "offset"), field)
        return WindowFn("sliding", size_ms=duration_arg(call, 0, "size", field),
                        period_ms=duration_arg(call, 1, "period", field),
                        offset_ms=duration_arg(call, 2, "offset", field) or 0)
    if call.name == "Sessions":
        check_arguments(call, 1, ("gap_size",), field)
        return WindowFn("sessions", gap_ms=duration_arg(call, 0, "gap_size", field))
    if call.name == "GlobalWindows":
        check_arguments(call, 0, (), field)
        return WindowFn("global")
    raise InvalidSpec(field, str(call), f"unknown windowing function {call.name}",
                      "use FixedWindows, SlidingWindows, Sessions or GlobalWindows")


def accumulation_mode(text: object, field: str = "window.accumulation") -> str:
    """``accumulating`` or ``discarding`` (Beam's ``AccumulationMode.ACCUMULATING`` and
    ``DISCARDING`` spellings too)."""
    word = str(text).rpartition(".")[2].lower() if isinstance(text, str) else None
    if word not in ACCUMULATION_MODES:
        raise InvalidSpec(field, text, "unknown accumulation mode",
                          f"use one of {', '.join(ACCUMULATION_MODES)}")
    return word


def timestamp_combiner(text: object, field: str = "window.timestamp_combiner") -> str:
    """``end_of_window``, ``earliest`` or ``latest`` (Beam's ``OUTPUT_AT_EOW``,
    ``OUTPUT_AT_EARLIEST`` and ``OUTPUT_AT_LATEST`` spellings too)."""
    word = str(text).rpartition(".")[2].lower() if isinstance(text, str) else ""
    if word not in _COMBINER_NAMES:
        raise InvalidSpec(field, text, "unknown timestamp combiner",
                          f"use one of {', '.join(TIMESTAMP_COMBINERS)}")
    return _COMBINER_NAMES[word]


@dataclass(frozen=True, slots=True)
class BeamWindows(WindowSpec):
    """``beam.WindowInto(window_fn, trigger, accumulation_mode, timestamp_combiner,
    allowed_lateness)`` over event time at ``on``.

    ``accumulation`` is required unless the trigger is :class:`Default` (Beam's
    ``Windowing`` raises "accumulation_mode must be provided for non-trivial triggers"; the
    default trigger's mode is discarding). ``tolerance_ms`` is the watermark's delay behind
    the largest event time under rule ``beam_watermark: max_event_time``. Raises InvalidSpec
    for a missing accumulation mode, a negative lateness or tolerance, an unknown combiner.
    """

    window_fn: WindowFn
    trigger: Trigger = field(default_factory=Default)
    accumulation: str | None = None
    allowed_lateness_ms: int = 0
    timestamp_combiner: str = "end_of_window"
    on: str = "ts"
    tolerance_ms: int = 0

    kind: ClassVar[str] = "beam"

    def __post_init__(self) -> None:
        if self.accumulation is None:
            if not isinstance(self.trigger, Default):
                raise InvalidSpec("window.accumulation", None,
                                  f"is required with trigger {self.trigger} (Beam: "
                                  "accumulation_mode must be provided for non-trivial triggers)",
                                  "add accumulation: accumulating or discarding")
            object.__setattr__(self, "accumulation", "discarding")
        accumulation_mode(self.accumulation)
        timestamp_combiner(self.timestamp_combiner)
        check_non_negative("window.allowed_lateness", self.allowed_lateness_ms,
                           "give 0s or a positive duration")
        check_non_negative("window.tolerance", self.tolerance_ms, "give 0s or a positive duration")
        check_on(self.on)

    @property
    def size_ms(self) -> int | None:
        """The window size (fixed and sliding), for stream generators and pictures."""
        return self.window_fn.size_ms

    @property
    def gap_ms(self) -> int | None:
        """The session gap (sessions), for stream generators and pictures."""
        return self.window_fn.gap_ms

    @property
    def accumulating(self) -> bool:
        return self.accumulation == "accumulating"
