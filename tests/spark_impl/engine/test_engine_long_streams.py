"""Longer streams than Hypothesis draws: thousands of events over dozens of string keys in the
realistic job's shape (hopping windows with tolerance and idle timeouts, count + sum + avg of
floats), sessions and count windows, split over three slices with snapshots and updates every
few hundred events; the engine's records equal the oracle's."""

from __future__ import annotations

import random

import pytest

from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import (
    Aggregation,
    CountWindows,
    FixedWindows,
    Query,
    SessionWindows,
)
from windtunnel.oracle.model.stream import Advance, Event, Item

from .harness import HarnessProcess, Reference, by_step_and_slice, harness_lines

pytestmark = pytest.mark.process  # the Java engine in a JVM

AGGREGATES = (Aggregation("n", "count"), Aggregation("total", "sum", "amount"), Aggregation("mean", "avg", "amount"))
QUERIES = {
    "hopping": Query(FixedWindows(600, every_ms=60, tolerance_ms=120, idle_timeout_ms=900), ("user",), AGGREGATES),
    "sessions": Query(SessionWindows(90, tolerance_ms=40, max_events=30, idle_timeout_ms=700), ("user",), AGGREGATES),
    "count": Query(CountWindows(7, every=3), ("user",), AGGREGATES),
}


def stream(seed: int, events: int = 3000, users: int = 40) -> list[Item]:
    """Events every 7 ms on average, 5% up to 120 ms out of order, amounts with cents,
    occasional idle gaps on the wall clock."""
    rng = random.Random(seed)
    items: list[Item] = []
    clock = 0
    for seq in range(events):
        clock += rng.randint(0, 14)
        if rng.randint(0, 300) == 0:
            clock += rng.randint(500, 2000)
            items.append(Advance(clock))
        t = clock - (rng.randint(0, 120) if rng.randint(0, 19) == 0 else 0)
        amount = round(rng.uniform(0, 100), 2)
        items.append(Event(seq, {"ts": t, "user": f"user-{rng.randrange(users)}", "amount": amount}, clock))
    return items


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_long_streams_equal_the_oracle(harness: HarnessProcess, name: str) -> None:
    query = QUERIES[name]
    items = stream(seed=len(name))
    expected = Reference(query, Rules(), items, 1, 0).records
    kinds = ("full", "update", "update", "parts", "parts")
    snapshots = [(i, kinds[i // 300 % 5]) for i in range(300, len(items), 300)]
    actual = harness.run(harness_lines(query, Rules(), items, slices=3, snapshots=snapshots))
    assert len(actual) == len(expected) > 1000
    theirs, mine = by_step_and_slice(expected, actual)
    assert mine == theirs
