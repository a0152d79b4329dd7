"""Hypothesis strategies for the engine tests: default-profile queries of one window kind and
streams whose payloads carry every JSON type where the engine must read them as Python does
(group keys, event times, aggregated values), plus how a harness run is split (slices,
snapshot points)."""

from __future__ import annotations

import functools
import math
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from windtunnel.oracle.model.spec import (
    NOW,
    Aggregation,
    CountWindows,
    FixedWindows,
    Query,
    SessionWindows,
)
from windtunnel.oracle.model.stream import Advance, Event, Item

KEY_VALUES: tuple[Any, ...] = (
    "a", "b", "é", 1, 1.0, True, 0, -0.0, False, None, 2**70, 2.5, "1",
    [1, "x"], {"k": 1, "j": [None]}, '\x00json:[1, "x"]', 2**70 * 1.0,
)
"""Group key values: Python finds 1, 1.0 and True one key (and 0, -0.0, False), a list one
key with its canonical JSON string."""

AGG_VALUES: tuple[Any, ...] = (
    1, 2, 7, -3, 0, 2**63 - 1, 2**63, -(2**64), 2**100, 0.1, 0.2, 1e16, -0.0, 1.5, 2.5e-7,
    math.nan, math.inf, True, False, None, "s", "t", [1], {"a": 1}, 3,
)
"""Aggregated values: ints past 64 bits, floats (NaN, infinity, -0.0), bools, strings, lists."""

AGGREGATIONS: tuple[tuple[str, str, str | None], ...] = (
    ("n", "count", None), ("c", "count", "v"), ("s", "sum", "v"), ("m", "avg", "v"),
    ("lo", "min", "v"), ("hi", "max", "v"), ("d", "distinct", "v"), ("dc", "count_distinct", "v"),
    ("all", "collect", "v"), ("f", "first", "v"), ("l", "last", "v"), ("ws", "window_start", None),
    ("we", "window_end", None), ("sw", "sum", "w.z"), ("mw", "avg", "w.z"),
)


@functools.cache
def aggregate_blocks() -> st.SearchStrategy[tuple[tuple[Aggregation, ...] | None, tuple[str, ...]]]:
    """(aggregate, aggregate_by) pairs: pass-through (None) or up to five aggregations,
    sometimes split by ``b``. Shrinks towards a lone ``count()`` without aggregate_by."""
    chosen = st.lists(st.sampled_from(AGGREGATIONS), min_size=1, max_size=5, unique_by=lambda a: a[0])
    block = chosen.map(lambda items: tuple(Aggregation(*item) for item in items))
    return st.one_of(
        st.tuples(block, st.just(())),
        st.tuples(st.none(), st.just(())),
        st.tuples(block, st.just(("b",))),
    )


GROUPINGS = ((), ("k",), ("k", "g.h"))


@functools.cache
def engine_queries(*, kind: str) -> st.SearchStrategy[Query]:
    """Default-profile queries of window ``kind`` (fixed, session, count). Shrinks towards
    large windows, no tolerance, no idle timeout, event time on ``ts``, ungrouped, count()."""

    @st.composite
    def build(draw: st.DrawFn) -> Query:
        on = draw(st.sampled_from(("ts", "t.x", NOW)))
        idle = draw(st.none() | st.integers(1, 80))
        if kind == "fixed":
            size = draw(st.integers(1, 40).map(lambda k: 41 - k))
            every = draw(st.none() | st.integers(1, size))
            window: Any = FixedWindows(
                size, on=on, every_ms=every, tolerance_ms=draw(st.integers(0, 20)), idle_timeout_ms=idle
            )
        elif kind == "session":
            window = SessionWindows(
                draw(st.integers(1, 30).map(lambda k: 31 - k)), on=on,
                max_duration_ms=draw(st.none() | st.integers(1, 60)),
                max_events=draw(st.none() | st.integers(1, 5)),
                tolerance_ms=draw(st.integers(0, 20)), idle_timeout_ms=idle,
            )
        else:
            count = draw(st.integers(1, 6).map(lambda k: 7 - k))
            window = CountWindows(count, every=draw(st.none() | st.integers(1, count)))
        aggregate, by = draw(aggregate_blocks())
        return Query(window, draw(st.sampled_from(GROUPINGS)), aggregate, by)

    return build()


