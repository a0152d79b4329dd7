"""Aggregation accumulators, one per output column per window.

Null handling (documented in docs/semantics.md): ``count()`` counts events;
``count(x)`` counts non-null ``x``; every other function ignores null values and,
for ``sum``/``min``/``max``/``avg``, values that are not numbers (booleans included).
A function that saw no usable value yields null; ``distinct``/``collect`` yield ``[]``.
``distinct`` keeps first-seen order; ``first``/``last`` are by delivery order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from windtunnel.oracle.model.fields import Getter, getter, hashable
from windtunnel.oracle.model.spec import Aggregation


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class Column:
    """Accumulates one aggregation for one window (or one ``aggregate_by`` row)."""

    __slots__ = ("count", "function", "seen", "state")

    def __init__(self, function: str) -> None:
        self.function = function
        self.state: Any = None
        self.count = 0
        self.seen: set[Any] | None = None

    def add(self, value: Any) -> None:
        f = self.function
        if f == "count_events":
            self.count += 1
            return
        if value is None:
            return
        if f == "count":
            self.count += 1
            return
        if f in ("sum", "avg"):
            if _is_number(value):
                self.state = value if self.state is None else self.state + value
                self.count += 1
        elif f == "min":
            if _is_number(value) and (self.state is None or value < self.state):
                self.state = value
        elif f == "max":
            if _is_number(value) and (self.state is None or value > self.state):
                self.state = value
        elif f in ("distinct", "count_distinct"):
            if self.seen is None:
                self.seen = set()
                self.state = []
            key = hashable(value)
            if key not in self.seen:
                self.seen.add(key)
                self.state.append(value)
        elif f == "collect":
            if self.state is None:
                self.state = []
            self.state.append(value)
        elif f == "first":
            if self.count == 0:
                self.state = value
                self.count = 1
        elif f == "last":
            self.state = value

    def result(self, start_ms: int | None, end_ms: int | None) -> Any:
        f = self.function
        if f in ("count", "count_events"):
            return self.count
        if f == "avg":
            return None if self.count == 0 else self.state / self.count
        if f == "count_distinct":
            return 0 if self.state is None else len(self.state)
        if f in ("distinct", "collect"):
            return [] if self.state is None else list(self.state)
        if f == "window_start":
            return start_ms
        if f == "window_end":
            return end_ms
        return self.state


class Aggregator:
    """Builds per-window accumulators for a query's aggregate block.

    ``new()`` gives an empty window state; ``add(state, payload)`` folds one event;
    ``rows(state, start_ms, end_ms)`` gives the output rows (one per ``aggregate_by``
    value, in first-seen order; exactly one row when ``aggregate_by`` is empty).
    """

    def __init__(self, aggregations: Sequence[Aggregation], by: Sequence[str] = ()) -> None:
        self.aggregations = tuple(aggregations)
        self.by = tuple(by)
        self._by_getters = [getter(p) for p in self.by]
        count_only = all(
            a.function in ("count", "window_start", "window_end") and a.field is None
            for a in self.aggregations
        )
        self._count_only = count_only and not self.by
        self.count_only = self._count_only
        """True when a window's state is ``[n]`` (only counts and window bounds are asked for)."""
        self._getters: list[Getter | None] = [
            getter(a.field) if a.field else None for a in self.aggregations
        ]

    def new(self) -> Any:
        if self._count_only:
            return [0]
        return {}

    def add(self, state: Any, payload: Mapping[str, Any]) -> None:
        if self._count_only:
            state[0] += 1
            return
        by_values = tuple(g(payload) for g in self._by_getters)
        key = tuple(hashable(v) for v in by_values)
        entry = state.get(key)
        if entry is None:
            entry = state[key] = (by_values, [new_column(a) for a in self.aggregations])
        for column, get in zip(entry[1], self._getters, strict=True):
            column.add(None if get is None else get(payload))

    def rows(self, state: Any, start_ms: int | None, end_ms: int | None) -> list[dict[str, Any]]:
        if self._count_only:
            return [
                {
                    a.name: state[0]
                    if a.function == "count"
                    else (start_ms if a.function == "window_start" else end_ms)
                    for a in self.aggregations
                }
            ]
        rows = []
        for by_values, columns in state.values():
            row: dict[str, Any] = dict(zip(self.by, by_values, strict=True))
            for a, column in zip(self.aggregations, columns, strict=True):
                row[a.name] = column.result(start_ms, end_ms)
            rows.append(row)
        return rows


def new_column(aggregation: Aggregation) -> Column:
    """``count()`` without a field counts events; with a field, its non-null values."""
    if aggregation.function == "count" and aggregation.field is None:
        return Column("count_events")
    return Column(aggregation.function)
