"""The column helpers of the fast paths (oracle/fast/columns.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from windtunnel.oracle.fast.columns import (
    Chunk,
    KeyTable,
    chunks,
    emission,
    int_array,
    late_drop,
    plain_columns,
    window_ref,
)
from windtunnel.oracle.model.results import Drop, Emission, WindowRef
from windtunnel.oracle.model.stream import End, Event, Item


@pytest.mark.parametrize(
    "bounds", [(0, 5, None, None), (None, None, 3, 6), (-7, -7, None, None), (1, 2, 3, 4)]
)
def test_a_fast_window_ref_equals_the_constructed_one(bounds: tuple[Any, ...]) -> None:
    fast = window_ref(*bounds)
    assert type(fast) is WindowRef and fast == WindowRef(*bounds) and hash(fast) == hash(WindowRef(*bounds))


@pytest.mark.parametrize("partial", [False, True])
@pytest.mark.parametrize("group", [None, "a", [1, 2]])
def test_a_fast_emission_equals_the_constructed_one(partial: bool, group: Any) -> None:
    args = (WindowRef(0, 10), group, {"n": 3}, "close", 7, 12, partial)
    fast = emission(*args)
    slow = Emission(*args)
    assert type(fast) is Emission and fast == slow and fast.to_json() == slow.to_json()
    assert repr(fast) == repr(slow)


@pytest.mark.parametrize("group", [None, "a"])
def test_a_fast_drop_equals_the_constructed_one(group: Any) -> None:
    fast = late_drop(4, WindowRef(3, 3), "event time 3 is late", group)
    slow = Drop(4, "late", (WindowRef(3, 3),), "event time 3 is late", group)
    assert type(fast) is Drop and fast == slow and fast.to_json() == slow.to_json()
    assert repr(fast) == repr(slow)


def test_fast_values_stay_frozen() -> None:
    ref = window_ref(1, 2, None, None)
    with pytest.raises(AttributeError):
        ref.start_ms = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        emission(ref, None, {}, "close", None, 0, False).reason = "x"  # type: ignore[misc]


@pytest.mark.parametrize("size", [1, 2, 3, 10])
@pytest.mark.parametrize("kind", [list, tuple, iter])
def test_chunks_cover_the_stream_in_order(size: int, kind: Any) -> None:
    items: list[Item] = [Event(i, {}) for i in range(7)]
    found: list[Chunk] = list(chunks(kind(items), size))
    assert [len(c) for c in found] == [min(size, 7 - s) for s in range(0, 7, size)]
    assert [i for c in found for i in c.iterate()] == items
    assert [i for c in found for i in c.items()] == items


@pytest.mark.parametrize(
    "values", [[], [0], [3, 1, 2], [0, 65_535], [65_536, 1], [-1, 4], [2**40, 0], [True, 5]],
    ids=["empty", "zero", "small", "uint16 max", "past uint16", "negative", "large", "bool"],
)
def test_int_array_holds_the_values_exactly(values: list[int]) -> None:
    array = int_array(values)
    assert array.dtype == np.intp and array.tolist() == [int(v) for v in values]


@pytest.mark.parametrize(
    ("known", "raw", "expected"),
    [
        ([0, 7, 65_535], [7, 0, 65_535, 7], [1, 0, 2, 1]),
        ([True, 2], [1, True, 2, np.int64(2)], [0, 0, 1, 1]),  # equal ints, one key
        ([True, 0], [0, 1, 0], [1, 0, 1]),  # True is entry 1 of the table, not a mask
        ([1.0], [1], None),  # a key first seen as a float: the dict lookup finds it
        ([0], [0, 1], None),  # a new key
        ([65_536, 0], [65_536, 0], None),  # past uint16
        ([-1, 0], [-1, 0], None),  # negative
        (["a", 0], ["a", 0], None),  # not an int
        ([0], [0.0], None),  # a float value
    ],
    ids=["small ints", "bool and numpy", "bool key", "float key", "new key", "past uint16", "negative", "string", "float value"],
)
def test_small_int_codes_look_up_exactly_the_dict_keys(known: list[Any], raw: list[Any], expected: list[int] | None) -> None:
    """The table lookup gives the dict's codes or None (the caller then asks the dict)."""
    table = KeyTable(lambda lookup: lookup)
    for key in known:
        table.add(key, key)
    codes = table.small_int_codes(raw)
    assert (None if codes is None else codes.tolist()) == expected
    if expected is not None:
        assert codes is not None and codes.dtype == np.intp
        assert expected == [table.code_of[k] for k in raw]


