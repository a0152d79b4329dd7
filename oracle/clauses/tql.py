"""Tenzir's TQL window clause.

Source: https://docs.tenzir.com/reference/operators/window::

    [group {name: field, ...} {]   or   [group field {]
      window size=10min, every=1min, on=ts, tolerance=2min, idle_timeout=5min
        [{ summarize [by_field, ...] name=fn(arg), ... }]
    [}]

Gives a fixed-window :class:`Query`. Aggregations: count, sum, avg, min, max, count_distinct,
distinct (the page's example). Anything else is an input error pointing at the token.
"""

from __future__ import annotations

from windtunnel.oracle.clauses.tokens import Tokens
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.spec import NOW, Aggregation, FixedWindows, Query
from windtunnel.oracle.model.timeparse import parse_duration_ms

TQL_AGGREGATES = ("count", "sum", "avg", "min", "max", "count_distinct", "distinct")
SUPPORTED = (
    "[group {k: field} {] window size=D, every=D, on=field|now(), tolerance=D, idle_timeout=D "
    "[{ summarize [field,] name=count()|sum(x)|avg(x)|min(x)|max(x)|count_distinct(x)|"
    "distinct(x) }] [}]"
)
_OPTIONS = ("size", "every", "on", "tolerance", "idle_timeout")


def parse_tql(text: str, field: str = "query") -> Query:
    """The query a TQL window clause describes; raises InvalidSpec naming ``field``."""
    tokens = Tokens(text, field, SUPPORTED)
    group_by: list[str] = []
    grouped = tokens.take_word("GROUP")
    if grouped:
        if tokens.take("{"):
            while not tokens.take("}"):
                name = tokens.next()
                if name.kind != "word":
                    tokens.fail("expected a key name", name)
                tokens.expect(":")
                group_by.append(_path(tokens))
                if not tokens.take(","):
                    tokens.expect("}")
                    break
        else:
            group_by.append(_path(tokens))
        tokens.expect("{")
    tokens.expect_word("WINDOW")
    options: dict[str, str] = {}
    while True:
        key = tokens.next()
        if key.kind != "word" or key.text not in _OPTIONS:
            tokens.fail(f"expected one of {', '.join(_OPTIONS)}", key)
        if key.text in options:
            tokens.fail("option given twice", key)
        tokens.expect("=")
        start = tokens.peek()
        if key.text == "on":
            value = _path(tokens)
            if value == "now" and tokens.take("("):
                tokens.expect(")")
                value = NOW
        else:
            value = tokens.next().text
            if start.kind != "num":
                tokens.fail("expected a duration such as 10min", start)
        options[key.text] = value
        if not tokens.take(","):
            break
    if "size" not in options:
        tokens.fail("window needs size=")
    aggregate: tuple[Aggregation, ...] | None = None
    by: tuple[str, ...] = ()
    if tokens.take("{"):
        aggregate, by = _summarize(tokens)
        tokens.expect("}")
    if grouped:
        tokens.expect("}")
    if not tokens.at_end():
        tokens.fail("unexpected text after the window clause")
    try:
        window = FixedWindows(
            size_ms=parse_duration_ms(options["size"], f"{field}: size"),
            every_ms=parse_duration_ms(options["every"], f"{field}: every")
            if "every" in options else None,
            on=options.get("on", "ts"),
            tolerance_ms=parse_duration_ms(options.get("tolerance", "0s"), f"{field}: tolerance"),
            idle_timeout_ms=parse_duration_ms(options["idle_timeout"], f"{field}: idle_timeout")
            if "idle_timeout" in options else None,
        )
    except InvalidInput as exc:
        tokens.fail(f"{exc.rule} ({exc.field})")
    return Query(window, group_by=tuple(group_by), aggregate=aggregate, aggregate_by=by)


def _path(tokens: Tokens) -> str:
    first = tokens.next()
    if first.kind != "word":
        tokens.fail("expected a field name", first)
    parts = [first.text]
    while tokens.take("."):
        part = tokens.next()
        if part.kind != "word":
            tokens.fail("expected a field name after '.'", part)
        parts.append(part.text)
    return ".".join(parts)


def _summarize(tokens: Tokens) -> tuple[tuple[Aggregation, ...], tuple[str, ...]]:
    tokens.expect_word("SUMMARIZE")
    aggregations: list[Aggregation] = []
    by: list[str] = []
    while True:
        name = _path(tokens)
        if tokens.take("="):
            function = tokens.next()
            if function.kind != "word" or function.text not in TQL_AGGREGATES:
                tokens.fail(f"expected one of {', '.join(TQL_AGGREGATES)}", function)
            tokens.expect("(")
            argument = None if tokens.peek().text == ")" else _path(tokens)
            tokens.expect(")")
            aggregations.append(Aggregation(name, function.text, argument))
        else:
            by.append(name)
        if not tokens.take(","):
            break
    if not aggregations:
        tokens.fail("summarize needs at least one name=function()")
    return tuple(aggregations), tuple(by)
