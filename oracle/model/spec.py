"""Window specs and queries: what to window, how to key it, what to aggregate.

All times are integer milliseconds. Fixed windows are half-open ``[start_ms, end_ms)``:
the start is included, the end is not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar, Final

from windtunnel.oracle.model.assignment import starts_containing
from windtunnel.oracle.model.conditions import Condition
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.stages import Deduplicate, Stage, Where
from windtunnel.oracle.model.timeparse import format_duration

NOW: Final[str] = "now()"
"""The ``on`` value that windows by arrival wall clock instead of a payload field."""


def check_positive(name: str, value: int, fix: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidSpec(name, value, "must be an integer number of milliseconds", fix)
    if value <= 0:
        raise InvalidSpec(name, value, "must be positive", fix)


def check_non_negative(name: str, value: int, fix: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidSpec(name, value, "must be an integer number of milliseconds", fix)
    if value < 0:
        raise InvalidSpec(name, value, "must not be negative", fix)


def _check_lateness(allowed_lateness_ms: int | None) -> None:
    if allowed_lateness_ms is not None:
        check_non_negative(
            "window.allowed_lateness", allowed_lateness_ms, "give 0s or a positive duration"
        )


def check_on(on: str) -> None:
    if not isinstance(on, str) or not on.strip() or any(not p for p in on.split(".")):
        raise InvalidSpec(
            "window.on", on, "must name an event-time field", 'use a field such as "ts" or "now()"'
        )


class WindowSpec:
    """Base of every window kind's spec (a frozen, slotted dataclass).

    Subclasses set ``kind`` (the scenario's ``window.kind``) and have an ``on`` field:
    the event-time field path, or ``now()`` for the arrival wall clock.
    """

    __slots__ = ()
    kind: ClassVar[str]
    on: str


@dataclass(frozen=True, slots=True)
class FixedWindows(WindowSpec):
    """Tumbling (``every_ms`` None or equal to ``size_ms``) or hopping windows.

    Windows are ``[start_ms, start_ms + size_ms)`` with ``start_ms`` a multiple of the
    hop (``every_ms``, default ``size_ms``), aligned to the Unix epoch.
    Raises InvalidSpec for a non-positive size or hop, a negative tolerance or idle
    timeout, and a hop larger than the size unless ``allow_gaps`` is set (profiles
    that accept gapped windows set it). ``allowed_lateness_ms`` (Flink's
    ``allowedLateness``; None: not given) keeps a fired window for late firings.
    """

    size_ms: int
    on: str = "ts"
    every_ms: int | None = None
    tolerance_ms: int = 0
    idle_timeout_ms: int | None = None
    allow_gaps: bool = False
    allowed_lateness_ms: int | None = None

    kind: ClassVar[str] = "fixed"

    def __post_init__(self) -> None:
        check_positive("window.size", self.size_ms, "give a duration greater than 0, such as 10min")
        if self.every_ms is not None:
            check_positive("window.every", self.every_ms, "give a duration greater than 0, such as 1min")
            if self.every_ms > self.size_ms and not self.allow_gaps:
                raise InvalidSpec(
                    "window.every",
                    format_duration(self.every_ms),
                    f"must not be greater than window.size={format_duration(self.size_ms)}",
                    "lower every, raise size, or omit every for tumbling windows",
                )
        check_non_negative("window.tolerance", self.tolerance_ms, "give 0s or a positive duration")
        if self.idle_timeout_ms is not None:
            check_positive("window.idle_timeout", self.idle_timeout_ms, "give a positive duration")
        _check_lateness(self.allowed_lateness_ms)
        check_on(self.on)

    @property
    def hop_ms(self) -> int:
        """Distance between window starts in milliseconds."""
        return self.size_ms if self.every_ms is None else self.every_ms

    def starts_containing(self, t_ms: int) -> range:
        """Starts of every window ``[s, s + size_ms)`` that contains ``t_ms``, ascending."""
        return starts_containing(t_ms, self.size_ms, self.hop_ms)

    def bounds_containing(self, t_ms: int) -> list[tuple[int, int]]:
        """``(start_ms, end_ms)`` of every window that contains ``t_ms``, by start."""
        size = self.size_ms
        return [(start, start + size) for start in self.starts_containing(t_ms)]


@dataclass(frozen=True, slots=True)
class CumulateWindows(WindowSpec):
    """Cumulating windows (Flink SQL's ``CUMULATE``): each epoch-aligned cycle
    ``[c, c + size_ms)`` holds the windows ``[c, c + step_ms)``, ``[c, c + 2 * step_ms)``,
    ..., ``[c, c + size_ms)`` (one start, ends a step apart; half-open). An event at ``t``
    is in every window of its cycle that ends after ``t``. Raises InvalidSpec for a
    non-positive step or size, a size that is not a whole multiple of the step, or a
    negative tolerance.
    """

    step_ms: int
    size_ms: int
    on: str = "ts"
    tolerance_ms: int = 0

    kind: ClassVar[str] = "cumulate"

    def __post_init__(self) -> None:
        check_positive("window.step", self.step_ms, "give a duration greater than 0, such as 1h")
        check_positive("window.size", self.size_ms, "give a duration greater than 0, such as 1d")
        if self.size_ms % self.step_ms:
            raise InvalidSpec(
                "window.size",
                format_duration(self.size_ms),
                f"must be a whole multiple of window.step={format_duration(self.step_ms)}",
                "make size step times the number of windows per cycle",
            )
        check_non_negative("window.tolerance", self.tolerance_ms, "give 0s or a positive duration")
        check_on(self.on)

    def bounds_containing(self, t_ms: int) -> list[tuple[int, int]]:
        """``(start_ms, end_ms)`` of every window that contains ``t_ms``, by end."""
        step = self.step_ms
        start = t_ms - t_ms % self.size_ms  # Python's % floors: negative times too
        first_end = t_ms - t_ms % step + step
        return [(start, end) for end in range(first_end, start + self.size_ms + 1, step)]


_CALL: Final = re.compile(r"^\s*([a-z_]+)\s*\(\s*([A-Za-z_][\w.]*)?\s*\)\s*$")

AGGREGATE_FUNCTIONS: Final[dict[str, bool]] = {
    # name -> takes a field argument
    "count": False,
    "sum": True,
    "min": True,
    "max": True,
    "avg": True,
    "distinct": True,
    "count_distinct": True,
    "collect": True,
    "first": True,
    "last": True,
    "window_start": False,
    "window_end": False,
}
"""Aggregation functions; ``count`` also takes an optional field (counts its non-null values)."""


@dataclass(frozen=True, slots=True)
class Aggregation:
    """One output column: ``name = function(field)``; ``field`` is a dotted path or None."""

    name: str
    function: str
    field: str | None = None

    def __post_init__(self) -> None:
        where = f"aggregate.{self.name}"
        if self.function not in AGGREGATE_FUNCTIONS:
            raise InvalidSpec(
                where,
                self.function,
                "unknown aggregation",
                f"use one of {', '.join(f + '()' for f in AGGREGATE_FUNCTIONS)}",
            )
        needs_field = AGGREGATE_FUNCTIONS[self.function]
        if needs_field and not self.field:
            raise InvalidSpec(
                where, f"{self.function}()", "needs a field", f"write {self.function}(x)"
            )
        if self.function in ("window_start", "window_end") and self.field:
            raise InvalidSpec(
                where,
                f"{self.function}({self.field})",
                "takes no field",
                f"write {self.function}()",
            )

    @classmethod
    def parse(cls, name: str, text: object) -> Aggregation:
        """Parse ``"sum(x)"``-style text; raises InvalidSpec naming ``aggregate.<name>``."""
        if not isinstance(text, str) or (match := _CALL.match(text)) is None:
            raise InvalidSpec(
                f"aggregate.{name}",
                text,
                "not an aggregation call",
                "write e.g. count() or sum(amount)",
            )
        function, argument = match.groups()
        return cls(name, function, argument)

    def __str__(self) -> str:
        return f"{self.function}({self.field or ''})"


OUTPUT_MODES: Final = ("append", "update", "complete")
"""Spark's output modes (docs/semantics.md, "Output modes under spark"): ``append`` emits each
window once (every profile's way), ``update`` the windows a micro-batch changed, ``complete``
every window after every micro-batch."""


@dataclass(frozen=True, slots=True)
class Query:
    """A windowed query: stages before the window, window kind, keys, and aggregation.

    ``aggregate`` None means pass-through: each delivered event is emitted as it
    arrives. ``aggregate_by`` splits each window's rows by those fields (TQL's
    ``summarize severity, events=count()``). ``stages`` (``Where``, ``Deduplicate``) run
    in order on each event before the window (:mod:`windtunnel.oracle.model.stages`).
    ``output_mode`` is one of :data:`OUTPUT_MODES` (only the ``spark`` profile has modes
    other than ``append``).
    """

    window: WindowSpec
    group_by: tuple[str, ...] = ()
    aggregate: tuple[Aggregation, ...] | None = None
    aggregate_by: tuple[str, ...] = field(default=())
    stages: tuple[Stage, ...] = ()
    output_mode: str = "append"

    def __post_init__(self) -> None:
        if self.output_mode not in OUTPUT_MODES:
            raise InvalidSpec("output_mode", self.output_mode, "unknown output mode",
                              f"use one of {', '.join(OUTPUT_MODES)}")
        if not isinstance(self.stages, tuple) or not all(
            isinstance(s, Where | Deduplicate) for s in self.stages
        ):
            raise InvalidSpec(
                "stages", self.stages, "must be a tuple of Where and Deduplicate stages",
                "give stages=(Where(parse_condition('x > 0', 'where')),)",
            )
        for name, paths in (("group_by", self.group_by), ("aggregate_by", self.aggregate_by)):
            if not isinstance(paths, tuple) or not all(isinstance(p, str) and p for p in paths):
                raise InvalidSpec(
                    name, paths, "must be a list of field names", "write [user, src_ip]"
                )
        if self.aggregate is not None:
            names = [a.name for a in self.aggregate]
            if not names:
                raise InvalidSpec(
                    "aggregate",
                    {},
                    "needs at least one column",
                    "add e.g. events: count(), or omit it",
                )
            clash = set(names) & set(self.aggregate_by)
            if clash:
                raise InvalidSpec(
                    "aggregate",
                    sorted(clash)[0],
                    "a column also named in aggregate_by",
                    "rename the aggregation",
                )
        elif self.aggregate_by:
            raise InvalidSpec(
                "aggregate_by",
                list(self.aggregate_by),
                "needs an aggregate block",
                "add aggregate: or drop aggregate_by",
            )


@dataclass(frozen=True, slots=True)
class SessionWindows(WindowSpec):
    """Session windows: a group's events at most ``gap_ms`` apart (rule ``session_gap``).

    ``max_duration_ms`` caps a session measured from its first event: events join only
    while ``last - first < max_duration_ms``; ``max_events`` caps its event count: the
    event that reaches the cap joins and closes it. ``tolerance_ms`` delays finalizing;
    ``idle_timeout_ms`` force-closes after that much wall time without a new event;
    ``allowed_lateness_ms`` (Flink) keeps a fired session for late firings. Reported bounds follow rule ``session_ends``. Raises InvalidSpec for a non-positive
    gap or cap, or a negative tolerance.
    """

    gap_ms: int
    on: str = "ts"
    max_duration_ms: int | None = None
    max_events: int | None = None
    tolerance_ms: int = 0
    idle_timeout_ms: int | None = None
    allowed_lateness_ms: int | None = None

    kind: ClassVar[str] = "session"

    def __post_init__(self) -> None:
        check_positive("window.gap", self.gap_ms, "give a duration greater than 0, such as 30s")
        if self.max_duration_ms is not None:
            check_positive("window.max_duration", self.max_duration_ms, "give a positive duration")
        if self.max_events is not None:
            _positive_count("window.max_events", self.max_events)
        check_non_negative("window.tolerance", self.tolerance_ms, "give 0s or a positive duration")
        if self.idle_timeout_ms is not None:
            check_positive("window.idle_timeout", self.idle_timeout_ms, "give a positive duration")
        _check_lateness(self.allowed_lateness_ms)
        check_on(self.on)


@dataclass(frozen=True, slots=True)
class CountWindows(WindowSpec):
    """Count windows over a group's event offsets (0, 1, 2, ... per group).

    Windows are half-open offset ranges ``[s, s + count)`` with ``s`` a multiple of
    ``every`` (default ``count``: tumbling). They do not read event time (``on`` is
    ``now()``). Raises InvalidSpec for a non-positive count or hop, and a hop larger
    than the count unless ``allow_gaps`` is set (rule ``every_greater_than_size``).
    """

    count: int
    every: int | None = None
    allow_gaps: bool = False
    on: str = NOW

    kind: ClassVar[str] = "count"

    def __post_init__(self) -> None:
        _positive_count("window.count", self.count)
        if self.every is not None:
            _positive_count("window.every", self.every)
            if self.every > self.count and not self.allow_gaps:
                raise InvalidSpec(
                    "window.every",
                    self.every,
                    f"must not be greater than window.count={self.count}",
                    "lower every, raise count, or omit every for tumbling windows",
                )

    @property
    def hop(self) -> int:
        """Distance between window starts, in events."""
        return self.count if self.every is None else self.every


@dataclass(frozen=True, slots=True)
class TrailingWindows(WindowSpec):
    """Trailing windows: one window per triggering event at ``t`` over ``[t - size_ms, t]``.

    Ends per rule ``trailing_ends`` (both included by default); only events earlier in
    stream order (and the trigger) are in it. With ``every_ms``, only an event at least
    ``every_ms`` after the previous trigger triggers (rule ``trailing_cadence``); with
    ``trigger``, only an event for which the condition holds. ``tolerance_ms`` is the
    reorder buffer's delay (rule ``trailing_late: clock``). Raises InvalidSpec for a
    non-positive size or hop, or a negative tolerance.
    """

    size_ms: int
    on: str = "ts"
    every_ms: int | None = None
    tolerance_ms: int = 0
    trigger: Condition | None = None

    kind: ClassVar[str] = "trailing"

    def __post_init__(self) -> None:
        check_positive("window.size", self.size_ms, "give a duration greater than 0, such as 5min")
        if self.every_ms is not None:
            check_positive("window.every", self.every_ms, "give a duration greater than 0, such as 1min")
        check_non_negative("window.tolerance", self.tolerance_ms, "give 0s or a positive duration")
        check_on(self.on)


@dataclass(frozen=True, slots=True)
class TrailingCountWindows(WindowSpec):
    """Trailing count windows: a triggering event at offset ``i`` of its group fires the
    window over the group's last ``count`` events, offsets ``[max(0, i + 1 - count), i + 1)``
    (end excluded). Without ``every`` every event triggers; with it, an event triggers once
    ``every`` events arrived since the previous trigger (or the start); with ``trigger``,
    only an event for which the condition holds. Event time is not read (``on`` is
    ``now()``). Raises InvalidSpec for a non-positive count or hop.
    """

    count: int
    every: int | None = None
    trigger: Condition | None = None
    on: str = NOW

    kind: ClassVar[str] = "trailing"

    def __post_init__(self) -> None:
        _positive_count("window.count", self.count)
        if self.every is not None:
            _positive_count("window.every", self.every)


def _positive_count(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InvalidSpec(name, value, "must be a positive whole number of events", "give e.g. 100")
