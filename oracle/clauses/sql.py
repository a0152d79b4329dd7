"""eKuiper's SQL window clause, and the SELECT list and conditions both SQL dialects share.

eKuiper (https://ekuiper.org/docs/en/latest/sqls/windows.html)::

    [SELECT items FROM stream] [WHERE cond] GROUP BY [keys,] TUMBLINGWINDOW(ss, 10)
        [FILTER (WHERE cond)] [OVER (WHEN cond)] [HAVING cond] [ORDER BY col [ASC|DESC], ...]

with HOPPINGWINDOW(unit, size, hop), SLIDINGWINDOW(unit, size[, delay]),
SESSIONWINDOW(unit, max_duration, timeout), COUNTWINDOW(n[, m]). SELECT items: ``*``,
columns, ``window_start()``/``window_end()`` (also bare), the aggregates count(*|x), sum, avg,
min, max, count_distinct, collect(x), last_value(x[, true]) and ``event_time()``, each with an
optional ``AS name``. Timeplus's clause is in :mod:`windtunnel.oracle.clauses.timeplus_sql`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from windtunnel.oracle.clauses.tokens import Token, Tokens
from windtunnel.oracle.model.conditions import Condition, parse_condition
from windtunnel.oracle.model.spec import NOW, Aggregation, Query
from windtunnel.oracle.profiles.ekuiper.spec import EKUIPER_UNITS_MS, EkuiperWindows, unit_of

SQL_AGGREGATES = ("count", "sum", "avg", "min", "max", "count_distinct")
EKUIPER_FUNCTIONS = (*SQL_AGGREGATES, "collect", "last_value", "event_time", "window_start",
                     "window_end")
EKUIPER_SUPPORTED = (
    "[SELECT count(*), sum(x) AS s, window_start(), ... FROM s] [WHERE c] GROUP BY [keys,] "
    "TUMBLINGWINDOW(unit, n) | HOPPINGWINDOW(unit, n, hop) | SLIDINGWINDOW(unit, n[, delay]) | "
    "SESSIONWINDOW(unit, max_duration, timeout) | COUNTWINDOW(n[, m]) [FILTER (WHERE c)] "
    "[OVER (WHEN c)] [HAVING c] [ORDER BY col [ASC|DESC]]; functions "
    + " ".join(EKUIPER_FUNCTIONS)
)
_WINDOW_FUNCTIONS = {
    "TUMBLINGWINDOW": "tumbling", "HOPPINGWINDOW": "hopping", "SLIDINGWINDOW": "sliding",
    "SESSIONWINDOW": "session", "COUNTWINDOW": "count",
}


class SelectItem(NamedTuple):
    """One SELECT item: ``function`` lowercased (``window_start``/``window_end`` also bare),
    its column ``field`` (None for ``*`` or no argument), further literal ``extra``
    arguments, the output ``name`` and the ``token`` naming the function (for errors)."""

    name: str
    function: str
    field: str | None
    extra: tuple[Token, ...]
    token: Token


def select_items(tokens: Tokens, naming: str) -> list[SelectItem]:
    """SELECT items up to FROM; plain columns and ``*`` are skipped (they carry no
    aggregation). ``naming`` ``function`` names an unaliased call ``count``, ``call`` names it
    ``count(*)``. The dialect decides which functions it takes."""
    items: list[SelectItem] = []
    while True:
        token = tokens.next()
        if token.text == "*" or (token.kind == "word" and tokens.peek().text != "("):
            if token.kind == "word" and token.text.lower() in ("window_start", "window_end"):
                function = token.text.lower()
                items.append(SelectItem(_alias(tokens, function), function, None, (), token))
            elif token.kind == "word":
                _alias(tokens, token.text)
        elif token.kind == "word":
            function = token.text.lower()
            tokens.expect("(")
            field, extra, shown = None, [], "" if tokens.peek().text == ")" else "*"
            if not tokens.take(")"):
                argument = tokens.next()
                if argument.kind == "word":
                    field = shown = argument.text
                elif argument.text != "*":
                    tokens.fail("expected a column or *", argument)
                while tokens.take(","):
                    extra.append(tokens.next())
                tokens.expect(")")
            default = function if naming == "function" else f"{function}({shown})"
            items.append(SelectItem(_alias(tokens, default), function, field, tuple(extra), token))
        else:
            tokens.fail("expected a column or an aggregate", token)
        if not tokens.take(","):
            return items


def _alias(tokens: Tokens, default: str) -> str:
    """``AS name`` after a SELECT item, else ``default``."""
    if not tokens.take_word("AS"):
        return default
    alias = tokens.next()
    if alias.kind != "word":
        tokens.fail("expected a column name after AS", alias)
    return alias.text


def aggregation(tokens: Tokens, item: SelectItem, supported: tuple[str, ...]) -> Aggregation:
    """The plain aggregation ``item`` names (``count``, ``sum``, ..., window bounds); raises
    the token error for anything else or for stray arguments."""
    if item.function not in supported:
        tokens.fail(f"unsupported function (use {', '.join(supported)})", item.token)
    if item.extra:
        tokens.fail(f"{item.function}() takes one argument", item.extra[0])
    if item.function in ("window_start", "window_end"):
        if item.field is not None:
            tokens.fail(f"{item.function}() takes no argument", item.token)
        return Aggregation(item.name, item.function)
    if item.field is None and item.function != "count":
        tokens.fail(f"{item.function}() needs a column", item.token)
    return Aggregation(item.name, item.function, item.field)


def _ekuiper_aggregation(tokens: Tokens, item: SelectItem, on: str) -> Aggregation:
    """eKuiper's SELECT functions: ``collect(x)`` is collect, ``last_value(x[, true])`` is last
    (nulls ignored), ``event_time()`` the event time of the window's last row (``last(on)``)."""
    if item.function == "collect":
        return aggregation(tokens, item._replace(function="collect"), ("collect",))
    if item.function == "last_value":
        if item.extra and item.extra[0].text.lower() == "true":
            item = item._replace(extra=item.extra[1:])
        elif item.extra:
            tokens.fail("last_value(x, ignoreNull): only true (nulls ignored) is supported",
                        item.extra[0])
        return aggregation(tokens, item._replace(function="last"), ("last",))
    if item.function == "event_time":
        if item.field is not None or item.extra:
            tokens.fail("event_time() takes no argument", item.token)
        if on == NOW:
            tokens.fail("event_time() needs event time: give the query's on: field", item.token)
        return Aggregation(item.name, "last", on)
    return aggregation(tokens, item, (*SQL_AGGREGATES, "window_start", "window_end"))


