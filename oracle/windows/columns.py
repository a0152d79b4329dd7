"""Helpers for the columnar chunk paths of the count and session fast paths.

A fast path pulls the stream in chunks of up to :data:`CHUNK` items; a chunk whose items
are all plain :class:`Event` values goes through the fast path's columnar code when its
columns are ordinary (:meth:`KeyTable.plain_codes`), everything else through its per-event loop,
which shares the same state. :func:`emission` builds an :class:`Emission` equal to the
one its constructor builds, several times as fast (it skips the frozen dataclass's
``object.__setattr__`` calls: it fills a twin class of the same slots and retypes it,
``twin.__class__ = Emission``;
tests/oracle/test_columns.py checks the equality).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from itertools import islice
from operator import attrgetter
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from windtunnel.oracle.model.results import Drop, Emission, WindowRef
from windtunnel.oracle.model.stream import Event, Item

CHUNK = 65_536
"""Items per chunk: bounds the columns' memory (measured fastest of 16k to 256k)."""

_SEQ = attrgetter("seq")
_AT = attrgetter("at_ms")
_new = object.__new__


class EmissionSlots:
    """:class:`Emission`'s slots in its layout: filled by plain attribute stores (the frozen
    dataclass's ``__init__`` goes through ``object.__setattr__`` per field), then retyped
    to :class:`Emission` (``obj.__class__ = Emission``: a plain store on the twin, the
    same layout)."""

    __slots__ = Emission.__slots__


class WindowRefSlots:
    """:class:`WindowRef`'s slots in its layout, as :class:`EmissionSlots`."""

    __slots__ = WindowRef.__slots__


class DropSlots:
    """:class:`Drop`'s slots in its layout, as :class:`EmissionSlots`."""

    __slots__ = Drop.__slots__


def window_ref(start_ms: int | None, end_ms: int | None, start_offset: int | None, end_offset: int | None) -> WindowRef:
    """``WindowRef(start_ms, end_ms, start_offset, end_offset)`` for bounds known valid (an
    int ``start_ms`` or ``start_offset``), without the constructor's overhead."""
    ref: Any = _new(WindowRefSlots)
    ref.start_ms = start_ms
    ref.end_ms = end_ms
    ref.start_offset = start_offset
    ref.end_offset = end_offset
    ref.__class__ = WindowRef
    return cast(WindowRef, ref)


def emission(
    window: WindowRef, group: Any, row: Mapping[str, Any], reason: str, after_seq: int | None,
    wall_ms: int, partial: bool,
) -> Emission:
    """``Emission(window, group, row, reason, after_seq, wall_ms, partial)``, built faster."""
    out: Any = _new(EmissionSlots)
    out.window = window
    out.group = group
    out.row = row
    out.reason = reason
    out.after_seq = after_seq
    out.wall_ms = wall_ms
    out.partial = partial
    out.type = "emit"
    out.__class__ = Emission
    return cast(Emission, out)


def drop(seq: int, reason: str, windows: tuple[WindowRef, ...], message: str, group: Any) -> Drop:
    """``Drop(seq, reason, windows, message, group)``, built faster."""
    out: Any = _new(DropSlots)
    out.seq = seq
    out.reason = reason
    out.windows = windows
    out.message = message
    out.group = group
    out.type = "drop"
    out.__class__ = Drop
    return cast(Drop, out)


