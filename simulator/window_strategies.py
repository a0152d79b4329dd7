"""Hypothesis strategies for window specs: scenario ``window`` blocks of the shared kinds
and the oracle specs they parse to (importable from :mod:`.strategies` too).

Each shrinks towards the simplest case: the first kind, few large windows (the largest
size, no hop), zero tolerance and no idle timeout. Durations are integer milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import WindowSpec
from windtunnel.oracle.scenario_windows import WINDOW_KINDS, parse_window

MAX_WINDOWS_PER_EVENT = 1_000
"""A drawn hop is at least ``size / MAX_WINDOWS_PER_EVENT`` (rounded up): an event falls into
at most this many overlapping windows (a 60 s window every 1 ms would give 60,000, and a
20-event stream 360,000 outputs: a cost, not a new case)."""


def _size(min_ms: int, max_ms: int) -> st.SearchStrategy[int]:
    """A duration that shrinks towards ``max_ms`` (fewer, larger windows)."""
    return st.integers(0, max_ms - min_ms).map(lambda k: max_ms - k)


def _check_range(name: str, low: int, high: int) -> None:
    if isinstance(low, bool) or isinstance(high, bool) or not 0 < low <= high:
        raise InvalidSpec(name, (low, high), "needs 0 < min <= max", "give positive bounds")


def window_blocks(
    *,
    kinds: Sequence[str] = ("fixed",),
    min_size_ms: int = 1,
    max_size_ms: int = 60_000,
    hopping: bool = True,
    max_tolerance_ms: int = 10_000,
    idle_timeouts: bool = False,
    max_idle_timeout_ms: int = 60_000,
    max_count: int = 10,
    on: str = "ts",
) -> st.SearchStrategy[dict[str, Any]]:
    """Scenario ``window`` blocks (durations as integer ms) of the given kinds.

    Kinds: ``fixed`` always; ``session``, ``count``, ``trailing`` when the oracle has
    registered them. A fixed window's hop gives at most MAX_WINDOWS_PER_EVENT windows per
    event. Shrinks towards the first kind, the largest size, no hop, zero tolerance and no
    idle timeout. Raises InvalidSpec for an unknown kind or bad bounds.
    """
    _check_range("max_size_ms", min_size_ms, max_size_ms)
    if not kinds:
        raise InvalidSpec("kinds", kinds, "must name at least one kind", 'give kinds=("fixed",)')
    for kind in kinds:
        if kind not in WINDOW_KINDS or kind not in _KIND_BUILDERS:
            known = [k for k in _KIND_BUILDERS if k in WINDOW_KINDS]
            raise InvalidSpec("kinds", kind, "not an available window kind", f"use one of {known}")

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        kind = draw(st.sampled_from(list(kinds)))
        block: dict[str, Any] = {"kind": kind}
        if kind != "count":
            block["on"] = on
        block.update(
            _KIND_BUILDERS[kind](
                draw, min_size_ms, max_size_ms, hopping, max_tolerance_ms, max_count
            )
        )
        if idle_timeouts and kind in ("fixed", "session"):
            idle = draw(st.none() | st.integers(1, max_idle_timeout_ms))
            if idle is not None:
                block["idle_timeout"] = idle
        return block

    return build()


def _fixed_block(
    draw: st.DrawFn, lo: int, hi: int, hopping: bool, max_tol: int, max_count: int
) -> dict[str, Any]:
    size = draw(_size(lo, hi))
    block: dict[str, Any] = {"size": size}
    if hopping:
        every = draw(st.none() | _size(-(-size // MAX_WINDOWS_PER_EVENT), size))
        if every is not None and every != size:
            block["every"] = every
    tolerance = draw(st.integers(0, max_tol))
    if tolerance:
        block["tolerance"] = tolerance
    return block


def _session_block(
    draw: st.DrawFn, lo: int, hi: int, hopping: bool, max_tol: int, max_count: int
) -> dict[str, Any]:
    block: dict[str, Any] = {"gap": draw(_size(lo, hi))}
    tolerance = draw(st.integers(0, max_tol))
    if tolerance:
        block["tolerance"] = tolerance
    return block


def _count_block(
    draw: st.DrawFn, lo: int, hi: int, hopping: bool, max_tol: int, max_count: int
) -> dict[str, Any]:
    count = draw(_size(1, max_count))
    block: dict[str, Any] = {"count": count}
    if hopping:
        every = draw(st.none() | _size(1, count))
        if every is not None and every != count:
            block["every"] = every
    return block


def _trailing_block(
    draw: st.DrawFn, lo: int, hi: int, hopping: bool, max_tol: int, max_count: int
) -> dict[str, Any]:
    block: dict[str, Any] = {"size": draw(_size(lo, hi))}
    if hopping:
        every = draw(st.none() | st.integers(1, hi))
        if every is not None:
            block["every"] = every
    return block


_KIND_BUILDERS: dict[str, Callable[..., dict[str, Any]]] = {
    "fixed": _fixed_block,
    "session": _session_block,
    "count": _count_block,
    "trailing": _trailing_block,
}


def window_specs(
    *,
    kinds: Sequence[str] = ("fixed",),
    min_size_ms: int = 1,
    max_size_ms: int = 60_000,
    hopping: bool = True,
    max_tolerance_ms: int = 10_000,
    idle_timeouts: bool = False,
    max_count: int = 10,
    on: str = "ts",
    rules: Rules | None = None,
) -> st.SearchStrategy[WindowSpec]:
    """Oracle window specs (``FixedWindows``, and other kinds the oracle registers).

    Built from :func:`window_blocks` through the scenario parser, so they are exactly
    what a scenario file with that block gives. Shrinks like :func:`window_blocks`.
    """
    parse_rules = rules or Rules()
    return window_blocks(
        kinds=kinds,
        min_size_ms=min_size_ms,
        max_size_ms=max_size_ms,
        hopping=hopping,
        max_tolerance_ms=max_tolerance_ms,
        idle_timeouts=idle_timeouts,
        max_count=max_count,
        on=on,
    ).map(lambda block: parse_window(block, "ms", parse_rules))
