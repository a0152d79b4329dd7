"""The engine's values against Python itself: JSON read as ``json.loads`` reads it and written
as ``json.dumps(..., separators=(", ", ": "))`` writes it (floats as ``repr``), ``repr`` for
messages, event times as ``timeparse.timestamp_ms`` reads them, group keys equal where
Python's ``==`` says so, exact int/float order and int true division."""

from __future__ import annotations

import json
import math
import random
import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.oracle.model.fields import hashable
from windtunnel.oracle.model.timeparse import NotATime, timestamp_ms

from .harness import HarnessProcess

pytestmark = pytest.mark.process  # the Java engine in a JVM

def dumps(value: Any) -> str:
    return json.dumps(value, separators=(", ", ": "), default=str)


def engine_dumps(harness: HarnessProcess, text: str) -> str:
    answer = harness.ask({"dumps": text})
    assert "text" in answer, answer
    return str(answer["text"])


def doubles(bits: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", bits))[0])


EDGE_FLOATS = [
    0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
    1e16, 1e15, 9999999999999998.0, 0.0001, 0.00001, 1e-05, 123456.789, 1e22, 1e23, 2**53, 2**53 + 2.0,
    0.1, 0.2, 0.30000000000000004, 1 / 3, 2 / 3, 100.0, 1e100, 9007199254740993.0, 4.35, 2.5e-7,
    math.nan, math.inf, -math.inf,
]


def test_floats_are_written_as_python_writes_them(harness: HarnessProcess) -> None:
    rng = random.Random(21)
    values = EDGE_FLOATS + [doubles(rng.getrandbits(64)) for _ in range(100_000)]
    values += [rng.uniform(-1e6, 1e6) for _ in range(20_000)]
    values += [float(rng.randint(-(10**18), 10**18)) for _ in range(5_000)]
    values += [rng.randint(1, 10**6) / 10 ** rng.randint(0, 12) for _ in range(20_000)]
    text = dumps(values)
    assert engine_dumps(harness, text) == text


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=50))
def test_any_floats_are_written_as_python_writes_them(harness: HarnessProcess, values: list[float]) -> None:
    text = dumps(values)
    assert engine_dumps(harness, text) == text


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(-(2**200), 2**200)
    | st.floats(allow_nan=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_json_values_read_and_write_as_python_does(harness: HarnessProcess, value: Any) -> None:
    text = json.dumps(value)  # ASCII with escapes, as json.dumps writes by default
    assert engine_dumps(harness, text) == dumps(json.loads(text))


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "b": 2, "a": 3}',
        ' {"x":[1,2.50,-0,-0.0,1E400,-1e400,1e-400, 1.5e+3]} ',
        '"\\u00e9\\ud83d\\ude00\\ud800 \\/\\b\\f\\n\\r\\t\\"\\\\"',
        "[NaN, Infinity, -Infinity, true, false, null]",
        "123456789012345678901234567890123",
        "-9223372036854775809",
        '{"": {"": []}}',
    ],
)
def test_json_texts_read_as_python_reads_them(harness: HarnessProcess, text: str) -> None:
    assert engine_dumps(harness, text) == dumps(json.loads(text))


@pytest.mark.parametrize("text", ["[1,]", "01", "1.", "{'a': 1}", '"\x01"', "[1] 2", "nan", "-", '"\\x"'])
def test_json_texts_python_refuses_are_refused(harness: HarnessProcess, text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    assert "error" in harness.ask({"dumps": text})


SAME_UNICODE = st.characters(max_codepoint=0x7FF, exclude_characters="\u061d") | st.sampled_from(
    ["\ud800", "\ue000", "\u2028", "\u3000", "\ufeff", "\u4e2d", "\uac00", "😀", "\U0010ffff", "\U000e0001"]
)
"""Characters whose printability Java 17's Unicode tables (13.0) and Python's agree on (repr
escapes the non-printable ones): ones assigned in newer Unicode versions are left out, among
them U+061D (ARABIC END OF TEXT MARK, Unicode 14: printable to Python 3.11, unassigned to Java 17)."""

REPR_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(SAME_UNICODE),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(SAME_UNICODE, max_size=4), inner, max_size=3),
    max_leaves=8,
)


def test_repr_escapes_as_python_for_every_character_up_to_u07ff(harness: HarnessProcess) -> None:
    text = "".join(chr(c) for c in range(0x800) if c != 0x61D)
    assert harness.ask({"repr": json.dumps(text)}) == {"text": repr(text)}


@settings(max_examples=300, deadline=None)
@given(REPR_VALUES)
def test_repr_is_pythons(harness: HarnessProcess, value: Any) -> None:
    value = json.loads(json.dumps(value))
    assert harness.ask({"repr": json.dumps(value)}) == {"text": repr(value)}


