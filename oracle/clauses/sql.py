"""The SQL window clauses of eKuiper and Timeplus.

eKuiper (https://ekuiper.org/docs/en/latest/sqls/windows.html)::

    [SELECT items FROM stream] [WHERE cond] GROUP BY [keys,] TUMBLINGWINDOW(ss, 10)
        [FILTER (WHERE cond)] [OVER (WHEN cond)] [HAVING cond]

with HOPPINGWINDOW(unit, size, hop), SLIDINGWINDOW(unit, size[, delay]),
SESSIONWINDOW(unit, max_duration, timeout), COUNTWINDOW(n[, m]).

Timeplus (https://docs.timeplus.com/tumble-aggregation)::

    [SELECT items] FROM tumble(stream, [ts,] 5s) [GROUP BY keys] [EMIT policy]

with hop(stream, [ts,] hop, size) and session(stream, [ts,] timeout[, max_size]); ``ts`` may
be ``now()``. SELECT items: ``*``, columns, ``window_start``, ``window_end`` and the aggregates
count(*|x), sum, avg, min, max, count_distinct, each with an optional ``AS name``.
"""

from __future__ import annotations

from typing import Any

from windtunnel.oracle.clauses.tokens import Token, Tokens
from windtunnel.oracle.model.conditions import Condition, parse_condition
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.spec import NOW, Aggregation, Query
from windtunnel.oracle.profiles.ekuiper.spec import EKUIPER_UNITS_MS, EkuiperWindows, unit_of
from windtunnel.oracle.profiles.timeplus.spec import EmitPolicy, TimeplusWindows, interval_ms

SQL_AGGREGATES = ("count", "sum", "avg", "min", "max", "count_distinct")
EKUIPER_SUPPORTED = (
    "[SELECT count(*), sum(x) AS s, ... FROM s] [WHERE c] GROUP BY [keys,] "
    "TUMBLINGWINDOW(unit, n) | HOPPINGWINDOW(unit, n, hop) | SLIDINGWINDOW(unit, n[, delay]) | "
    "SESSIONWINDOW(unit, max_duration, timeout) | COUNTWINDOW(n[, m]) [FILTER (WHERE c)] "
    "[OVER (WHEN c)] [HAVING c]; aggregates count sum avg min max count_distinct"
)
TIMEPLUS_SUPPORTED = (
    "[SELECT window_start, key, max(x) AS m] FROM tumble(s, [ts,] 5s) | hop(s, [ts,] hop, size) "
    "| session(s, [ts,] timeout[, max_size]) [GROUP BY window_start, key] [EMIT AFTER WINDOW "
    "CLOSE [WITH DELAY d] | EMIT TIMEOUT d | EMIT ON UPDATE [WITH BATCH d | WITH DELAY d]]; "
    "aggregates count sum avg min max count_distinct"
)
_WINDOW_FUNCTIONS = {
    "TUMBLINGWINDOW": "tumbling", "HOPPINGWINDOW": "hopping", "SLIDINGWINDOW": "sliding",
    "SESSIONWINDOW": "session", "COUNTWINDOW": "count",
}


def _select(tokens: Tokens, default_name: str) -> list[Aggregation]:
    """SELECT items up to FROM: aggregations (plain columns and ``*`` carry no aggregation)."""
    aggregations: list[Aggregation] = []
    while True:
        token = tokens.next()
        if token.text == "*" or (token.kind == "word" and tokens.peek().text != "("):
            if token.kind == "word" and token.text.lower() in ("window_start", "window_end"):
                aggregations.append(Aggregation(token.text.lower(), token.text.lower()))
        elif token.kind == "word":
            function = token.text.lower()
            if function not in SQL_AGGREGATES:
                tokens.fail(f"unsupported function (use {', '.join(SQL_AGGREGATES)})", token)
            tokens.expect("(")
            argument = tokens.next()
            if argument.text == "*" and function == "count":
                field = None
            elif argument.kind == "word":
                field = argument.text
            else:
                tokens.fail("expected a column or *", argument)
            tokens.expect(")")
            name = (function if default_name == "function"
                    else f"{function}({field or '*'})")
            if tokens.take_word("AS"):
                alias = tokens.next()
                if alias.kind != "word":
                    tokens.fail("expected a column name after AS", alias)
                name = alias.text
            aggregations.append(Aggregation(name, function, field))
        else:
            tokens.fail("expected a column or an aggregate", token)
        if not tokens.take(","):
            return aggregations


