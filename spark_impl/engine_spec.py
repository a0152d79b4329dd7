"""The Java window engine's query spec: what the engine covers and the JSON text it runs from.

The engine (``spark_impl/jvm/src/windtunnel/engine``, package ``windtunnel.engine``) runs the
default profile (``tenzir``, default rules) exactly per event: fixed windows (tumbling and
hopping, tolerance, idle timeout, ``on`` a dotted field or ``now()``), session windows (Tenzir
6.20's reorder buffer; on ``now()`` the oracle's merging sessions), count windows, every
aggregate function, ``aggregate_by``, pass-through and any ``group_by``. :func:`covered` says
whether a query is one of those, :func:`engine_spec` writes the spec text (format
:data:`ENGINE_FORMAT`) and :func:`spec_fields` the engine's field slots: the distinct dotted
paths it reads from an event, in the order the spec lists them (``fields``).
"""

from __future__ import annotations

import json
from typing import Any, Final

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import (
    AGGREGATE_FUNCTIONS,
    NOW,
    CountWindows,
    FixedWindows,
    Query,
    SessionWindows,
    TrailingCountWindows,
    TrailingWindows,
)

ENGINE_FORMAT: Final = 1
"""The spec format the engine reads (``engine_format``)."""

MAX_MS: Final = 2**61
"""The largest duration or wall time the engine takes, in ms (it keeps times in 64 bits)."""

_DEFAULT_RULES: Final = Rules()


def covered(query: Query, rules: Rules, *, profile: str = "tenzir") -> str | None:
    """None when the engine runs ``query`` under ``rules`` (and ``profile``) exactly as the
    oracle does; else a one-line reason naming what it does not cover, such as
    ``"trailing windows"`` or ``"rules.close_at=passes"``."""
    if profile != "tenzir":
        return f"profile {profile} (the engine runs the default profile, tenzir)"
    differing = rules.differing(_DEFAULT_RULES)
    if differing:
        name = differing[0]
        return f"rules.{name}={getattr(rules, name)}"
    if query.stages:
        return "stages before the window (where, deduplicate)"
    window = query.window
    if isinstance(window, TrailingWindows | TrailingCountWindows):
        return "trailing windows"
    durations: tuple[int | None, ...]
    if type(window) is FixedWindows:
        if window.every_ms is not None and window.every_ms > window.size_ms:
            return "gapped fixed windows (every > size)"
        durations = (window.size_ms, window.hop_ms, window.tolerance_ms, window.idle_timeout_ms)
    elif type(window) is SessionWindows:
        durations = (
            window.gap_ms, window.tolerance_ms, window.max_duration_ms, window.idle_timeout_ms
        )
    elif type(window) is CountWindows:
        if window.every is not None and window.every > window.count:
            return "gapped count windows (every > count)"
        durations = (window.count, window.hop)
    else:
        return f"{getattr(window, 'kind', type(window).__name__)} windows of type {type(window).__name__}"
    if any(d is not None and d > MAX_MS for d in durations):
        return "durations beyond 2**61 ms"
    if query.aggregate is not None:
        names = [a.name for a in query.aggregate]
        if len(set(names)) != len(names):
            return "duplicate aggregate names"
        for aggregation in query.aggregate:
            if aggregation.function not in AGGREGATE_FUNCTIONS:
                return f"aggregate function {aggregation.function}()"
    return None


def spec_fields(query: Query) -> tuple[str, ...]:
    """The engine's field slots: the ``on`` path (unless ``now()``), the ``group_by``, the
    ``aggregate_by`` and the aggregated fields, each path once, in that order."""
    paths: list[str] = []
    on = getattr(query.window, "on", NOW)
    if on != NOW:
        paths.append(on)
    paths.extend(query.group_by)
    paths.extend(query.aggregate_by)
    paths.extend(a.field for a in query.aggregate or () if a.field)
    return tuple(dict.fromkeys(paths))


def engine_spec(query: Query, rules: Rules, time_unit_ms: int, start_wall_ms: int) -> str:
    """The spec text the engine runs ``query`` from (``time_unit_ms`` scales plain-number
    event times, ``start_wall_ms`` is the wall clock before the first item, epoch ms).

    Raises InvalidSpec naming ``query`` when :func:`covered` gives a reason, or naming the
    value out of the engine's range."""
    reason = covered(query, rules)
    if reason is not None:
        raise InvalidSpec(
            "query", str(query.window), f"not covered by the Java engine: {reason}",
            "run it on the general path (the oracle's step)",
        )
    for name, value in (("time_unit_ms", time_unit_ms), ("start_wall_ms", start_wall_ms)):
        if isinstance(value, bool) or not isinstance(value, int) or abs(value) > MAX_MS:
            raise InvalidSpec(name, value, "must be an integer up to 2**61", "give epoch milliseconds")
    if time_unit_ms <= 0:
        raise InvalidSpec("time_unit_ms", time_unit_ms, "must be positive", "give e.g. 1 or 1000")
    window = query.window
    spec: dict[str, Any] = {
        "engine_format": ENGINE_FORMAT,
        "on": getattr(window, "on", NOW),
        "fields": list(spec_fields(query)),
        "group_by": list(query.group_by),
        "aggregate": None
        if query.aggregate is None
        else [{"name": a.name, "function": a.function, "field": a.field} for a in query.aggregate],
        "aggregate_by": list(query.aggregate_by),
        "time_unit_ms": time_unit_ms,
        "start_wall_ms": start_wall_ms,
    }
    if isinstance(window, FixedWindows):
        spec.update(
            kind="fixed", size_ms=window.size_ms, hop_ms=window.hop_ms,
            tolerance_ms=window.tolerance_ms, idle_timeout_ms=window.idle_timeout_ms,
        )
    elif isinstance(window, SessionWindows):
        spec.update(
            kind="session", gap_ms=window.gap_ms, tolerance_ms=window.tolerance_ms,
            max_duration_ms=window.max_duration_ms, max_events=window.max_events,
            idle_timeout_ms=window.idle_timeout_ms,
            session_order="merge" if window.on == NOW else rules.session_order,
        )
    else:
        assert isinstance(window, CountWindows)
        spec.update(kind="count", count=window.count, every=window.hop)
    return json.dumps(spec, sort_keys=True, separators=(",", ":"))
