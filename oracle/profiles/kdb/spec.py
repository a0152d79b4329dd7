"""kdb Insights window specs: ``.qsp.window.tumbling`` and ``.qsp.window.sliding``
(:class:`KdbTimeWindows`, run by :mod:`.time_windows`), ``.qsp.window.count``,
``.qsp.window.global`` and ``.qsp.window.timer`` (run by :mod:`.count_windows`).

Source: https://code.kx.com/insights/1.11/api/stream-processor/q/windows.html; every rule is
cited in docs/semantics.md (K1-K14). Times are epoch milliseconds; windows are half-open.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from windtunnel.oracle.model.assignment import starts_containing
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.spec import (
    NOW,
    FixedWindows,
    WindowSpec,
    check_on,
    check_positive,
)
from windtunnel.oracle.model.timeparse import format_duration

Payload = Mapping[str, Any]
Trigger = Callable[[Sequence[Any], int, Sequence[Payload], Any], tuple[Sequence[int] | None, Any]]
"""``trigger(buffer, offset, data, state) -> (indices or None, new state)``: the page's
``{[id; buffer; offset; md; data]}`` with ``.qsp.get``/``.qsp.set`` as the state argument and
result. ``buffer`` already ends with ``data``; ``offset`` is where ``data`` starts in it (in
records). With ``mixed_schemas`` ``buffer`` is a tuple of batches (tuples of records); the
returned indices still count records of the flattened buffer, and so does ``offset`` unless
``mixed_offset="batches"`` (then ``buffer[offset]`` is the current batch)."""

MIXED_OFFSETS = ("records", "batches")
"""What ``offset`` counts with ``mixed_schemas`` (the page does not say; docs/semantics.md K12)."""


def _flag(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise InvalidSpec(name, value, "must be a boolean", "give True or False")


def _count(name: str, value: Any, fix: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidSpec(name, value, "must be an integer >= 1", fix)


@dataclass(frozen=True, slots=True)
class KdbCountWindows(WindowSpec):
    """``.qsp.window.count[size; frequency]``: windows of exactly ``size`` records starting every
    ``frequency`` records (default ``size``). Raises InvalidSpec for counts below 1."""

    size: int
    frequency: int | None = None
    on: str = NOW
    accept_dictionaries: bool = True

    kind: ClassVar[str] = "kdb_count"

    def __post_init__(self) -> None:
        _count("window.size", self.size, "give 10")
        if self.frequency is not None:
            _count("window.frequency", self.frequency, "give 5, or omit it for size")
        _flag("window.accept_dictionaries", self.accept_dictionaries)


@dataclass(frozen=True, slots=True)
class KdbGlobalWindows(WindowSpec):
    """``.qsp.window.global[trigger]`` with ``state`` as the trigger's initial state.

    ``name`` describes the trigger in messages (built-in triggers in :mod:`.count_windows`:
    ``split_on_value``, ``high_water_mark``). ``mixed_schemas``: the trigger gets the buffer as
    a tuple of the buffered batches (see :data:`Trigger`); ``mixed_offset`` (one of
    :data:`MIXED_OFFSETS`) says what ``offset`` counts then: records of the flattened buffer (default) or batches (the
    built-in triggers need records). ``accept_dictionaries``: representation only, no effect.
    Raises InvalidSpec for a trigger that is not callable, a non-boolean flag, an unknown
    ``mixed_offset``, or ``mixed_offset="batches"`` without ``mixed_schemas``.
    """

    trigger: Trigger = field(compare=False)
    state: Any = None
    name: str = "trigger"
    on: str = NOW
    mixed_schemas: bool = False
    accept_dictionaries: bool = True
    mixed_offset: str = "records"

    kind: ClassVar[str] = "kdb_global"

    def __post_init__(self) -> None:
        if not callable(self.trigger):
            raise InvalidSpec(
                "window.trigger", self.trigger, "must be callable", "pass a function or built-in"
            )
        _flag("window.mixed_schemas", self.mixed_schemas)
        _flag("window.accept_dictionaries", self.accept_dictionaries)
        if self.mixed_offset not in MIXED_OFFSETS:
            raise InvalidSpec(
                "window.mixed_offset", self.mixed_offset, "is not known", "give records or batches"
            )
        if self.mixed_offset == "batches" and not self.mixed_schemas:
            raise InvalidSpec(
                "window.mixed_offset",
                self.mixed_offset,
                "counts batches only when the buffer is a list of batches",
                "set mixed_schemas=True, or keep mixed_offset='records'",
            )


@dataclass(frozen=True, slots=True)
class KdbTimerWindows(WindowSpec):
    """``.qsp.window.timer[period]``: the buffer is emitted every ``period_ms`` of wall time."""

    period_ms: int
    count_trigger: int | None = None
    skip_empty_windows: bool = False
    on: str = NOW
    accept_dictionaries: bool = True

    kind: ClassVar[str] = "kdb_timer"

    def __post_init__(self) -> None:
        check_positive("window.period", self.period_ms, "give a duration such as 5s")
        if self.count_trigger is not None:
            _count("window.count_trigger", self.count_trigger, "give 10000")
        _flag("window.accept_dictionaries", self.accept_dictionaries)


@dataclass(frozen=True, slots=True)
class KdbTimeWindows(WindowSpec):
    """``.qsp.window.sliding[period; duration; timeColumn]`` (tumbling: ``duration_ms`` None).

    Options as on the page: ``lateness_ms``, ``passthrough``, ``sort``, ``count_trigger``
    (records per key), ``skip_empty_windows``, ``time_assigner`` (``payload -> timestamp``; when
    given, ``on`` is not read) and ``accept_dictionaries`` (representation only: no effect).
    Raises InvalidSpec for a period longer than the duration ("Hopping windows are currently not
    supported"), non-positive sizes, a negative lateness, a count trigger below 1, or a
    ``time_assigner`` that is not callable or comes with ``on: now()``.
    """

    period_ms: int
    duration_ms: int | None = None
    on: str = "time"
    lateness_ms: int = 0
    passthrough: bool = False
    sort: bool = False
    count_trigger: int | None = None
    skip_empty_windows: bool = False
    time_assigner: Callable[[Mapping[str, Any]], Any] | None = None
    accept_dictionaries: bool = True

    kind: ClassVar[str] = "kdb_sliding"

    def __post_init__(self) -> None:
        check_positive("window.period", self.period_ms, "give a duration such as 10s")
        if self.duration_ms is not None:
            check_positive("window.duration", self.duration_ms, "give a duration such as 10s")
            if self.period_ms > self.duration_ms:
                raise InvalidSpec(
                    "window.period",
                    format_duration(self.period_ms),
                    f"longer than window.duration={format_duration(self.duration_ms)}: "
                    "hopping windows are currently not supported by kdb Insights",
                    "make period <= duration",
                )
        if isinstance(self.lateness_ms, bool) or not isinstance(self.lateness_ms, int):
            raise InvalidSpec("window.lateness", self.lateness_ms, "must be a duration", "give 2s")
        if self.lateness_ms < 0:
            raise InvalidSpec("window.lateness", self.lateness_ms, "must not be negative", "give 0s")
        if self.count_trigger is not None and (
            isinstance(self.count_trigger, bool)
            or not isinstance(self.count_trigger, int)
            or self.count_trigger < 1
        ):
            raise InvalidSpec(
                "window.count_trigger", self.count_trigger, "must be an integer >= 1", "give 10000"
            )
        check_on(self.on)
        if self.time_assigner is not None:
            if not callable(self.time_assigner):
                raise InvalidSpec("window.time_assigner", self.time_assigner, "must be callable",
                                  "pass a function of the record returning its timestamp")
            if self.on == NOW:
                raise InvalidSpec("window.on", self.on, "conflicts with window.time_assigner "
                                  "(event time from the assigner)", "remove one of them")
        if not isinstance(self.accept_dictionaries, bool):
            raise InvalidSpec("window.accept_dictionaries", self.accept_dictionaries,
                              "must be a boolean", "give True or False")

    @property
    def size_ms(self) -> int:
        """Window length in milliseconds (the duration; the period for tumbling windows)."""
        return self.period_ms if self.duration_ms is None else self.duration_ms

    def first_start(self, t_ms: int) -> int:
        """Start of the earliest window ``[s, s + size_ms)`` containing ``t_ms``."""
        return starts_containing(t_ms, self.size_ms, self.period_ms).start


def kdb_from_fixed(spec: FixedWindows) -> KdbTimeWindows:
    """The generic ``fixed`` kind under the kdb profile: period = every, duration = size,
    lateness = tolerance. Raises InvalidSpec for ``idle_timeout`` (kdb's idle timer is the period).
    """
    if spec.idle_timeout_ms is not None:
        raise InvalidSpec(
            "window.idle_timeout",
            format_duration(spec.idle_timeout_ms),
            "kdb has no idle_timeout option: its idle timer fires every period",
            "remove idle_timeout under profile kdb",
        )
    return KdbTimeWindows(
        period_ms=spec.hop_ms, duration_ms=spec.size_ms, on=spec.on, lateness_ms=spec.tolerance_ms
    )