class Chunk:
    """Up to :data:`CHUNK` consecutive items of a stream. Of a list or tuple it is a range
    (:meth:`iterate` walks it in place, :meth:`items` copies it); of another iterable, a
    list. :meth:`release` drops the items: a list of events alive across garbage
    collections costs a visit per event each time, so a consumer releases a chunk before
    its outputs are consumed."""

    __slots__ = ("_items", "source", "start", "stop")

    def __init__(self, source: Sequence[Item] | None, start: int, stop: int, items: list[Item] | None) -> None:
        self.source = source
        self.start = start
        self.stop = stop
        self._items = items

    def __len__(self) -> int:
        return self.stop - self.start

    def iterate(self) -> Iterator[Item]:
        """The items in order, without copying them."""
        if self._items is not None:
            return iter(self._items)
        assert self.source is not None
        iterator = iter(self.source)
        iterator.__setstate__(self.start)  # type: ignore[attr-defined]
        return islice(iterator, self.stop - self.start)

    def at(self, position: int) -> Item:
        """The item at ``position`` in the chunk."""
        if self._items is not None:
            return self._items[position]
        assert self.source is not None
        return self.source[self.start + position]

    def items(self) -> list[Item]:
        """The items as a list."""
        if self._items is None:
            assert self.source is not None
            self._items = list(self.source[self.start:self.stop])
        return self._items

    def release(self) -> None:
        self.source = None
        if self._items is not None:
            del self._items[:]


def chunks(items: Iterable[Item], size: int = CHUNK) -> Iterator[Chunk]:
    """The stream in chunks of up to ``size`` items, in order."""
    if type(items) is list or type(items) is tuple:
        for start in range(0, len(items), size):
            yield Chunk(items, start, min(start + size, len(items)), None)
        return
    iterator = iter(items)
    start = 0
    while True:
        chunk = list(islice(iterator, size))
        if not chunk:
            return
        yield Chunk(None, start, start + len(chunk), chunk)
        start += len(chunk)
        chunk = []


def event_runs(chunk: list[Item]) -> list[tuple[int, int, bool]]:
    """``(start, stop, plain)`` runs covering the chunk in order: ``plain`` runs hold only
    :class:`Event` items, the others one item each."""
    types = list(map(type, chunk))
    if types.count(Event) == len(chunk):
        return [(0, len(chunk), True)]
    runs = []
    start = 0
    for position, kind in enumerate(types):
        if kind is not Event:
            if position > start:
                runs.append((start, position, True))
            runs.append((position, position + 1, False))
            start = position + 1
    if start < len(chunk):
        runs.append((start, len(chunk), True))
    return runs


def seqs_follow(events: Sequence[Event], next_seq: int) -> bool:
    """True when the events' seqs are exactly ``next_seq, next_seq + 1, ...``."""
    n = len(events)
    if events[0].seq != next_seq or events[-1].seq != next_seq + n - 1:
        return False
    try:
        seqs = np.fromiter(map(_SEQ, events), dtype=np.int64, count=n)
    except OverflowError:
        return False
    return n == 1 or bool((seqs[1:] > seqs[:-1]).all())  # increasing from first to last: +1 each


def arrivals(events: Sequence[Event], wall_ms: int) -> tuple[bool, list[int] | None]:
    """``(usable, walls)``: the wall clock at each event (None: no event carries ``at_ms``,
    the clock stays at ``wall_ms``); not usable when some events carry ``at_ms`` and others
    not, or the arrival times go back (the per-event loop reports that)."""
    ats = list(map(_AT, events))
    missing = ats.count(None)
    if missing == len(ats):
        return True, None
    if missing or ats[0] < wall_ms:
        return False, None
    try:
        array = np.array(ats, dtype=np.int64)
    except OverflowError:
        return False, None
    if len(ats) > 1 and bool((array[1:] < array[:-1]).any()):
        return False, None
    return True, ats


@lru_cache(maxsize=8)
def _uint16s(n: int) -> struct.Struct:
    return struct.Struct(f"={n}H")


def int_array(values: list[int]) -> npt.NDArray[np.intp]:
    """``values`` as an array: small non-negative ints (key codes below 65,536, the common
    case) are packed by :mod:`struct` in one C call, about twice as fast as
    ``np.fromiter``."""
    try:
        packed = _uint16s(len(values)).pack(*values)
    except struct.error:  # a value out of range
        return np.fromiter(values, dtype=np.intp, count=len(values))
    return np.frombuffer(packed, dtype=np.uint16).astype(np.intp)


class _NotPlain(Exception):
    """Raised inside a one-pass comprehension at the first item it cannot take."""


def _not_plain() -> Any:
    raise _NotPlain


