"""Window assignment (oracle/model/assignment.py): which windows of a grid contain a point,
and the array form of "which window ends at this point" the count fast path uses.

Grid size 10, hop 5 (hopping), offset 0:

    -10    -5     0     5    10    15
     [-5, 5)-----|
           [0, 10)-----------|
                 [5, 15)-----------|
    7 is in [0, 10) and [5, 15)
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.oracle.model.assignment import (
    last_start,
    starts_containing,
    window_ending_at,
    windows_ending_in,
)


@pytest.mark.parametrize(
    ("point", "size", "hop", "keywords", "starts"),
    [
        (7, 10, 5, {}, [0, 5]),
        (10, 10, 10, {}, [10]),  # half-open: 10 is not in [0, 10)
        (-1, 10, 10, {}, [-10]),  # negative points floor like positive ones
        (3, 10, 2, {}, [-6, -4, -2, 0, 2]),
        (3, 10, 2, {"lowest": 0}, [0, 2]),  # none below lowest (count offsets, epoch_from_zero)
        (3, 10, 2, {"lowest": -3}, [-2, 0, 2]),  # lowest rounds up to the grid
        (7, 2, 5, {}, []),  # gapped: between [5, 7) and [10, 12)
        (8, 7, 7, {"offset": 3}, [3]),  # the grid starts at 3 (a Monday, say)
        (2, 7, 7, {"offset": 3}, [-4]),
    ],
)
def test_the_starts_of_the_windows_containing_a_point(
    point: int, size: int, hop: int, keywords: dict[str, int], starts: list[int]
) -> None:
    assert list(starts_containing(point, size, hop, **keywords)) == starts


@settings(max_examples=300, deadline=None)
@given(
    point=st.integers(-100, 100), size=st.integers(1, 20), hop=st.integers(1, 20),
    offset=st.integers(-30, 30), lowest=st.none() | st.integers(-50, 50),
)
def test_the_starts_are_exactly_the_grid_windows_holding_the_point(
    point: int, size: int, hop: int, offset: int, lowest: int | None
) -> None:
    found = starts_containing(point, size, hop, offset=offset, lowest=lowest)
    grid = range(offset - 200 * hop, 200 + size, hop)
    assert list(found) == [
        s for s in grid if s <= point < s + size and (lowest is None or s >= lowest)
    ]
    if size == hop and lowest is None:
        assert list(found) == [last_start(point, hop, offset=offset)]


@settings(max_examples=300, deadline=None)
@given(
    firsts=st.lists(st.integers(0, 40), min_size=0, max_size=6),
    counts=st.data(),
    size=st.integers(1, 8),
    hop=st.integers(1, 8),
)
def test_windows_ending_in_runs_is_window_ending_at_for_each_point(
    firsts: list[int], counts: st.DataObject, size: int, hop: int
) -> None:
    """The array form equals the scalar form on every point of every run (hop <= size)."""
    hop = min(hop, size)
    lengths = [counts.draw(st.integers(0, 30)) for _ in firsts]
    rows, ranks = windows_ending_in(
        np.array(firsts, dtype=np.int64), np.array(lengths, dtype=np.int64), size, hop
    )
    expected = [
        (row, rank)
        for row, (first, length) in enumerate(zip(firsts, lengths, strict=True))
        for rank in range(length)
        if window_ending_at(first + rank, size, hop, lowest=0) is not None
    ]
    assert list(zip(rows.tolist(), ranks.tolist(), strict=True)) == expected


def test_the_window_a_count_offset_completes() -> None:
    # count 3 every 2: [0, 3) ends at offset 2, [2, 5) at 4; offset 3 ends none
    assert [window_ending_at(o, 3, 2, lowest=0) for o in range(6)] == [None, None, 0, None, 2, None]
