"""Timeplus's streaming SQL over window functions, as people write it.

Timeplus (https://docs.timeplus.com/tumble-aggregation, https://docs.timeplus.com/query-syntax)::

    [SELECT items] FROM tumble(stream, [ts,] 5s) [PARTITION BY keys] [WHERE cond]
        [GROUP BY keys] [EMIT [STREAM] policy]

with hop(stream, [ts,] hop, size) and session(stream, [ts,] timeout[, max_size]); ``ts`` may
be ``now()``; an interval is ``5s`` or ``interval 5 second``. SELECT items: ``*``, columns,
``window_start``, ``window_end``, the aggregates count(), count(*|x), sum, avg, min, max,
count_distinct and ``emit_version()``, each with an optional ``AS name``. Policies: AFTER
WINDOW CLOSE [WITH DELAY d], AFTER WATERMARK [WITH DELAY d] (the same), TIMEOUT d, ON UPDATE
[WITH BATCH d | WITH DELAY d].
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from windtunnel.oracle.clauses.sql import SQL_AGGREGATES, aggregation, condition_until, select_items
from windtunnel.oracle.clauses.tokens import Tokens
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.spec import NOW, Query
from windtunnel.oracle.profiles.timeplus.spec import (
    TIMEPLUS_UNITS_MS,
    EmitPolicy,
    TimeplusWindows,
    interval_ms,
)

TIMEPLUS_SUPPORTED = (
    "[SELECT window_start, key, max(x) AS m, emit_version()] FROM tumble(s, [ts,] 5s) | "
    "hop(s, [ts,] hop, size) | session(s, [ts,] timeout[, max_size]) [PARTITION BY keys] "
    "[WHERE c] [GROUP BY window_start, key] [EMIT [STREAM] AFTER WINDOW CLOSE [WITH DELAY d] | "
    "AFTER WATERMARK [WITH DELAY d] | TIMEOUT d | ON UPDATE [WITH BATCH d | WITH DELAY d]]; "
    "intervals 5s or interval 5 second; aggregates count sum avg min max count_distinct"
)
_UNIT_WORDS: Final = {
    "millisecond": "ms", "second": "s", "minute": "m", "hour": "h", "day": "d", "week": "w",
}


def _interval(tokens: Tokens) -> int:
    """``5s`` or ``interval 5 second`` (units in the singular or plural) in milliseconds."""
    if tokens.take_word("INTERVAL"):
        number = tokens.next()
        if number.kind != "num" or not number.text.isdigit():
            tokens.fail("expected a whole number after interval", number)
        unit = tokens.next()
        word = unit.text.lower().removesuffix("s") if unit.kind == "word" else ""
        if word not in _UNIT_WORDS:
            tokens.fail(f"expected a unit ({', '.join(_UNIT_WORDS)})", unit)
        return int(number.text) * TIMEPLUS_UNITS_MS[_UNIT_WORDS[word]]
    token = tokens.next()
    if token.kind != "num":
        tokens.fail("expected an interval such as 2s or interval 2 second", token)
    try:
        return interval_ms(token.text, tokens.field)
    except InvalidSpec:
        tokens.fail("not an interval (units ms s m h d w)", token)


def _emit(tokens: Tokens) -> EmitPolicy:
    """The policy after ``EMIT [STREAM]``; errors point at the first token that differs."""
    if tokens.is_word("CHANGELOG", "PERIODIC"):
        tokens.fail("EMIT CHANGELOG and PERIODIC are not supported (retractions, periodic "
                    "emits of global aggregations)")
    stream = tokens.take_word("STREAM")
    if tokens.take_word("AFTER"):
        if not tokens.take_word("WATERMARK"):  # AFTER WATERMARK: the older spelling
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
    if stream and (tokens.at_end() or tokens.peek().text == ";"):
        return EmitPolicy()  # EMIT STREAM: the default, append-only results at window close
    tokens.fail("expected AFTER WINDOW CLOSE, AFTER WATERMARK, TIMEOUT or ON UPDATE after EMIT")


def _keys(tokens: Tokens) -> list[str]:
    """Comma-separated column names (``window_start``/``window_end`` left out)."""
    keys = []
    while True:
        key = tokens.next()
        if key.kind != "word":
            tokens.fail("expected a column", key)
        if key.text.lower() not in ("window_start", "window_end"):
            keys.append(key.text)
        if not tokens.take(","):
            return keys


def parse_timeplus_sql(text: str, field: str = "query") -> Query:
    """The query a Timeplus streaming SELECT over tumble/hop/session describes (the SELECT list
    is optional: ``FROM tumble(s, ts, 5s) EMIT ...`` takes the aggregates from the scenario)."""
    tokens = Tokens(text, field, TIMEPLUS_SUPPORTED)
    items = select_items(tokens, "call") if tokens.take_word("SELECT") else []
    versions = [i for i in items if i.function == "emit_version"]
    if len(versions) > 1 or any(v.field or v.extra for v in versions):
        tokens.fail("emit_version() takes no argument and comes once", versions[-1].token)
    supported = (*SQL_AGGREGATES, "window_start", "window_end", "emit_version")
    aggregations = [aggregation(tokens, i, supported) for i in items if i not in versions]
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
        token = tokens.peek()
        if token.kind == "num" or token.upper == "INTERVAL":
            sizes.append(_interval(tokens))
        elif token.kind == "word" and not sizes:
            on = tokens.next().text
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
    partition_by: list[str] = []
    if tokens.take_word("PARTITION"):
        tokens.expect_word("BY")
        partition_by = _keys(tokens)
    where = None
    if tokens.take_word("WHERE"):
        where = condition_until(tokens, ("GROUP", "EMIT", "SETTINGS"), f"{field}: WHERE")
    group_by = list(partition_by)
    if tokens.take_word("GROUP"):
        tokens.expect_word("BY")
        group_by += [k for k in _keys(tokens) if k not in group_by]
    emit = _emit(tokens) if tokens.take_word("EMIT") else EmitPolicy()
    tokens.take(";")
    if not tokens.at_end():
        tokens.fail("unexpected text")
    if window == "hop":
        spec = TimeplusWindows("hop", sizes[1], on=on, hop_ms=sizes[0], emit=emit)
    elif window == "session":
        spec = TimeplusWindows("session", sizes[0], on=on, emit=emit,
                               max_size_ms=sizes[1] if len(sizes) > 1 else None)
    else:
        spec = TimeplusWindows("tumble", sizes[0], on=on, emit=emit)
    spec = replace(spec, where=where, partition_by=tuple(partition_by),
                   emit_version=versions[0].name if versions else None)
    real = [a for a in aggregations if a.function not in ("window_start", "window_end")]
    if versions and not real:
        tokens.fail("emit_version() needs an aggregate beside it", versions[0].token)
    return Query(spec, group_by=tuple(group_by), aggregate=tuple(aggregations) if real else None)
