"""Column helpers of the fast paths: a stream in chunks, the payload fields of plain events
as columns, group keys as integer codes, and output values built without their
constructors' overhead.

:func:`emission` builds an :class:`Emission` equal to the one its constructor builds: it
skips the frozen dataclass's ``object.__setattr__`` calls by filling a twin class of the
same slots and retyping it (``twin.__class__ = Emission``); tests/oracle/fast/test_columns.py
checks the equality.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from itertools import islice
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from windtunnel.oracle.model.results import Drop, Emission, WindowRef
from windtunnel.oracle.model.stream import Event, Item

CHUNK = 65_536
"""Items per chunk: bounds the columns' memory."""

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
    window: WindowRef, group: Any, row: dict[str, Any], reason: str, after_seq: int | None,
    wall_ms: int, partial: bool,
) -> Emission:
    """``Emission(window, group, row, reason, after_seq, wall_ms, partial)``, without the
    constructor's overhead."""
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


def late_drop(seq: int, window: WindowRef, message: str, group: Any) -> Drop:
    """``Drop(seq, "late", (window,), message, group)``, without the constructor's overhead."""
    out: Any = _new(DropSlots)
    out.seq = seq
    out.reason = "late"
    out.windows = (window,)
    out.message = message
    out.group = group
    out.type = "drop"
    out.__class__ = Drop
    return cast(Drop, out)


class Chunk:
    """Up to :data:`CHUNK` consecutive items of a stream. Of a list or tuple it is a range
    (:meth:`iterate` walks it in place, :meth:`items` copies it); of another iterable, a
    list. :meth:`release` drops the items: a list of events alive across garbage
    collections costs a visit per event each time, so a consumer releases a chunk once it
    read the columns it needs."""

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


class _NotPlain(Exception):
    """Raised inside a one-pass comprehension at the first item it cannot take."""


def _not_plain() -> Any:
    raise _NotPlain


def plain_columns(
    iterate: Callable[[], Iterator[Item]], next_seq: int, fields: tuple[str, ...]
) -> list[list[Any]] | None:
    """The values of ``fields`` (up to two plain field names) in the payloads of the items
    ``iterate()`` gives, one list per field (None where a payload lacks it), read in one
    pass (a second when a field is missing somewhere), when every item is a plain
    :class:`Event` numbered on from ``next_seq`` without ``at_ms``; else None.

    ``e.__class__ is Event`` (``isinstance``, as the reference tests items, reads
    ``__class__`` too): a subclass's instance is not plain, the reference takes it. One
    pass reads each event and its payload once, while in cache; it checks
    :class:`~windtunnel.oracle.model.stream.StreamChecker`'s rules for events without
    arrival times (numbered on; the wall clock stays).
    """
    event = Event
    try:
        if not fields:
            for i, e in enumerate(iterate(), next_seq):
                if e.__class__ is not event or e.seq != i or e.at_ms is not None:
                    return None
            return []
        first = fields[0]
        if len(fields) == 1:
            try:
                return [[
                    e.payload[first] if e.__class__ is event and e.seq == i and e.at_ms is None else _not_plain()
                    for i, e in enumerate(iterate(), next_seq)
                ]]
            except KeyError:  # a field missing somewhere: read with get (None), as the reference does
                return [[
                    e.payload.get(first) if e.__class__ is event and e.seq == i and e.at_ms is None else _not_plain()
                    for i, e in enumerate(iterate(), next_seq)
                ]]
        second = fields[1]
        seconds: list[Any] = []
        add = seconds.append
        try:
            firsts = [
                p[first]
                if e.__class__ is event and e.seq == i and e.at_ms is None and add((p := e.payload)[second]) is None
                else _not_plain()
                for i, e in enumerate(iterate(), next_seq)
            ]
        except KeyError:
            seconds.clear()
            firsts = [
                p.get(first)
                if e.__class__ is event and e.seq == i and e.at_ms is None and add((p := e.payload).get(second)) is None
                else _not_plain()
                for i, e in enumerate(iterate(), next_seq)
            ]
        return [firsts, seconds]
    except _NotPlain:
        return None


def event_columns(events: Sequence[Event], fields: tuple[str, ...]) -> list[list[Any]]:
    """The values of ``fields`` in the events' payloads, one list per field (None where a
    payload lacks it)."""
    return [[e.payload.get(field) for e in events] for field in fields]


@lru_cache(maxsize=8)
def _uint16s(n: int) -> struct.Struct:
    return struct.Struct(f"={n}H")


def int_array(values: list[int]) -> npt.NDArray[np.intp]:
    """``values`` as an array: small non-negative ints (key codes below 65,536, the common
    case) are packed by :mod:`struct` in one C call."""
    try:
        packed = _uint16s(len(values)).pack(*values)
    except struct.error:  # a value out of range
        return np.fromiter(values, dtype=np.intp, count=len(values))
    return np.frombuffer(packed, dtype=np.uint16).astype(np.intp)


class KeyTable:
    """Codes 0, 1, 2, ... for group lookup keys (the group field's value, or ``()`` with no
    group field) in first-seen order, and the per-key object ``new(lookup)`` made for each."""

    __slots__ = ("_table", "code_of", "new", "objects")

    def __init__(self, new: Callable[[Any], Any]) -> None:
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

    def value_codes(self, raw: list[Any]) -> npt.NDArray[np.intp] | None:
        """The code of each key value in ``raw`` (the group field's values), creating new
        keys in first-seen order; None (nothing created) when a key is unhashable."""
        small = self.small_int_codes(raw)
        if small is not None:
            return small
        code_of = self.code_of
        try:
            return int_array([code_of[k] for k in raw])
        except (KeyError, TypeError):
            pass
        try:
            fresh = [k for k in dict.fromkeys(raw) if k not in code_of]
        except TypeError:
            return None
        for lookup in fresh:
            self.add(lookup, self.new(lookup))
        return int_array([code_of[k] for k in raw])

    def unit_codes(self, n: int) -> npt.NDArray[np.intp]:
        """``n`` codes of the one key ``()`` (no group field), created when new."""
        if () not in self.code_of:
            self.add((), self.new(()))
        return np.full(n, self.code_of[()], dtype=np.intp)
