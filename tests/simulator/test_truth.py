"""Ground-truth clocks and the late rule, against small timelines and the oracle."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.simulator.knobs import LateSpec
from windtunnel.simulator.truth import (
    DELIVER,
    LATE,
    NONE,
    NOT_A_TIME,
    NULL_TIME,
    Clocks,
    clocks_before,
    label,
    latest_late_time,
)


def arr(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def test_clock_is_the_largest_valid_time_seen_before_each_row_per_group() -> None:
    # stream order:  a:10  b:5  a:3  a:(null)  b:20  a:12
    # clock before:  none  none 10   10        5     10
    groups = arr(0, 1, 0, 0, 1, 0)
    ts = arr(10, 5, 3, 99, 20, 12)
    valid = np.array([True, True, True, False, True, True])
    before, seen, after = clocks_before(groups, ts, valid, Clocks())
    assert before.tolist() == [NONE, NONE, 10, 10, 5, 10]
    assert dict(zip(seen.tolist(), after.tolist(), strict=True)) == {0: 12, 1: 20}


def test_clocks_carry_over_chunks() -> None:
    carry = Clocks()
    clocks_before(arr(0, 1), arr(100, 7), np.ones(2, bool), carry)
    carry.raise_to(arr(0, 1), arr(100, 7))
    before, _, _ = clocks_before(arr(1, 0, 2), arr(1, 1, 1), np.ones(3, bool), carry)
    assert before.tolist() == [7, 100, NONE]


def test_label_tumbling_reaches_end_plus_tolerance() -> None:
    # window [0, 10), tolerance 2: closes when the clock reaches 12
    #   ts:     5    12   9(late: clock 12 >= 12)   11 (window [10,20) open)  null  "x"
    spec = LateSpec(10, tolerance_ms=2)
    status = np.array([0, 0, 0, 0, 1, 2], dtype=np.int8)
    truth = label(spec, arr(0, 0, 0, 0, 0, 0), arr(5, 12, 9, 11, 0, 0), status, Clocks())
    assert truth.tolist() == [DELIVER, DELIVER, LATE, DELIVER, NULL_TIME, NOT_A_TIME]


def test_label_hopping_is_late_only_when_every_target_window_closed() -> None:
    # size 10 every 5: t=7 is in [0,10) and [5,15); clock 14 closes only [0,10)
    spec = LateSpec(10, every_ms=5)
    ok = np.zeros(3, dtype=np.int8)
    assert label(spec, arr(0, 0, 0), arr(0, 14, 7), ok, Clocks()).tolist() == [0, 0, DELIVER]
    assert label(spec, arr(0, 0, 0), arr(0, 15, 7), ok, Clocks()).tolist() == [0, 0, LATE]


@settings(max_examples=200, deadline=None)
@given(
    size=st.integers(1, 1000),
    hop_divisor=st.integers(1, 5),
    tolerance=st.integers(0, 500),
    clock=st.integers(-5000, 5000),
)
def test_latest_late_time_is_the_boundary(
    size: int, hop_divisor: int, tolerance: int, clock: int
) -> None:
    spec = LateSpec(size, every_ms=max(1, size // hop_divisor), tolerance_ms=tolerance)
    latest = int(latest_late_time(spec, arr(clock))[0])
    groups = arr(0, 0, 0)
    ok = np.zeros(3, dtype=np.int8)
    at_latest = label(spec, groups, arr(clock, latest, latest + 1), ok, Clocks())
    assert at_latest.tolist() == [DELIVER, LATE, DELIVER]
