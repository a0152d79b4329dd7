"""Each system's own window clause, accepted as a scenario's ``query`` and by the API.

``query: "<text>"`` or ``query: {text: "<text>", syntax: ..., on: ts, lateness: 1s,
timezone: UTC}``. The syntax defaults from the profile: ``tql`` (tenzir, flink, spark),
``ekuiper``, ``timeplus``, ``kdb``. The clause replaces ``window``; ``group_by`` and
``aggregate`` may come from the scenario when the clause does not give them (kdb never does).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from windtunnel.oracle.clauses.kdb_q import parse_kdb_q
from windtunnel.oracle.clauses.sql import parse_ekuiper_sql
from windtunnel.oracle.clauses.timeplus_sql import parse_timeplus_sql
from windtunnel.oracle.clauses.tql import parse_tql
from windtunnel.oracle.model.errors import InvalidScenario
from windtunnel.oracle.model.spec import NOW, Aggregation, Query
from windtunnel.oracle.model.timeparse import parse_duration_ms
from windtunnel.oracle.profiles.ekuiper.spec import EkuiperWindows

SYNTAXES: Final = ("tql", "ekuiper", "timeplus", "kdb")
_BY_PROFILE: Final = {"ekuiper": "ekuiper", "timeplus": "timeplus", "kdb": "kdb"}
QUERY_KEYS: Final = ("text", "syntax", "on", "lateness", "timezone")


def syntax_for(profile: str) -> str:
    """The clause syntax a profile reads by default."""
    return _BY_PROFILE.get(profile, "tql")


def parse_clause(text: str, syntax: str, *, field: str = "query", on: str = NOW,
                 lateness_ms: int = 0, timezone: str = "UTC") -> Query:
    """The query ``text`` describes in ``syntax``; raises InvalidSpec pointing at the token.

    ``on``/``lateness_ms``/``timezone`` set eKuiper's event time (its stream definition and
    rule options, not part of the SQL). kdb clauses give only the window: no aggregation.
    """
    if syntax == "tql":
        return parse_tql(text, field)
    if syntax == "ekuiper":
        return parse_ekuiper_sql(text, field, on=on, lateness_ms=lateness_ms, timezone=timezone)
    if syntax == "timeplus":
        return parse_timeplus_sql(text, field)
    if syntax == "kdb":
        return Query(parse_kdb_q(text, field))
    raise InvalidScenario(f"{field}.syntax", syntax, "unknown clause syntax",
                          f"use one of {', '.join(SYNTAXES)}")


def query_from_scenario(data: Mapping[str, Any], profile: str, time_unit: str,
                        group_by: tuple[str, ...],
                        aggregate: tuple[Aggregation, ...] | None,
                        aggregate_by: tuple[str, ...]) -> Query:
    """The scenario's ``query`` combined with its ``group_by``/``aggregate`` blocks."""
    raw = data["query"]
    if "window" in data:
        raise InvalidScenario("window", data["window"], "cannot stand beside query:",
                              "give the window in the query text or in window:, not both")
    options: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {"text": raw}
    for key in options:
        if key not in QUERY_KEYS:
            raise InvalidScenario(f"query.{key}", options[key], "unknown key",
                                  f"use one of {', '.join(QUERY_KEYS)}")
    text = options.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InvalidScenario("query", raw, "must be the window clause text",
                              'write query: "GROUP BY TUMBLINGWINDOW(ss, 10)"')
    syntax = options.get("syntax", syntax_for(profile))
    lateness = options.get("lateness")
    query = parse_clause(
        text, syntax, on=options.get("on", NOW),
        lateness_ms=0 if lateness is None else parse_duration_ms(lateness, "query.lateness",
                                                                 time_unit),
        timezone=options.get("timezone", "UTC"),
    )
    if syntax != "ekuiper" and not isinstance(query.window, EkuiperWindows):
        for key in ("on", "lateness", "timezone"):
            if key in options:
                raise InvalidScenario(f"query.{key}", options[key],
                                      f"only for eKuiper clauses (the {syntax} clause names it)",
                                      "remove it")
    for name, given, parsed in (("group_by", group_by, query.group_by),
                                ("aggregate", aggregate, query.aggregate)):
        if given and parsed:
            raise InvalidScenario(name, list(given), "also given by the query clause",
                                  f"remove {name}: or drop it from the query text")
    return replace(query, group_by=query.group_by or group_by,
                   aggregate=query.aggregate if query.aggregate is not None else aggregate,
                   aggregate_by=aggregate_by)
