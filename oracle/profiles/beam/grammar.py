"""Beam's Python spellings as values: a small grammar of calls, never ``eval``.

``AfterWatermark(early=AfterCount(3), late=AfterCount(1))``, ``FixedWindows(60, offset=5)``,
``Sessions(10min)``: a call is a (dotted) name, optionally followed by arguments in
parentheses; an argument is a call, a number or a duration, optionally after ``keyword=``.
Numbers are seconds, as in Beam's Python SDK (``FixedWindows(60)`` is one minute);
windtunnel durations (``500ms``, ``10s``, ``5min``, ``2h``, ``1d``) say their unit.
Durations become integer milliseconds; anything finer than 1 ms is an input error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Final

from windtunnel.oracle.model.errors import InvalidSpec

_TOKEN: Final = re.compile(
    r"\s*(?:(?P<duration>-?\d+(?:\.\d+)?(?:ms|s|min|m|h|d)\b)"
    r"|(?P<number>-?\d+(?:\.\d+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)"
    r"|(?P<punct>[(),=])"
    r"|(?P<bad>\S))"
)
_UNIT_MS: Final = {"ms": 1, "s": 1_000, "m": 60_000, "min": 60_000, "h": 3_600_000,
                   "d": 86_400_000}


@dataclass(frozen=True, slots=True)
class Duration:
    """A duration argument in milliseconds; ``plain`` when written as a bare number
    (seconds), which is also how a count (``AfterCount(3)``) is written."""

    ms: int
    plain: bool = False


@dataclass(frozen=True, slots=True)
class Call:
    """``name(args..., keyword=value, ...)``; ``name`` is the last part of a dotted name
    (``trigger.AfterCount`` is ``AfterCount``), ``called`` says whether parentheses followed
    (``GlobalWindows`` and ``GlobalWindows()`` are both calls)."""

    name: str
    args: tuple[Value, ...] = ()
    kwargs: tuple[tuple[str, Value], ...] = ()
    called: bool = False

    def keyword(self, key: str) -> Value | None:
        return next((v for k, v in self.kwargs if k == key), None)

    def __str__(self) -> str:
        parts = [_text(a) for a in self.args] + [f"{k}={_text(v)}" for k, v in self.kwargs]
        return f"{self.name}({', '.join(parts)})" if self.called or parts else self.name


Value = Call | Duration


def _text(value: Value) -> str:
    if isinstance(value, Duration):
        return format_seconds(value.ms)
    return str(value)


def format_seconds(ms: int) -> str:
    """A duration as Beam writes it: whole seconds as a plain number, else with a unit."""
    return str(ms // 1000) if ms % 1000 == 0 else f"{ms}ms"


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    text: str
    offset: int


class _Parser:
    def __init__(self, text: str, field: str, example: str) -> None:
        self.text = text
        self.field = field
        self.example = example
        self.tokens = [
            _Token(m.lastgroup, m.group(m.lastgroup), m.start(m.lastgroup))
            for m in _TOKEN.finditer(text) if m.lastgroup is not None
        ]
        self.tokens.append(_Token("end", "", len(text)))
        self.pos = 0

    def peek(self) -> _Token:
        return self.tokens[self.pos]

    def take(self) -> _Token:
        token = self.tokens[self.pos]
        if token.kind != "end":
            self.pos += 1
        return token

    def fail(self, expected: str) -> InvalidSpec:
        token = self.peek()
        found = "the end" if token.kind == "end" else repr(token.text)
        return InvalidSpec(self.field, self.text,
                           f"expected {expected} at position {token.offset}, found {found}",
                           f"write e.g. {self.example}")

    def expect(self, text: str) -> None:
        if self.peek().text != text:
            raise self.fail(repr(text))
        self.take()

    def call(self) -> Call:
        token = self.peek()
        if token.kind != "name":
            raise self.fail("a name")
        self.take()
        name = token.text.rpartition(".")[2]
        if self.peek().text != "(":
            return Call(name)
        self.take()
        args: list[Value] = []
        kwargs: list[tuple[str, Value]] = []
        while self.peek().text != ")":
            if kwargs or args:
                self.expect(",")
            first = self.peek()
            if first.kind == "name" and self.tokens[self.pos + 1].text == "=":
                self.take()
                self.take()
                if any(k == first.text for k, _ in kwargs):
                    raise InvalidSpec(self.field, self.text, f"{first.text}= is given twice",
                                      "give each keyword once")
                kwargs.append((first.text, self.value()))
            elif kwargs:
                raise self.fail("keyword=value (positional arguments come first)")
            else:
                args.append(self.value())
        self.take()
        return Call(name, tuple(args), tuple(kwargs), called=True)

    def value(self) -> Value:
        token = self.peek()
        if token.kind == "name":
            return self.call()
        if token.kind in ("number", "duration"):
            self.take()
            return Duration(self.milliseconds(token), plain=token.kind == "number")
        raise self.fail("a trigger, a number of seconds or a duration")

    def milliseconds(self, token: _Token) -> int:
        text = token.text
        unit = "s"
        if token.kind == "duration":
            number = re.match(r"-?\d+(?:\.\d+)?", text)
            assert number is not None
            unit = text[number.end():]
            text = number.group()
        try:
            exact = Decimal(text) * _UNIT_MS[unit]
        except InvalidOperation:  # pragma: no cover - the token pattern admits numbers only
            raise self.fail("a number") from None
        if exact != exact.to_integral_value():
            raise InvalidSpec(self.field, token.text, "finer than 1 ms",
                              "give whole milliseconds (windtunnel's time grain), e.g. 500ms")
        return int(exact)


def parse_call(text: object, field: str, example: str) -> Call:
    """``text`` as a :class:`Call`; raises InvalidSpec naming ``field`` and the position of
    the first token that does not fit, with ``example`` as the fix."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidSpec(field, text, "must be a Beam spelling in a string",
                          f"write e.g. {example}")
    parser = _Parser(text, field, example)
    call = parser.call()
    if parser.peek().kind != "end":
        raise parser.fail("the end")
    return call


def duration_arg(call: Call, index: int, key: str, field: str) -> int | None:
    """The duration given as the ``index``-th positional or ``key=`` argument of ``call``
    (ms), None when absent; raises InvalidSpec when it is given both ways or is a call."""
    positional = call.args[index] if index < len(call.args) else None
    named = call.keyword(key)
    if positional is not None and named is not None:
        raise InvalidSpec(f"{field}.{key}", str(call), f"{key} is given twice",
                          "give it once, by position or as keyword")
    value = positional if positional is not None else named
    if value is None:
        return None
    if not isinstance(value, Duration):
        raise InvalidSpec(f"{field}.{key}", str(value), "must be a number of seconds or a duration",
                          f"write {call.name}(60) or {call.name}({key}=10s)")
    return value.ms


def check_arguments(call: Call, positional: int, keywords: tuple[str, ...], field: str) -> None:
    """Raise InvalidSpec when ``call`` has more than ``positional`` positional arguments or a
    keyword not in ``keywords``."""
    if len(call.args) > positional:
        raise InvalidSpec(field, str(call), f"{call.name} takes at most {positional} "
                          "positional argument" + ("" if positional == 1 else "s"),
                          f"use keywords: {', '.join(keywords) or 'none'}")
    for key, _ in call.kwargs:
        if key not in keywords:
            raise InvalidSpec(field, str(call), f"{call.name} has no argument {key}",
                              f"use {', '.join(keywords) or 'no arguments'}")
