"""The ``late`` drop of an event whose target windows all closed: the windows it missed and
why (closed by the clock at its close point, or force-closed by ``idle_timeout``).
"""

from __future__ import annotations

from typing import Any

from windtunnel.oracle.model.results import Drop, WindowRef


def late_drop(
    seq: int,
    t_ms: int,
    missed: list[int],
    size_ms: int,
    close_offset_ms: int,
    clock_ms: int | None,
    *,
    idle_closed: bool = False,
    group: Any = None,
) -> Drop:
    """The ``late`` drop of an event at ``t_ms`` (of ``group``) whose target windows
    (starts ``missed``, each ``size_ms`` long) closed."""
    bounds = [(s, s + size_ms) for s in missed]
    return late_drop_windows(
        seq, t_ms, bounds, close_offset_ms, clock_ms, idle_closed=idle_closed, group=group
    )


def late_drop_windows(
    seq: int,
    t_ms: int,
    missed: list[tuple[int, int]],
    close_offset_ms: int,
    clock_ms: int | None,
    *,
    idle_closed: bool = False,
    group: Any = None,
) -> Drop:
    """The ``late`` drop of an event at ``t_ms`` (of ``group``) whose target windows
    ``missed`` (``(start_ms, end_ms)``) closed, the first at its end + ``close_offset_ms``."""
    start, end = missed[0]
    how = (
        "idle_timeout force-closed it"
        if idle_closed
        else f"it closed when the clock reached {end + close_offset_ms}"
    )
    span = "window" if len(missed) == 1 else f"all {len(missed)} target windows"
    return Drop(
        seq, "late", tuple(WindowRef(s, e) for s, e in missed),
        f"event time {t_ms} is late for {span} (first [{start}, {end})): "
        f"{how}; the clock is at {clock_ms}",
        group,
    )
