"""Helpers shared by the kdb profile tests: run a kdb window, list its windows, number times."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from windtunnel.oracle import Aggregation, Batch, Query, profile_named, run
from windtunnel.oracle.model.results import Result
from windtunnel.oracle.model.stream import Event, numbered

KDB = profile_named("kdb").rules
VALS = (Aggregation("vals", "collect", "t"),)


def kdb_run(window: Any, items: Sequence[Any], *, rules: Any = KDB, **query: Any) -> Result:
    return run(Query(window, aggregate=query.pop("aggregate", VALS), **query), items,
               profile="kdb", rules=rules)


def windows(result: Result) -> list[tuple[Any, Any, Any, str]]:
    return [(e.window.start_ms, e.window.end_ms, e.row.get("vals"), e.reason)
            for e in result.emissions]


def times(*ts: int, **fields: Any) -> tuple[Event, ...]:
    return numbered({"t": t, **fields} for t in ts)


def batches(*groups: Sequence[int]) -> list[Batch]:
    """One Batch per group of times, seq numbered across them."""
    events = iter(times(*(t for g in groups for t in g)))
    return [Batch(tuple(next(events) for _ in g)) for g in groups]


def scenario(window: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"profile": "kdb", "window": window, "input": [{"t": 1}], **extra}