class Digits:
    """Choices read from one drawn integer, digit by digit (mixed radix): one Hypothesis draw
    per event keeps generation fast, and shrinking the integer towards 0 makes every choice
    its first (simplest) option."""

    def __init__(self, number: int) -> None:
        self.number = number

    def take(self, n: int) -> int:
        """The next choice among ``n`` options, 0 first."""
        self.number, digit = divmod(self.number, n)
        return digit

    def pick(self, options: tuple[Any, ...]) -> Any:
        return options[self.take(len(options))]


NOT_TIMES: tuple[Any, ...] = (None, True, "x", math.nan, math.inf, [1], {"t": 1}, "2020-13-01T00:00Z")
ZONES = ("Z", "+00:00", "-01:30", "z", "+0100", "")


def _time_value(choices: Digits, t_ms: int, unit_ms: int) -> Any:
    """An event-time value for ``t_ms``: mostly the number in the time unit, sometimes a float,
    an ISO string (with or without a zone), null, or something that is not a time."""
    choice = choices.take(40)
    if choice < 28:
        return t_ms // unit_ms if unit_ms > 1 else t_ms
    if choice < 30:
        return t_ms / unit_ms + 0.25
    if choice < 33:
        zone = choices.pick(ZONES)
        shift = {"-01:30": timedelta(hours=-1, minutes=-30), "+0100": timedelta(hours=1)}.get(zone, timedelta())
        moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=t_ms) + shift
        text = moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{moment.microsecond // 1000:03d}" + zone
        return " " + text if choices.take(2) else text
    return choices.pick(NOT_TIMES)


def _put(payload: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node = payload
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value


def stream_of(query: Query, numbers: list[int], *, start: int = 0, unit_ms: int = 1) -> tuple[Item, ...]:
    """The stream :func:`engine_streams` decodes from one integer per event (event times from
    ``start``)."""
    window = query.window
    span = getattr(window, "size_ms", None) or getattr(window, "gap_ms", None) or 10
    back = 2 * span + getattr(window, "tolerance_ms", 0)
    on = getattr(window, "on", NOW)
    items: list[Item] = []
    t = start
    wall = 0
    for seq, number in enumerate(numbers):
        c = Digits(number)
        t += c.take(span + 1)
        event_ms = t - (c.take(back + 1) if c.take(2) else 0)
        payload: dict[str, Any] = {}
        if on != NOW and c.take(30) < 29:
            _put(payload, on, _time_value(c, event_ms * unit_ms, unit_ms))
        wide = c.take(2)
        for path in query.group_by:
            _put(payload, path, c.pick(KEY_VALUES if wide else KEY_VALUES[:3]))
        _put(payload, "v", c.pick(AGG_VALUES))
        _put(payload, "w.z", c.pick(AGG_VALUES[:6]))
        _put(payload, "b", c.pick(("x", "y", 1, None)))
        if c.take(6) == 5:
            wall += 1 + c.take(120)
            items.append(Advance(wall))
        wall += c.pick((0, 0, 1, 3, 10))
        items.append(Event(seq, payload, None if c.take(5) == 4 else wall))
    return tuple(items)


def engine_streams(query: Query, *, max_events: int = 25, unit_ms: int = 1) -> st.SearchStrategy[tuple[Item, ...]]:
    """Streams for ``query`` (:func:`stream_of`): events with disorder (some late), idle gaps
    on the wall clock, keys, times and values of every JSON type. Shrinks towards few in-order
    events on the first key, arriving at once."""
    # the length first (uniform): plain lists average a few elements, too few for late events
    numbers = st.integers(0, max_events).flatmap(
        lambda n: st.lists(st.integers(0, 2**62), min_size=n, max_size=n)
    )
    return st.builds(
        lambda start, drawn: stream_of(query, drawn, start=start, unit_ms=unit_ms),
        st.integers(-50, 50), numbers,
    )


@functools.cache
def harness_plans(*, max_items: int = 30) -> st.SearchStrategy[tuple[int, tuple[tuple[int, str], ...]]]:
    """(slices, snapshot points) of a harness run: 1 to 4 slices and full, incremental or
    key-by-key snapshots before some items. Shrinks towards one slice and no snapshot."""
    points = st.lists(st.tuples(st.integers(0, max_items), st.sampled_from(("update", "full", "parts"))), max_size=4)
    return st.tuples(st.integers(1, 4), points.map(lambda p: tuple(sorted(p))))
