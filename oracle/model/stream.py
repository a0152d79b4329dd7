"""Stream items: what an engine consumes, in stream order.

The wall clock is virtual: it comes from the items (``Event.at_ms``, ``Advance``),
never from the machine; ``Watermark`` moves the event-time watermark, not the wall clock. It starts at the stream's ``start_wall_ms`` and never goes back.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import numpy as np

from windtunnel.oracle.model.errors import InvalidStream

_SEQ = attrgetter("seq")
_AT = attrgetter("at_ms")


@dataclass(frozen=True, slots=True)
class Event:
    """One input record.

    ``seq`` numbers events 0, 1, 2, ... in stream order; ``at_ms`` is the arrival wall
    clock in epoch milliseconds, or None to arrive at the current wall clock.
    """

    seq: int
    payload: Mapping[str, Any]
    at_ms: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.seq, bool) or not isinstance(self.seq, int) or self.seq < 0:
            raise InvalidStream(
                "event.seq", self.seq, "must be an integer >= 0", "number events 0, 1, 2, ..."
            )
        if not isinstance(self.payload, Mapping):
            raise InvalidStream(
                f"event[{self.seq}].payload",
                self.payload,
                "must be a mapping",
                "give an object of fields",
            )
        if self.at_ms is not None and (
            isinstance(self.at_ms, bool) or not isinstance(self.at_ms, int)
        ):
            raise InvalidStream(
                f"event[{self.seq}].at",
                self.at_ms,
                "must be integer epoch milliseconds",
                "give an integer",
            )


@dataclass(frozen=True, slots=True)
class Advance:
    """The wall clock moves to ``to_ms`` (absolute epoch milliseconds) with no event."""

    to_ms: int

    def __post_init__(self) -> None:
        if isinstance(self.to_ms, bool) or not isinstance(self.to_ms, int):
            raise InvalidStream(
                "advance", self.to_ms, "must be integer epoch milliseconds", "give an integer"
            )


@dataclass(frozen=True, slots=True)
class Batch:
    """Events that arrive together (one poll, one published batch, one micro-batch)."""

    events: tuple[Event, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.events, tuple) or not all(isinstance(e, Event) for e in self.events):
            raise InvalidStream(
                "batch", self.events, "must be a tuple of Event", "wrap events in Event(...)"
            )


@dataclass(frozen=True, slots=True)
class Watermark:
    """A harness-injected watermark: the event-time watermark moves to ``to_ms`` (epoch ms).

    Only watermark-driven profiles take it (docs/semantics.md, W1): it fires the windows
    the watermark reaches and makes later events late by it; a watermark at or below the
    current one is ignored. It is not an event (no ``seq``) and leaves the wall clock alone.
    """

    to_ms: int

    def __post_init__(self) -> None:
        if isinstance(self.to_ms, bool) or not isinstance(self.to_ms, int):
            raise InvalidStream(
                "watermark", self.to_ms, "must be integer epoch milliseconds", "give an integer"
            )


@dataclass(frozen=True, slots=True)
class End:
    """End of input: nothing follows."""


Item = Event | Advance | Batch | Watermark | End


def events_of(items: Iterable[Item]) -> Iterator[Event]:
    """Every event in stream order, batches flattened."""
    for item in items:
        if isinstance(item, Event):
            yield item
        elif isinstance(item, Batch):
            yield from item.events


class StreamChecker:
    """The stream's validity rules, item by item: the wall clock never goes back, events
    are numbered 0, 1, 2, ... in stream order, and nothing follows ``End``.

    A checker may start mid-stream, at the wall clock and seq where another consumer
    stopped. :meth:`run` checks consecutive events at once (the array form of
    :meth:`event`); ``next_seq`` is public so that a consumer that checked plain events
    itself (numbered on, no arrival times: the wall clock stays) counts them on.
    """

    __slots__ = ("ended", "next_seq", "wall_ms")

    def __init__(self, start_wall_ms: int = 0, next_seq: int = 0) -> None:
        self.wall_ms = start_wall_ms
        self.next_seq = next_seq
        self.ended = False

    def item(self, index: int, item: Item) -> None:
        """Check ``input[index]``; raises InvalidStream naming the field and the fix."""
        if self.ended:
            raise InvalidStream(
                f"input[{index}]", item, "comes after end of input", "remove it or the end"
            )
        if isinstance(item, Event):
            self.event(index, item)
        elif isinstance(item, Batch):
            for event in item.events:
                self.event(index, event)
        elif isinstance(item, Advance):
            if item.to_ms < self.wall_ms:
                raise InvalidStream(
                    f"input[{index}].at",
                    item.to_ms,
                    f"the wall clock cannot go back (it is at {self.wall_ms})",
                    "give a later time",
                )
            self.wall_ms = item.to_ms
        elif isinstance(item, End):
            self.ended = True
        elif not isinstance(item, Watermark):  # a watermark moves neither seq nor wall clock
            raise InvalidStream(
                f"input[{index}]",
                item,
                "not a stream item",
                "use Event, Advance, Batch, Watermark or End",
            )

    def event(self, index: int, event: Event) -> None:
        """Check one event of ``input[index]`` (its seq and arrival time)."""
        if event.seq != self.next_seq:
            raise InvalidStream(
                f"input[{index}].seq",
                event.seq,
                f"expected seq {self.next_seq}",
                "number events 0, 1, 2, ...",
            )
        self.next_seq += 1
        if event.at_ms is not None:
            if event.at_ms < self.wall_ms:
                raise InvalidStream(
                    f"input[{index}].at",
                    event.at_ms,
                    f"the wall clock cannot go back (it is at {self.wall_ms})",
                    "give a later arrival time",
                )
            self.wall_ms = event.at_ms


    def run(self, events: Sequence[Event]) -> tuple[bool, list[int] | None]:
        """Check consecutive events at once, the array form of :meth:`event`: ``(True,
        walls)`` when they keep the stream valid, then taken (``walls``: the wall clock at
        each event; None when none carries ``at_ms``). ``(False, None)``, the checker
        unchanged, when they break the stream, or when some carry ``at_ms`` and others not
        (:meth:`event` takes those one by one)."""
        n = len(events)
        if not n or self.ended:
            return False, None
        if events[0].seq != self.next_seq or events[-1].seq != self.next_seq + n - 1:
            return False, None
        try:
            seqs = np.fromiter(map(_SEQ, events), dtype=np.int64, count=n)
        except OverflowError:
            return False, None
        if n > 1 and not bool((seqs[1:] > seqs[:-1]).all()):  # increasing from first to last: +1 each
            return False, None
        ats = list(map(_AT, events))
        missing = ats.count(None)
        walls: list[int] | None = None
        if missing != n:
            if missing or ats[0] < self.wall_ms:
                return False, None
            try:
                array = np.array(ats, dtype=np.int64)
            except OverflowError:
                return False, None
            if n > 1 and bool((array[1:] < array[:-1]).any()):
                return False, None
            walls = ats  # no None among them
            self.wall_ms = ats[-1]
        self.next_seq += n
        return True, walls


def without_watermarks(items: Iterable[Item], engine: str) -> Iterator[Item]:
    """The items unchanged; raises InvalidStream at a ``Watermark``, which ``engine`` (a real
    engine fed by windtunnel, whose watermark comes from the data) cannot take."""
    for item in items:
        if isinstance(item, Watermark):
            raise InvalidStream(
                "watermark_ms",
                item.to_ms,
                f"the {engine} engine cannot take an injected watermark: its watermark comes "
                "from the data",
                "remove the {watermark: ...} item or replay it with --engine oracle",
            )
        yield item


def checked(
    items: Iterable[Item], start_wall_ms: int = 0, *, next_seq: int = 0, first_index: int = 0
) -> Iterator[Item]:
    """The items unchanged, checked by :class:`StreamChecker` (raising InvalidStream).
    Appends ``End`` if missing. ``next_seq`` and ``first_index`` (the first item's position
    in the stream, for messages) continue a stream another consumer began."""
    checker = StreamChecker(start_wall_ms, next_seq)
    for index, item in enumerate(items, first_index):
        checker.item(index, item)
        yield item
    if not checker.ended:
        yield End()


def numbered(payloads: Iterable[Mapping[str, Any]], at_ms: Iterable[int | None] | None = None) -> tuple[Event, ...]:
    """Events numbered 0, 1, 2, ... from payloads, with optional arrival wall times."""
    arrivals = list(at_ms) if at_ms is not None else None
    return tuple(
        Event(seq, dict(payload), None if arrivals is None else arrivals[seq])
        for seq, payload in enumerate(payloads)
    )
