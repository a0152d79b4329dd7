"""Hand-picked streams where the order of outputs across keys decides: windows of several
keys with the same bounds closed by one step come out in the oracle's window-time order (keys
first seen first breaking ties), whichever order the engine's maps hold them in or the windows
were opened in."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import (
    NOW,
    Aggregation,
    CountWindows,
    FixedWindows,
    Query,
    SessionWindows,
)
from windtunnel.oracle.model.stream import Advance, Event, Item

from .harness import HarnessProcess, Reference, by_step_and_slice, harness_lines

pytestmark = pytest.mark.process  # the Java engine in a JVM

COUNT = (Aggregation("n", "count"),)
# keys first seen in the order b, a, c (hash maps tend to hold a, b, c), every event at once
#
#   wall  0: b@5 a@5 c@5 b@6 a@6 c@6        (arrivals all at wall 0)
#   wall 500: idle timeouts fire for every key at once (or end of input flushes them)
EVENTS = [Event(i, {"ts": 5 + i // 3, "k": "bac"[i % 3]}, 0) for i in range(6)]

# key a is seen first but opens its window (or session) after key b opens the same one:
#
#   fixed, tolerance 100:  a@50 opens [50,60); b@5 opens [0,10); a@5 opens [0,10) later
#   now() sessions, max 2 events:  a a (a's first session closes), b, a (a's second session)
LATER_OPENED_FIXED = [
    Event(0, {"ts": 50, "k": "a"}, 0), Event(1, {"ts": 5, "k": "b"}, 0), Event(2, {"ts": 5, "k": "a"}, 0),
]
LATER_OPENED_SESSION = [Event(i, {"k": k}, 0) for i, k in enumerate("aaba")]

CASES: dict[str, tuple[Query, list[Item]]] = {
    "fixed idle, opened later": (
        Query(FixedWindows(10, tolerance_ms=100, idle_timeout_ms=100), ("k",), COUNT),
        [*LATER_OPENED_FIXED, Advance(500)],
    ),
    "now() session end, opened later": (
        Query(SessionWindows(10, on=NOW, max_events=2), ("k",), COUNT), LATER_OPENED_SESSION,
    ),
    "fixed end": (Query(FixedWindows(10, every_ms=5), ("k",), COUNT), EVENTS),
    "fixed idle": (Query(FixedWindows(10, every_ms=5, idle_timeout_ms=100), ("k",), COUNT), [*EVENTS, Advance(500)]),
    "session end": (Query(SessionWindows(10, tolerance_ms=3), ("k",), COUNT), EVENTS),
    "session idle": (Query(SessionWindows(10, idle_timeout_ms=100), ("k",), COUNT), [*EVENTS, Advance(500)]),
    "now() session end": (Query(SessionWindows(10, on=NOW), ("k",), COUNT), EVENTS),
    "now() session idle": (Query(SessionWindows(10, on=NOW, idle_timeout_ms=100), ("k",), COUNT), [*EVENTS, Advance(500)]),
    "count end": (Query(CountWindows(5), ("k",), COUNT), EVENTS),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("slices", [1, 2])
def test_same_windows_of_several_keys_close_in_first_seen_order(
    harness: HarnessProcess, name: str, slices: int
) -> None:
    query, items = CASES[name]
    expected = Reference(query, Rules(), items, 1, 0).records
    actual = harness.run(harness_lines(query, Rules(), items, slices=slices))
    last_step = max(r["step"] for r in expected)
    groups: list[Any] = [r["group"] for r in expected if r["step"] == last_step]
    first_seen = ['"a"', '"b"'] if "opened later" in name else ['"b"', '"a"', '"c"']
    assert groups[: len(first_seen)] == first_seen  # the stream shows what it is meant to
    theirs, mine = by_step_and_slice(expected, actual)
    assert mine == theirs