def _condition(tokens: Tokens, stops: tuple[str, ...], where: str) -> Condition:
    """The condition text from here to a stop word or an unmatched ``)``."""
    start = tokens.peek()
    depth = 0
    while not tokens.at_end():
        token = tokens.peek()
        if depth == 0 and (token.text == ")" or (token.kind == "word" and token.upper in stops)):
            break
        depth += {"(": 1, ")": -1}.get(token.text, 0)
        tokens.next()
    text = tokens.rest_from(start)
    if not text:
        tokens.fail("expected a condition", start)
    return parse_condition(text, where)


def _number(tokens: Tokens) -> int:
    token = tokens.next()
    if token.kind != "num" or not token.text.isdigit():
        tokens.fail("expected a whole number", token)
    return int(token.text)


def parse_ekuiper_sql(text: str, field: str = "query", *, on: str = NOW, lateness_ms: int = 0,
                      timezone: str = "UTC") -> Query:
    """The query an eKuiper SQL statement (or its GROUP BY clause) describes."""
    tokens = Tokens(text, field, EKUIPER_SUPPORTED)
    aggregate: tuple[Aggregation, ...] | None = None
    if tokens.take_word("SELECT"):
        aggregate = tuple(_select(tokens, "function")) or None
        tokens.expect_word("FROM")
        if tokens.next().kind != "word":
            tokens.fail("expected a stream name", tokens.items[tokens.pos - 1])
    where = None
    if tokens.take_word("WHERE"):
        where = _condition(tokens, ("GROUP",), f"{field}: WHERE")
    tokens.expect_word("GROUP")
    tokens.expect_word("BY")
    group_by: list[str] = []
    window: dict[str, Any] | None = None
    while True:
        token = tokens.next()
        if token.kind != "word":
            tokens.fail("expected a key or a window function", token)
        if token.upper in _WINDOW_FUNCTIONS:
            if window is not None:
                tokens.fail("only one window function", token)
            window = _window_function(tokens, _WINDOW_FUNCTIONS[token.upper], token)
        else:
            group_by.append(token.text)
        if not tokens.take(","):
            break
    if window is None:
        tokens.fail("GROUP BY needs a window function such as TUMBLINGWINDOW(ss, 10)")
    conditions: dict[str, Condition] = {}
    while not tokens.at_end():
        if tokens.take_word("FILTER"):
            tokens.expect("(")
            tokens.expect_word("WHERE")
            conditions["filter"] = _condition(tokens, (), f"{field}: FILTER")
            tokens.expect(")")
        elif tokens.take_word("OVER"):
            tokens.expect("(")
            tokens.expect_word("WHEN")
            conditions["when"] = _condition(tokens, (), f"{field}: OVER (WHEN)")
            tokens.expect(")")
        elif tokens.take_word("HAVING"):
            conditions["having"] = _condition(tokens, (), f"{field}: HAVING")
        else:
            tokens.fail("expected FILTER (WHERE ...), OVER (WHEN ...) or HAVING")
    spec = EkuiperWindows(**window, on=on, lateness_ms=lateness_ms, timezone=timezone,
                          where=where, filter=conditions.get("filter"),
                          when=conditions.get("when"), having=conditions.get("having"))
    return Query(spec, group_by=tuple(group_by), aggregate=aggregate)


def _window_function(tokens: Tokens, window: str, name: Token) -> dict[str, Any]:
    tokens.expect("(")
    fields: dict[str, Any] = {"window": window}
    if window == "count":
        fields["count"] = _number(tokens)
        if tokens.take(","):
            fields["interval"] = _number(tokens)
    else:
        unit_token = tokens.next()
        if unit_token.kind != "word" or unit_token.text.lower() not in EKUIPER_UNITS_MS:
            tokens.fail("expected a time unit (DD, HH, MI, SS, MS)", unit_token)
        unit = unit_of(unit_token.text, tokens.field)
        scale = EKUIPER_UNITS_MS[unit]
        fields["unit"] = unit
        tokens.expect(",")
        numbers = [_number(tokens)]
        while tokens.take(","):
            numbers.append(_number(tokens))
        arity = {"tumbling": (1, 1), "hopping": (2, 2), "sliding": (1, 2), "session": (2, 2)}
        low, high = arity[window]
        if not low <= len(numbers) <= high:
            tokens.fail(f"{name.text} takes a unit and {low if low == high else f'{low} or {high}'}"
                        " numbers", name)
        if window == "session":
            fields["max_duration_ms"], fields["timeout_ms"] = (n * scale for n in numbers)
        else:
            fields["size_ms"] = numbers[0] * scale
            if len(numbers) == 2:
                fields["hop_ms" if window == "hopping" else "delay_ms"] = numbers[1] * scale
    tokens.expect(")")
    return fields


