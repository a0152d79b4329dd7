"""Stream items of subclasses of Event, Batch and End through the three fast paths
(oracle/fast/fixed.py, count.py, session.py): the stream checker and the reference accept
them (they test ``isinstance``), so the fast paths must process them exactly as the
reference does, never skip them (an event lost silently): they hand the stream to the
reference at such an item."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.oracle.engine import reference_outputs, run
from windtunnel.oracle.fast import fast_outputs, refusal
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import (
    Aggregation,
    CountWindows,
    FixedWindows,
    Query,
    SessionWindows,
)
from windtunnel.oracle.model.stream import Batch, End, Event, Item
from windtunnel.simulator.strategies import streams


@dataclass(frozen=True, slots=True)
class TaggedEvent(Event):
    """An Event subclass, as a caller might define one."""


@dataclass(frozen=True, slots=True)
class TaggedBatch(Batch):
    """A Batch subclass."""


@dataclass(frozen=True, slots=True)
class TaggedEnd(End):
    """An End subclass."""


COUNT = (Aggregation("n", "count"),)
QUERIES: dict[str, Query] = {
    "fixed": Query(FixedWindows(10), group_by=("key",), aggregate=COUNT),
    "count": Query(CountWindows(3), group_by=("key",), aggregate=COUNT),
    "session": Query(SessionWindows(5), group_by=("key",), aggregate=COUNT),
}


def tagged(event: Event) -> TaggedEvent:
    return TaggedEvent(event.seq, event.payload, event.at_ms)


def retagged(items: tuple[Item, ...], pick: list[bool]) -> Iterator[Item]:
    """The items with the picked events and batches (cycling through ``pick``) as subclass
    instances; a picked batch's events become subclass instances too."""
    for position, item in enumerate(items):
        chosen = bool(pick) and pick[position % len(pick)]
        if chosen and isinstance(item, Event):
            yield tagged(item)
        elif chosen and isinstance(item, Batch):
            yield TaggedBatch(tuple(map(tagged, item.events)))
        else:
            yield item


def plain_stream(n: int) -> list[Event]:
    """``n`` in-order events on two keys, times 0, 3, 6, ...: windows close and sessions
    split (a gap of 7 every 5 events) along the way."""
    return [Event(i, {"ts": 3 * i + 7 * (i // 5), "key": "ab"[i % 2]}) for i in range(n)]


@pytest.mark.parametrize("kind", sorted(QUERIES))
@pytest.mark.parametrize("where", ["first", "middle", "last", "every third", "all"])
def test_event_subclass_counts_as_an_event(kind: str, where: str) -> None:
    query = QUERIES[kind]
    assert refusal(query, Rules(), "tenzir") is None
    events = plain_stream(100)  # past the columnar paths' minimum run
    positions = {
        "first": [0], "middle": [50], "last": [99], "every third": list(range(0, 100, 3)),
        "all": list(range(100)),
    }[where]
    items: list[Item] = list(events)
    for position in positions:
        items[position] = tagged(events[position])
    fast = run(query, items).outputs
    assert fast == tuple(reference_outputs(query, items))
    assert fast == run(query, events).outputs  # a subclass changes nothing


@pytest.mark.parametrize("kind", sorted(QUERIES))
def test_batch_and_end_subclasses_count_as_theirs(kind: str) -> None:
    query = QUERIES[kind]
    events = plain_stream(60)
    items: list[Item] = [*events[:20], TaggedBatch(tuple(map(tagged, events[20:40]))), *events[40:], TaggedEnd()]
    fast = run(query, items).outputs
    assert fast == tuple(reference_outputs(query, items))
    assert fast == run(query, events).outputs


@settings(max_examples=120, deadline=None)
@given(
    kind=st.sampled_from(sorted(QUERIES)),
    items=streams(max_events=40, keys=3, max_step_ms=6, max_disorder_ms=10, with_batches=True, with_advances=True),
    pick=st.lists(st.booleans(), max_size=7),
    short_runs=st.booleans(),
)
def test_subclass_streams_equal_the_reference(
    kind: str, items: tuple[Item, ...], pick: list[bool], short_runs: bool
) -> None:
    query = QUERIES[kind]
    stream = list(retagged(items, pick))
    expected = list(reference_outputs(query, stream))
    fast = fast_outputs(query, stream, rules=Rules(), min_run=2) if short_runs else run(query, stream).outputs
    assert list(fast) == expected
