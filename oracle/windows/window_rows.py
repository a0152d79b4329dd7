"""Turning a window's records into emissions, for operators that buffer whole windows.

The kdb, Timeplus and eKuiper operators keep a window's records and emit them at once. With an
``aggregate`` block a window gives its aggregate rows (an empty window gives one row of empty
aggregates: ``count`` 0, others null or ``[]``); without one it gives one emission per record
(``row`` = the payload) and an empty window gives one emission with ``row == {"_empty": true}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from windtunnel.oracle.model.aggregates import Aggregator, Column, new_column
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.results import Emission, Output, WindowRef
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Query

EMPTY_ROW_FLAG = "_empty"
"""Row field marking the one emission of an empty window in pass-through mode."""


class Rows:
    """The rows a query gives for a list of payloads (see the module docstring)."""

    def __init__(self, query: Query) -> None:
        self.aggregator = (
            None if query.aggregate is None else Aggregator(query.aggregate, query.aggregate_by)
        )
        self.query = query

    def rows(
        self, payloads: Sequence[Mapping[str, Any]], start_ms: int | None, end_ms: int | None
    ) -> list[dict[str, Any]]:
        """Output rows of one window holding ``payloads`` (in the given order)."""
        if self.aggregator is None:
            if not payloads:
                return [{EMPTY_ROW_FLAG: True}]
            return [dict(p) for p in payloads]
        state = self.aggregator.new()
        for payload in payloads:
            self.aggregator.add(state, payload)
        rows = self.aggregator.rows(state, start_ms, end_ms)
        if rows:
            return rows
        return [self.empty_row(start_ms, end_ms)]

    def empty_row(self, start_ms: int | None, end_ms: int | None) -> dict[str, Any]:
        """The row of an empty window: every aggregation over no values, ``aggregate_by`` null."""
        assert self.query.aggregate is not None
        row: dict[str, Any] = dict.fromkeys(self.query.aggregate_by)
        for aggregation in self.query.aggregate:
            column: Column = new_column(aggregation)
            row[aggregation.name] = column.result(start_ms, end_ms)
        return row

    def emit(
        self,
        out: list[Output],
        window: WindowRef,
        group: Any,
        payloads: Sequence[Mapping[str, Any]],
        reason: str,
        after_seq: int | None,
        wall_ms: int,
        *,
        partial: bool = False,
    ) -> None:
        """Append the emissions of one window holding ``payloads``."""
        for row in self.rows(payloads, window.start_ms, window.end_ms):
            out.append(Emission(window, group, row, reason, after_seq, wall_ms, partial))


def require_rules(
    rules: Rules, kind: str, otherwise: str = "another profile", **allowed: tuple[str, ...]
) -> None:
    """Raise InvalidSpec when a rule has a value outside ``allowed[name]``: the values the
    operator for ``kind`` implements (a rule override is never silently ignored); the fix
    names the allowed values, or ``otherwise``."""
    for name, values in allowed.items():
        value = getattr(rules, name)
        if value not in values:
            raise InvalidSpec(
                f"rules.{name}",
                value,
                f"not implemented for {kind} windows",
                f"use {name}: {' or '.join(values)}, or {otherwise}",
            )