def plain_payloads(items: Iterable[Item], next_seq: int) -> list[Mapping[str, Any]] | None:
    """The items' payloads in one pass, when every item is a plain :class:`Event`
    numbered on from ``next_seq`` without ``at_ms``; else None (at the first other item).
    ``e.__class__ is Event`` (a few % faster than ``type(e)`` here; ``isinstance``, as the
    reference tests items, reads ``__class__`` too): a subclass's instance is not plain,
    the per-event loop takes it."""
    event = Event
    try:
        return [
            e.payload if e.__class__ is event and e.seq == i and e.at_ms is None else _not_plain()
            for i, e in enumerate(items, next_seq)
        ]
    except _NotPlain:
        return None


def plain_fields(items: Iterable[Item], next_seq: int, field: str, other: str) -> tuple[list[Any], list[Any]] | None:
    """``(values of field, values of other)`` of the items' payloads in one pass, when every
    item is a plain :class:`Event` numbered on from ``next_seq`` without ``at_ms`` and every
    payload has both fields; else None. One pass reads each event and its payload once,
    while in cache: on a large stream faster than a pass for the payloads and one per field."""
    event = Event
    others: list[Any] = []
    add = others.append
    try:
        values = [
            p[field]
            if e.__class__ is event and e.seq == i and e.at_ms is None and add((p := e.payload)[other]) is None
            else _not_plain()
            for i, e in enumerate(items, next_seq)
        ]
    except (KeyError, _NotPlain):
        return None
    return values, others


