"""Lanes: scenarios split into queries run side by side, results back in order, one retry of
a query whose Python process did not connect back in time (no Spark needed)."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.spark_impl.harness.job_lanes import run_lanes, split


@pytest.mark.parametrize(
    ("weights", "lanes", "expected"),
    [
        ([5, 1, 1, 1, 1, 1], 2, [[0], [1, 2, 3, 4, 5]]),  # the heavy one alone
        ([1, 1, 1], 8, [[0], [1], [2]]),  # no empty lanes
        ([3, 0, 2], 1, [[0, 1, 2]]),
        ([], 4, []),
    ],
)
def test_split_balances_micro_batches(weights: list[int], lanes: int,
                                      expected: list[list[int]]) -> None:
    assert split(weights, lanes) == expected


@pytest.mark.parametrize("lanes", [0, -1, True, 1.5])
def test_split_rejects_a_bad_lane_count(lanes: Any) -> None:
    with pytest.raises(InvalidSpec, match="lanes"):
        split([1], lanes)


def _task(value: int, log: list[int]) -> Any:
    def run(started: Any) -> int:
        started(None)
        log.append(value)
        return value

    return run


def test_results_come_back_per_lane_in_order() -> None:
    log: list[int] = []
    lanes = [[_task(i * 10 + j, log) for j in range(3)] for i in range(4)]
    assert run_lanes(lanes) == [[0, 1, 2], [10, 11, 12], [20, 21, 22], [30, 31, 32]]
    assert sorted(log) == sorted(v for lane in ([0, 1, 2], [10, 11, 12], [20, 21, 22],
                                                [30, 31, 32]) for v in lane)


def test_a_failed_connect_back_is_run_once_more_and_other_errors_are_raised() -> None:
    attempts: list[str] = []

    def flaky(started: Any) -> str:
        attempts.append("flaky")
        if attempts.count("flaky") == 1:
            raise InvalidSpec("--job", "j", "Python worker failed to connect back", "retry")
        return "ok"

    def broken(started: Any) -> str:
        attempts.append("broken")
        raise InvalidSpec("--job", "j", "raised ZeroDivisionError", "fix the job function")

    assert run_lanes([[flaky]]) == [["ok"]]
    with pytest.raises(InvalidSpec, match="ZeroDivisionError"):
        run_lanes([[flaky], [broken]])
    assert attempts.count("broken") == 1  # not a transient error: no second attempt
