"""The fast paths: at most one per window kind, apart from the reference (``oracle/windows/``).

``fixed`` (fixed windows), ``count`` (count windows) and ``session`` (sessions, rule
``session_order: reorder``) each give exactly the reference's outputs, in the same order,
for the runs they take (tests/oracle/fast/ holds them to the reference with Hypothesis);
:func:`windtunnel.oracle.engine.stream_outputs` picks one when :func:`refusal` has no
objection. They read the stream through :mod:`.stream` (runs of events, checked whole)
and hand it over to the reference operator at the first item they do not take.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Protocol

from windtunnel.oracle.fast import count, fixed, session
from windtunnel.oracle.model.results import Output
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import CountWindows, FixedWindows, Query, SessionWindows
from windtunnel.oracle.model.stream import Item


class _Kind(Protocol):
    FREE_RULES: tuple[str, ...]

    def refusal(self, query: Query) -> str | None: ...


_KINDS: dict[type, _Kind] = {FixedWindows: fixed, CountWindows: count, SessionWindows: session}


def refusal(query: Query, rules: Rules, profile: str) -> str | None:
    """Why no fast path takes this run, in one line; None when one does (its outputs are
    then exactly the reference's)."""
    kind = _KINDS.get(type(query.window))
    if kind is None:
        return f"{getattr(query.window, 'kind', type(query.window).__name__)} windows have no fast path"
    if profile != "tenzir":
        return f"profile {profile}: fast paths run the default profile (tenzir) only"
    if query.stages:
        return "stages before the window run in the reference's driver"
    if query.output_mode != "append":
        return f"output_mode {query.output_mode}"
    if query.aggregate is None:
        return "no aggregate: pass-through windows emit every event"
    default = Rules()
    free = {name: getattr(default, name) for name in kind.FREE_RULES}
    differing = default.differing(dataclasses.replace(rules, **free))
    if differing:
        name = differing[0]
        return f"rule {name}: {getattr(rules, name)} (the fast path reads only {', '.join(kind.FREE_RULES)})"
    return kind.refusal(query)


def fast_outputs(
    query: Query,
    items: Iterable[Item],
    *,
    rules: Rules,
    time_unit_ms: int = 1,
    start_wall_ms: int = 0,
    min_run: int | None = None,
) -> Iterator[Output]:
    """The outputs of the fast path of ``query``'s window kind, for a run :func:`refusal`
    does not object to. ``min_run`` (columnar paths: fewer events in a run hand the stream
    over to the reference) lets tests put short streams through the columns."""
    window = query.window
    if type(window) is FixedWindows:
        return fixed.outputs(query, items, rules, time_unit_ms, start_wall_ms)
    tuning = {} if min_run is None else {"min_run": min_run}
    if type(window) is CountWindows:
        return count.outputs(query, items, rules, time_unit_ms, start_wall_ms, **tuning)
    return session.outputs(query, items, rules, time_unit_ms, start_wall_ms, **tuning)
