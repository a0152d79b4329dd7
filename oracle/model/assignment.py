"""Window assignment: which windows of a grid contain a point.

A grid holds the windows ``[s, s + size)`` (half-open) whose starts ``s`` are ``offset``
plus a multiple of ``hop``, optionally none below ``lowest``. Points are event times in
milliseconds (fixed windows, aligned to the Unix epoch or a profile's offset) or a group's
event offsets 0, 1, 2, ... (count windows, whose grid starts at 0). Every window kind
with such a grid, and every fast path, assigns points here.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def last_start(point: int, hop: int, *, offset: int = 0) -> int:
    """The largest start of the grid at or before ``point``: the start of the one window
    containing it when ``size == hop`` (tumbling windows)."""
    return point - (point - offset) % hop


def starts_containing(
    point: int, size: int, hop: int, *, offset: int = 0, lowest: int | None = None
) -> range:
    """Starts of every window ``[s, s + size)`` of the grid that contains ``point``,
    ascending (empty between gapped windows, ``hop > size``). Python's ``%`` floors, so
    negative points align like positive ones."""
    last = last_start(point, hop, offset=offset)
    first = point - size + 1
    if lowest is not None and first < lowest:
        first = lowest
    first += (offset - first) % hop
    return range(first, last + 1, hop)


def window_ending_at(point: int, size: int, hop: int, *, lowest: int | None = None) -> int | None:
    """The start of the grid's window whose last point (``end - 1``) is ``point``, or None
    (offset 0): the window a count-window offset completes."""
    start = point - size + 1
    return start if start in starts_containing(point, size, hop, lowest=lowest) else None


def windows_ending_in(
    first_points: npt.NDArray[np.int64],
    counts: npt.NDArray[np.int64],
    size: int,
    hop: int,
    *,
    lowest: int = 0,
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.int64]]:
    """:func:`window_ending_at` over runs of consecutive points, as arrays.

    Row ``i`` holds the points ``first_points[i]`` to ``first_points[i] + counts[i] - 1``.
    Returns ``(rows, ranks)``: for each point that is some window's last point, its row
    and its rank in the row (0 for the row's first point), rows ascending and ranks
    ascending within a row. Requires ``hop <= size`` (at most one window ends at a point).
    """
    # a point p ends a window when p - size + 1 >= lowest is on the grid: p = size - 1 (mod hop)
    floor = np.maximum(first_points, lowest + size - 1)
    first_rank = floor + (size - 1 - floor) % hop - first_points
    ending = np.where(first_rank < counts, (counts - 1 - first_rank) // hop + 1, 0)
    rows = np.repeat(np.arange(len(counts)), ending)
    step = np.arange(len(rows)) - np.repeat(np.cumsum(ending) - ending, ending)
    return rows, first_rank[rows] + hop * step