def _interval(tokens: Tokens) -> int:
    token = tokens.next()
    if token.kind != "num":
        tokens.fail("expected an interval such as 2s", token)
    try:
        return interval_ms(token.text, tokens.field)
    except InvalidSpec:
        tokens.fail("not an interval (units ms s m h d w)", token)


def _emit(tokens: Tokens) -> EmitPolicy:
    """The policy after ``EMIT``: AFTER WINDOW CLOSE [WITH DELAY d] | TIMEOUT d |
    ON UPDATE [WITH BATCH d | WITH DELAY d]; errors point at the first token that differs."""
    if tokens.take_word("AFTER"):
        tokens.expect_word("WINDOW")
        tokens.expect_word("CLOSE")
        if tokens.take_word("WITH"):
            tokens.expect_word("DELAY")
            return EmitPolicy("close", delay_ms=_interval(tokens))
        return EmitPolicy("close")
    if tokens.take_word("TIMEOUT"):
        return EmitPolicy("close", timeout_ms=_interval(tokens))
    if tokens.take_word("ON"):
        tokens.expect_word("UPDATE")
        if tokens.take_word("WITH"):
            if tokens.take_word("BATCH"):
                return EmitPolicy("update", batch_ms=_interval(tokens))
            tokens.expect_word("DELAY")
            return EmitPolicy("update", delay_ms=_interval(tokens))
        return EmitPolicy("update")
    tokens.fail("expected AFTER WINDOW CLOSE, TIMEOUT or ON UPDATE after EMIT")


def parse_timeplus_sql(text: str, field: str = "query") -> Query:
    """The query a Timeplus streaming SELECT over tumble/hop/session describes (the SELECT list
    is optional: ``FROM tumble(s, ts, 5s) EMIT ...`` takes the aggregates from the scenario)."""
    tokens = Tokens(text, field, TIMEPLUS_SUPPORTED)
    aggregations = _select(tokens, "call") if tokens.take_word("SELECT") else []
    tokens.expect_word("FROM")
    function = tokens.next()
    if function.kind != "word" or function.text.lower() not in ("tumble", "hop", "session"):
        tokens.fail("expected tumble(...), hop(...) or session(...)", function)
    window = function.text.lower()
    tokens.expect("(")
    if tokens.next().kind != "word":
        tokens.fail("expected a stream name", tokens.items[tokens.pos - 1])
    on, sizes = "_tp_time", []
    while tokens.take(","):
        token = tokens.next()
        if token.kind == "num":
            sizes.append(interval_ms(token.text, field))
        elif token.kind == "word" and not sizes:
            on = token.text
            if tokens.take("("):  # now() or now64(3)
                if on.lower() not in ("now", "now64"):
                    tokens.fail("only now() or now64(3) may be called here", token)
                while not tokens.take(")"):
                    tokens.next()
                on = NOW
        else:
            tokens.fail("expected a timestamp column or an interval such as 5s", token)
    tokens.expect(")")
    expected = {"tumble": (1, 1), "hop": (2, 2), "session": (1, 2)}[window]
    if not expected[0] <= len(sizes) <= expected[1]:
        tokens.fail(f"{window}() takes {expected[1]} interval(s)", function)
    group_by: list[str] = []
    if tokens.take_word("WHERE"):
        tokens.fail("WHERE is not supported in window clauses: filter the input instead",
                    tokens.items[tokens.pos - 1])
    if tokens.take_word("GROUP"):
        tokens.expect_word("BY")
        while True:
            key = tokens.next()
            if key.kind != "word":
                tokens.fail("expected a column", key)
            if key.text.lower() not in ("window_start", "window_end"):
                group_by.append(key.text)
            if not tokens.take(","):
                break
    emit = _emit(tokens) if tokens.take_word("EMIT") else EmitPolicy()
    tokens.take(";")
    if not tokens.at_end():
        tokens.fail("unexpected text")
    if window == "hop":
        spec = TimeplusWindows("hop", sizes[1], on=on, hop_ms=sizes[0], emit=emit)
    elif window == "session":
        spec = TimeplusWindows("session", sizes[0], on=on,
                               max_size_ms=sizes[1] if len(sizes) > 1 else None, emit=emit)
    else:
        spec = TimeplusWindows("tumble", sizes[0], on=on, emit=emit)
    real = [a for a in aggregations if a.function not in ("window_start", "window_end")]
    return Query(spec, group_by=tuple(group_by), aggregate=tuple(aggregations) if real else None)