class KeyTable:
    """Codes 0, 1, 2, ... for group lookup keys (the field's value, or ``()`` with no group
    fields) in first-seen order, and the per-key object ``new(lookup)`` made for each."""

    __slots__ = ("_table", "code_of", "field", "new", "objects")

    def __init__(self, field: str | None, new: Callable[[Any], Any]) -> None:
        self.field = field
        self.new = new
        self.code_of: dict[Any, int] = {}
        self.objects: list[Any] = []
        self._table: npt.NDArray[np.intp] | None = None  # code by small int key, -1: none (built on first use, kept by add)

    def small_int_codes(self, raw: list[Any]) -> npt.NDArray[np.intp] | None:
        """The codes of known keys ``raw`` that all pack as ints 0..65,535 (one
        :mod:`struct` call, then a table lookup in numpy), else None. Packing takes what
        has ``__index__`` (int, bool, numpy ints), whose dict lookup finds the same key as
        its int value (equal and equal hashes); a value the table lacks (a new key, or a
        key first seen as another type, such as ``1.0``) gives None."""
        try:
            packed = np.frombuffer(_uint16s(len(raw)).pack(*raw), dtype=np.uint16)
        except struct.error:  # not all small non-negative ints
            return None
        table = self._table
        if table is None:
            table = self._table = np.full(65_536, -1, dtype=np.intp)
            for key, code in self.code_of.items():
                if isinstance(key, int) and 0 <= key < 65_536:
                    table[int(key)] = code  # int(): a bool index would be a mask
        codes = table.take(packed)
        if bool((codes < 0).any()):
            return None
        return codes

    def add(self, lookup: Any, obj: Any) -> None:
        """Register a new key (code: the next one), also in the small int table if built."""
        code = len(self.objects)
        self.code_of[lookup] = code
        self.objects.append(obj)
        table = self._table
        if table is not None and isinstance(lookup, int) and 0 <= lookup < 65_536:
            table[int(lookup)] = code

    def plain_codes(
        self, items: Iterable[Item], next_seq: int, also: tuple[str, list[Any]] | None = None
    ) -> npt.NDArray[np.intp] | None:
        """Each item's key code in one pass, when every item is a plain :class:`Event`
        numbered on from ``next_seq``, without ``at_ms``, its key seen before; else None.
        ``also=(field, values)`` appends each payload's ``field`` to ``values`` on the way."""
        code_of = self.code_of
        event = Event
        field = self.field
        try:
            if also is not None:
                other, values = also
                add = values.append
                if field is None:
                    found = [
                        0 if e.__class__ is event and e.seq == i and e.at_ms is None and add(e.payload[other]) is None
                        else _not_plain()
                        for i, e in enumerate(items, next_seq)
                    ]
                else:
                    found = [
                        code_of[p[field]]
                        if e.__class__ is event and e.seq == i and e.at_ms is None and add((p := e.payload)[other]) is None
                        else _not_plain()
                        for i, e in enumerate(items, next_seq)
                    ]
            elif field is None:
                found = [
                    0 if e.__class__ is event and e.seq == i and e.at_ms is None else _not_plain()
                    for i, e in enumerate(items, next_seq)
                ]
            else:
                found = [
                    e.payload[field] if e.__class__ is event and e.seq == i and e.at_ms is None else _not_plain()
                    for i, e in enumerate(items, next_seq)
                ]
                small = self.small_int_codes(found)  # key values read, codes looked up in bulk
                return small if small is not None else int_array([code_of[k] for k in found])
            codes = int_array(found)
            if field is None:
                codes += code_of[()]
        except (KeyError, TypeError, _NotPlain):  # a new key, no key or other field, an unhashable key
            return None
        return codes

    def value_codes(self, raw: list[Any]) -> npt.NDArray[np.intp] | None:
        """The code of each key value in ``raw`` (the field's values), creating new keys in
        first-seen order; None when a key is unhashable."""
        small = self.small_int_codes(raw)
        if small is not None:
            return small
        code_of = self.code_of
        try:
            return int_array([code_of[k] for k in raw])
        except (KeyError, TypeError):
            pass
        if not self._add_fresh(raw):
            return None
        return int_array([code_of[k] for k in raw])

    def payload_codes(self, payloads: list[Mapping[str, Any]]) -> npt.NDArray[np.intp] | None:
        """Each payload's key code, creating new keys in first-seen order; None when a
        key is unhashable."""
        field = self.field
        code_of = self.code_of
        if field is None:
            if () not in code_of:
                self.add((), self.new(()))
            return np.full(len(payloads), code_of[()], dtype=np.intp)
        try:
            return np.fromiter([code_of[p[field]] for p in payloads], dtype=np.intp, count=len(payloads))
        except (KeyError, TypeError):
            pass
        raw = [p.get(field) for p in payloads]
        if not self._add_fresh(raw):
            return None
        return np.fromiter([code_of[k] for k in raw], dtype=np.intp, count=len(raw))

    def _add_fresh(self, raw: list[Any]) -> bool:
        """Codes for the key values in ``raw`` not coded yet, in first-seen order; False
        (nothing added) when a key is unhashable."""
        code_of = self.code_of
        try:
            fresh = [k for k in dict.fromkeys(raw) if k not in code_of]
        except TypeError:
            return False
        for lookup in fresh:
            self.add(lookup, self.new(lookup))
        return True

    def codes(self, events: Sequence[Event]) -> npt.NDArray[np.intp] | None:
        """Each event's key code, creating new keys in first-seen order; None when a
        key is unhashable (the per-event loop keys those)."""
        field = self.field
        n = len(events)
        if field is None:
            if () not in self.code_of:
                self.add((), self.new(()))
            return np.full(n, self.code_of[()], dtype=np.intp)
        raw = [e.payload.get(field) for e in events]
        try:
            fresh = [k for k in dict.fromkeys(raw) if k not in self.code_of]
        except TypeError:
            return None
        for lookup in fresh:
            self.add(lookup, self.new(lookup))
        code_of = self.code_of
        return np.fromiter([code_of[k] for k in raw], dtype=np.intp, count=n)


def ranks_within(codes: npt.NDArray[np.intp], groups: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """``(order, rank, counts)``: the positions sorted stably by code, each sorted
    position's rank among its code's events (0, 1, ...), and the events per code
    (``groups``: one more than the largest code)."""
    small = codes.astype(np.uint16) if groups <= 65_536 else codes  # radix sort
    order = np.argsort(small, kind="stable")
    counts = np.bincount(codes, minlength=groups)
    starts = np.cumsum(counts) - counts
    rank = np.arange(len(codes), dtype=np.intp) - starts[codes[order]]
    return order, rank, counts
