"""Which windows an element belongs to, and how sessions merge (B1, B2 in docs/semantics.md).

Windows are ``(start_ms, end_ms)``, half-open. Source: Beam's programming guide, "Provided
windowing functions" (https://beam.apache.org/documentation/programming-guide/#provided-windowing-functions),
and the window functions of Beam's Python SDK (``apache_beam/transforms/window.py``).
"""

from __future__ import annotations

from collections.abc import Iterable

from windtunnel.oracle.model.timefmt import BEAM_MIN_MS, GLOBAL_END_MS
from windtunnel.oracle.profiles.beam.spec import WindowFn

Bounds = tuple[int, int]
"""A window ``[start_ms, end_ms)``."""

GLOBAL: Bounds = (BEAM_MIN_MS, GLOBAL_END_MS)


def assign(fn: WindowFn, t_ms: int) -> list[Bounds]:
    """The windows of an element at ``t_ms``: fixed ``[N*size + offset, +size)``; sliding
    every window ``[N*period + offset, +size)`` holding ``t_ms``, latest start first (none
    when ``t_ms`` falls in a gap between windows, period > size); sessions ``[t, t + gap)``,
    merged later (:func:`merges`); the global window."""
    if fn.kind == "fixed":
        assert fn.size_ms is not None
        start = t_ms - (t_ms - fn.offset_ms) % fn.size_ms
        return [(start, start + fn.size_ms)]
    if fn.kind == "sliding":
        assert fn.size_ms is not None and fn.period_ms is not None
        last = t_ms - (t_ms - fn.offset_ms) % fn.period_ms
        return [(s, s + fn.size_ms) for s in range(last, t_ms - fn.size_ms, -fn.period_ms)]
    if fn.kind == "sessions":
        assert fn.gap_ms is not None
        return [(t_ms, t_ms + fn.gap_ms)]
    return [GLOBAL]


def merges(windows: Iterable[Bounds]) -> list[tuple[list[Bounds], Bounds]]:
    """Beam's session merge over ``windows``: in start order, a window joins the run before it
    when it starts strictly before the run's end (``end > start``: sessions that only touch
    stay apart, so elements exactly ``gap`` apart are two sessions). Returns each run of two
    or more windows with the window they merge into ``[first start, largest end)``; windows
    of equal start keep their end order."""
    found: list[tuple[list[Bounds], Bounds]] = []
    run: list[Bounds] = []
    end = BEAM_MIN_MS
    for window in sorted(windows):
        if run and end > window[0]:
            run.append(window)
            end = max(end, window[1])
            continue
        if len(run) > 1:
            found.append((run, (run[0][0], end)))
        run, end = [window], window[1]
    if len(run) > 1:
        found.append((run, (run[0][0], end)))
    return found
