"""How a fast path reads its stream, and hands the rest of it to the reference.

A fast path takes runs of events (:class:`Run`: a chunk of plain events, or the events of
a stretch of events and batches between other items), each checked whole against the
stream's rules before it is taken (seqs 0, 1, 2, ... in order, arrival times never back), and the
wall clock moves of ``Advance`` items. At the first item it does not take (a watermark,
end of input, an item of a subclass, a run too short to be worth its columns, a run it
declines, anything that breaks the stream) it stops: :func:`hand_over` puts what it
holds into the reference operator, which reads the rest of the stream with
:class:`~windtunnel.oracle.model.stream.StreamChecker` (raising InvalidStream where the
stream breaks, after the outputs before it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from typing import Any

from windtunnel.oracle.fast.columns import CHUNK, Chunk, chunks, event_columns, plain_columns
from windtunnel.oracle.model.results import Output
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item, StreamChecker
from windtunnel.oracle.windows.driver import Driver


class Run:
    """Consecutive events a fast path takes whole: ``size`` events from seq ``first_seq``,
    ``columns`` the values of the cursor's fields (one list per field, None where a
    payload lacks it), and the wall clock at each event: ``walls`` (None: ``wall_ms`` at
    every event)."""

    __slots__ = ("_chunk", "_events", "columns", "first_seq", "size", "wall_ms", "walls")

    def __init__(
        self, size: int, first_seq: int, columns: list[list[Any]], wall_ms: int,
        walls: list[int] | None, chunk: Chunk | None, events: Sequence[Event] | None,
    ) -> None:
        self.size = size
        self.first_seq = first_seq
        self.columns = columns
        self.wall_ms = wall_ms
        self.walls = walls
        self._chunk = chunk
        self._events = events

    def events(self) -> Iterator[Event]:
        """The run's events in order."""
        if self._chunk is not None:
            return self._chunk.iterate()  # type: ignore[return-value]  # a plain chunk: events only
        assert self._events is not None
        return iter(self._events)

    def release(self) -> None:
        """Drop the run's events (its columns stay): see :meth:`Chunk.release`."""
        if self._chunk is not None:
            self._chunk.release()


Take = Callable[[Run], Iterable[Output] | None]
"""A fast path's step: the outputs of a run (consumed before the next run is read), or
None to decline it (the reference then reads the stream from the run's first item)."""