def iso_texts() -> st.SearchStrategy[str]:
    """ISO-8601-like texts: the date, separator, time, fraction and zone forms
    ``datetime.fromisoformat`` knows, with out-of-range fields, stray characters and
    whitespace. Shrinks towards ``0000-00-00``."""
    digits = st.integers(0, 10**9).map(str)

    def two(n: int) -> str:
        return f"{n % 100:02d}"

    dates = st.tuples(st.integers(0, 9999), st.integers(0, 14), st.integers(0, 33), st.integers(0, 8)).flatmap(
        lambda p: st.sampled_from([
            f"{p[0]:04d}-{two(p[1])}-{two(p[2])}", f"{p[0]:04d}{two(p[1])}{two(p[2])}",
            f"{p[0]:04d}-W{two(p[2] % 55)}", f"{p[0]:04d}-W{two(p[2] % 55)}-{p[3]}",
            f"{p[0]:04d}W{two(p[2] % 55)}", f"{p[0]:04d}W{two(p[2] % 55)}{p[3]}",
        ])
    )
    times = st.tuples(st.integers(0, 25), st.integers(0, 61), st.integers(0, 61), digits).flatmap(
        lambda p: st.sampled_from([
            two(p[0]), f"{two(p[0])}:{two(p[1])}", f"{two(p[0])}{two(p[1])}",
            f"{two(p[0])}:{two(p[1])}:{two(p[2])}", f"{two(p[0])}{two(p[1])}{two(p[2])}",
            f"{two(p[0])}:{two(p[1])}:{two(p[2])}.{p[3]}", f"{two(p[0])}:{two(p[1])}:{two(p[2])},{p[3][:3]}",
            f"{two(p[0])}:{two(p[1])}.{p[3][:2]}", f"{two(p[0])}:{two(p[1])}:{two(p[2])}:{p[3][:3]}",
        ])
    )
    zones = st.tuples(st.integers(0, 30), st.integers(0, 99), st.integers(0, 99), digits).flatmap(
        lambda p: st.sampled_from([
            "", "Z", "z", f"+{two(p[0])}", f"-{two(p[0])}{two(p[1])}", f"+{two(p[0])}:{two(p[1])}",
            f"-{two(p[0])}:{two(p[1])}:{two(p[2])}", f"+{two(p[0])}:{two(p[1])}:{two(p[2])}.{p[3][:7]}",
            "+", "Zz", "+1", f"-{two(p[0])}:{two(p[1])}:{two(p[2])}.{p[3][:2]}",
        ])
    )
    seps = st.sampled_from(["T", " ", "t", "é", "\ud800", "5", "-", "\u2028", "😀", "\x00"])
    texts = st.tuples(dates, seps, times, zones).map("".join) | dates
    noise = st.tuples(st.integers(0, 40), st.sampled_from(["", " ", "x", "\x00", "1", "\t", "\u3000", "Z"]))

    def mutate(text: str, edit: tuple[int, str]) -> str:
        at, piece = edit
        at = min(at, len(text))
        return text[:at] + piece + text[at:]

    return st.tuples(texts, noise).map(lambda t: mutate(*t)) | texts


OUT_OF_RANGE = {"not_a_time": "the time is beyond the engine's range of +-2**61 ms"}


def python_time(value: Any, unit_ms: int) -> dict[str, Any]:
    """What the engine answers for ``value``: timestamp_ms's ms or message; where the oracle
    goes beyond 2**61 ms (or overflows a float), the engine's own out-of-range message."""
    try:
        ms = timestamp_ms(value, unit_ms)
    except NotATime as why:
        return {"not_a_time": str(why)}
    except OverflowError:  # the oracle fails on a float whose ms overflow (reported)
        return OUT_OF_RANGE
    if ms is not None and abs(ms) > 2**61:
        return OUT_OF_RANGE
    return {"ms": ms}


@settings(max_examples=1500, deadline=None)
@given(iso_texts())
def test_iso_times_read_as_timestamp_ms_reads_them(harness: HarnessProcess, text: str) -> None:
    assert harness.ask({"time": json.dumps(text), "unit": 1}) == python_time(text, 1)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.integers(-(2**55), 2**55), st.floats(-1e15, 1e15), st.floats(allow_nan=True), st.booleans(),
        st.text(max_size=12), st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    ),
    st.sampled_from([1, 1000, 60_000]),
)
def test_times_read_as_timestamp_ms_reads_them(harness: HarnessProcess, value: Any, unit_ms: int) -> None:
    assert harness.ask({"time": json.dumps(value), "unit": unit_ms}) == python_time(value, unit_ms)


KEYS = [1, 1.0, True, 0, -0.0, False, None, "1", "a", [1], [1.0], [True], {"a": 1}, {"a": 1.0},
        2**64, float(2**64), 2**64 + 1, 1.5, math.nan, math.inf, '\x00json:[1]', [math.nan], -1, -1.0]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(KEYS), min_size=1, max_size=12))
def test_group_keys_are_equal_where_python_finds_them_equal(harness: HarnessProcess, values: list[Any]) -> None:
    values = json.loads(json.dumps(values))  # one NaN object, as json.loads gives it
    classes: dict[Any, int] = {}
    expected = [classes.setdefault(hashable(v), len(classes)) for v in values]
    assert harness.ask({"keys": json.dumps(values)}) == {"classes": expected}


@settings(max_examples=300, deadline=None)
@given(st.integers(-(2**300), 2**300) | st.integers(-(2**70), 2**70), st.integers(1, 2**62))
def test_int_true_division_is_pythons(harness: HarnessProcess, total: int, count: int) -> None:
    assert harness.ask({"divide": [str(total), count]}) == {"text": repr(total / count)}


NUMBERS = st.integers(-(2**70), 2**70) | st.floats(allow_nan=True) | st.sampled_from(
    [2**53, 2**53 + 1, float(2**53), 2**63, float(2**63), -(2**63), 9007199254740993]
)


@settings(max_examples=300, deadline=None)
@given(NUMBERS, NUMBERS)
def test_int_and_float_order_is_pythons(harness: HarnessProcess, a: Any, b: Any) -> None:
    expected = -1 if a < b else 1 if a > b else 0 if a == b else 2
    assert harness.ask({"compare": json.dumps([a, b])}) == {"order": expected}