def test_small_int_codes_follow_keys_added_later() -> None:
    table = KeyTable(lambda lookup: lookup)
    table.add(5, 5)
    assert table.small_int_codes([9]) is None
    table.add(9, 9)
    codes = table.small_int_codes([9, 5])
    assert codes is not None and codes.tolist() == [1, 0]
    table.add(True, True)  # after the table was built: entry 1, not a mask
    table.add("a", "a")
    table.add(70_000, 70_000)
    codes = table.small_int_codes([1, 9, True, 5])
    assert codes is not None and codes.tolist() == [2, 1, 2, 0]
    assert table.small_int_codes([4]) is None


@pytest.mark.parametrize(
    ("fields", "items", "expected"),
    [
        (("k", "t"), [Event(3, {"k": 1, "t": 5}), Event(4, {"k": "a", "t": None, "x": 0})], [[1, "a"], [5, None]]),
        (("k", "t"), [Event(3, {"k": 1, "t": 5}), Event(4, {"t": 6})], [[1, None], [5, 6]]),  # no key: None
        (("k", "t"), [Event(3, {"k": 1}), Event(4, {"k": 2, "t": 6})], [[1, 2], [None, 6]]),
        (("t",), [Event(3, {"t": 5}), Event(4, {"k": 1})], [[5, None]]),
        ((), [Event(3, {}), Event(4, {"k": 1})], []),
        (("k", "t"), [Event(3, {"k": 1, "t": 5}), Event(5, {"k": 2, "t": 6})], None),  # a seq skipped
        (("k",), [Event(3, {"k": 1, "t": 5}), Event(4, {"k": 2, "t": 6}, at_ms=9)], None),  # an arrival time
        ((), [Event(3, {"k": 1, "t": 5}), End()], None),  # not an event
    ],
)
def test_plain_columns_read_the_fields_of_plain_events_only(
    fields: tuple[str, ...], items: list[Item], expected: Any
) -> None:
    assert plain_columns(lambda: iter(items), 3, fields) == expected


def test_unit_codes_make_the_one_key_once() -> None:
    table = KeyTable(lambda lookup: ("key", lookup))
    assert table.unit_codes(3).tolist() == [0, 0, 0]
    assert table.unit_codes(2).tolist() == [0, 0] and table.objects == [("key", ())]


@pytest.mark.parametrize(
    ("known", "raw", "keys"),
    [
        ([2], [4, 2, 4, 7], [2, 4, 7]),  # small ints, one known before
        ([], ["b", 2, "a", "b", 70_000], ["b", 2, "a", 70_000]),
        ([], [True, 1.0, 1, -3, None], [True, -3, None]),  # True, 1.0 and 1 are one key
    ],
)
def test_value_codes_number_new_keys_in_first_seen_order(known: list[Any], raw: list[Any], keys: list[Any]) -> None:
    table = KeyTable(lambda lookup: ("key", lookup))
    for key in known:
        table.add(key, ("key", key))
    codes = table.value_codes(raw)
    assert codes is not None and list(table.code_of) == keys
    # each value's code names the key equal to it that was seen first
    assert [table.objects[c] for c in codes.tolist()] == [("key", keys[keys.index(v)]) for v in raw]


def test_value_codes_refuse_an_unhashable_key() -> None:
    table = KeyTable(lambda lookup: lookup)
    assert table.value_codes([1, [2]]) is None