class Cursor:
    """Where a fast path is in its stream: ``index`` items taken, and the
    :class:`StreamChecker` of what it took (``next_seq``, ``wall_ms``); after :meth:`parts`,
    :meth:`rest` is the stream from the first item not taken."""

    __slots__ = ("_chunks", "_fields", "_min_run", "_rest", "checker", "index")

    def __init__(
        self, items: Iterable[Item], start_wall_ms: int, *, fields: tuple[str, ...] = (),
        min_run: int = 1, chunk_size: int = CHUNK,
    ) -> None:
        self.index = 0
        self.checker = StreamChecker(start_wall_ms)
        self._fields = fields
        self._min_run = min_run
        self._chunks = chunks(items, chunk_size)
        self._rest: Iterable[Item] = ()

    @property
    def next_seq(self) -> int:
        return self.checker.next_seq

    @property
    def wall_ms(self) -> int:
        return self.checker.wall_ms

    @property
    def after_seq(self) -> int | None:
        """The seq of the last event taken (None before the first)."""
        return self.checker.next_seq - 1 if self.checker.next_seq else None

    def parts(self, take: Take) -> Iterator[Iterable[Output]]:
        """The outputs of each run ``take`` takes, in stream order, until it declines one or
        the cursor meets an item it does not take."""
        checker = self.checker
        min_run = self._min_run
        for chunk in self._chunks:
            if len(chunk) >= min_run:
                columns = plain_columns(chunk.iterate, checker.next_seq, self._fields)
                if columns is not None:  # events numbered on, no arrival times: valid
                    run = Run(len(chunk), checker.next_seq, columns, checker.wall_ms, None, chunk, None)
                    outputs = take(run)
                    if outputs is None:
                        self._stop(chunk.items(), 0)
                        return
                    self.index += len(chunk)
                    checker.next_seq += len(chunk)
                    yield outputs
                    continue
            items = chunk.items()
            position = 0
            while position < len(items):
                item = items[position]
                if type(item) is Advance and item.to_ms >= checker.wall_ms:
                    checker.item(self.index, item)
                    self.index += 1
                    position += 1
                    continue
                stop, events = _events_from(items, position)
                taken = self._run(events) if events and len(events) >= min_run else None
                outputs = None if taken is None else take(taken)
                if outputs is None:
                    if taken is not None:  # declined: the checker forgets the run
                        checker.next_seq, checker.wall_ms = taken.first_seq, taken.wall_ms
                    self._stop(items, position)
                    return
                self.index += stop - position
                yield outputs
                position = stop

    def _run(self, events: Sequence[Event]) -> Run | None:
        """The events as a run, taken by the checker, when they keep the stream valid."""
        first_seq, wall_ms = self.checker.next_seq, self.checker.wall_ms
        valid, walls = self.checker.run(events)
        if not valid:
            return None
        return Run(len(events), first_seq, event_columns(events, self._fields), wall_ms, walls, None, events)

    def _stop(self, items: list[Item], position: int) -> None:
        """Stop at ``items[position]`` of the current chunk: the rest starts there."""
        self._rest = chain(items[position:], (item for chunk in self._chunks for item in chunk.items()))

    def rest(self) -> Iterable[Item]:
        """The items from the first one not taken (empty when every item was taken)."""
        return self._rest

    def only_end_left(self) -> bool:
        """Whether the rest of the stream is the end of input alone: nothing, or one
        ``End`` and nothing after it (the rest is kept either way)."""
        rest = iter(self._rest)
        first = next(rest, None)
        if first is None:
            self._rest = ()
            return True
        second = next(rest, None)
        if second is None and type(first) is End:
            return True
        self._rest = chain((first,) if second is None else (first, second), rest)
        return False


def _events_from(items: list[Item], position: int) -> tuple[int, list[Event]]:
    """``(stop, events)``: the events of the plain events and batches of plain events from
    ``items[position]`` to before ``items[stop]``, in order (the clock of a fast path's kind
    moves per event: batch boundaries change nothing)."""
    events: list[Event] = []
    stop = position
    while stop < len(items):
        item = items[stop]
        if type(item) is Event:
            events.append(item)
        elif type(item) is Batch and all(type(e) is Event for e in item.events):
            events.extend(item.events)
        else:
            break
        stop += 1
    return stop, events


def hand_over(reference: Callable[[], Driver], cursor: Cursor) -> Iterator[Output]:
    """The rest of the stream on the reference (``reference()``: a driver whose groups and
    operator hold what the fast path read, built once the fast path stopped), from the
    cursor's position, seq and wall clock; ``End`` implied."""
    driver = reference()
    driver.ctx.wall_ms = cursor.wall_ms
    driver.ctx.after_seq = cursor.after_seq
    yield from driver.run(cursor.rest(), next_seq=cursor.next_seq, first_index=cursor.index)


def group_values(value: Any, fields: int) -> tuple[Any, ...]:
    """The ``group_by`` values (``fields`` of them) behind a group's value, as the driver
    keys its groups (one value: itself; several: the list's items)."""
    if fields == 0:
        return ()
    if fields == 1:
        return (value,)
    return tuple(value)


def fast_outputs(parts: Iterator[Iterable[Output]], rest: Iterator[Output]) -> Iterator[Output]:
    """The outputs of the fast path's parts, then of the reference's ``rest`` (a generator
    that starts only once the parts are consumed), chained in C: a consumer's ``next``
    resumes one Python frame, the part's, not also a generator delegating to it."""
    return chain.from_iterable(chain(parts, (rest,)))