def condition_until(tokens: Tokens, stops: tuple[str, ...], where: str) -> Condition:
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
        items = select_items(tokens, "function")
        unknown = [i for i in items if i.function not in EKUIPER_FUNCTIONS]
        if unknown:
            tokens.fail(f"unsupported function (use {', '.join(EKUIPER_FUNCTIONS)})",
                        unknown[0].token)
        aggregate = tuple(_ekuiper_aggregation(tokens, i, on) for i in items) or None
        tokens.expect_word("FROM")
        if tokens.next().kind != "word":
            tokens.fail("expected a stream name", tokens.items[tokens.pos - 1])
    where = None
    if tokens.take_word("WHERE"):
        where = condition_until(tokens, ("GROUP",), f"{field}: WHERE")
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
            conditions["filter"] = condition_until(tokens, (), f"{field}: FILTER")
            tokens.expect(")")
        elif tokens.take_word("OVER"):
            tokens.expect("(")
            tokens.expect_word("WHEN")
            conditions["when"] = condition_until(tokens, (), f"{field}: OVER (WHEN)")
            tokens.expect(")")
        elif tokens.take_word("HAVING"):
            conditions["having"] = condition_until(tokens, ("ORDER",), f"{field}: HAVING")
        elif tokens.take_word("ORDER"):
            _order_by(tokens)
        else:
            tokens.fail("expected FILTER (WHERE ...), OVER (WHEN ...), HAVING or ORDER BY")
    spec = EkuiperWindows(**window, on=on, lateness_ms=lateness_ms, timezone=timezone,
                          where=where, filter=conditions.get("filter"),
                          when=conditions.get("when"), having=conditions.get("having"))
    return Query(spec, group_by=tuple(group_by), aggregate=aggregate)


def _order_by(tokens: Tokens) -> None:
    """``ORDER BY col [ASC|DESC], ...``: eKuiper sorts the rows one window emits. Accepted and
    not applied: the oracle emits a window's rows in key first-seen order and expectations
    compare them unordered by default (docs/semantics.md, "Window clauses in query:")."""
    tokens.expect_word("BY")
    while True:
        column = tokens.next()
        if column.kind != "word":
            tokens.fail("expected a column to order by", column)
        tokens.take_word("ASC", "DESC")
        if not tokens.take(","):
            return


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
