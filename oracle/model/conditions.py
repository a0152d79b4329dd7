"""Small boolean conditions over event fields: eKuiper's ``WHERE``, ``FILTER (WHERE ...)``,
``HAVING`` and ``OVER (WHEN ...)``.

Grammar: ``or := and (OR and)*``, ``and := not (AND not)*``, ``not := NOT not | atom``,
``atom := ( or ) | operand op operand``; ``op`` one of ``= == != <> < <= > >=``; an operand is
a field path (``a.b``), a number, a quoted string (``'x'`` or ``"x"``), ``true``, ``false`` or
``null``. A comparison with a missing or null field, or between values of different types, is
false (SQL's unknown). Raises InvalidSpec pointing at the offending token.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.fields import getter

_TOKEN: Final = re.compile(
    r"\s*(?:(?P<num>-?\d+(?:\.\d+)?)|(?P<str>'[^']*'|\"[^\"]*\")|(?P<op><=|>=|<>|!=|==|=|<|>)"
    r"|(?P<paren>[()])|(?P<word>[A-Za-z_][\w.]*|\*)|(?P<bad>\S))"
)
_OPS: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "=": lambda a, b: a == b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    "<>": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}
_CONSTANTS: Final = {"true": True, "false": False, "null": None}
Predicate = Callable[[Mapping[str, Any]], bool]


@dataclass(frozen=True, slots=True)
class Condition:
    """A parsed condition; call :meth:`holds` on a payload (or an output row)."""

    text: str
    predicate: Predicate = field(compare=False, repr=False)

    def holds(self, payload: Mapping[str, Any]) -> bool:
        return self.predicate(payload)

    def __str__(self) -> str:
        return self.text


def parse_condition(text: object, where: str, columns: Mapping[str, str] | None = None) -> Condition:
    """Parse ``text``; ``columns`` maps call texts such as ``count(*)`` to row columns (HAVING).
    Without ``columns`` a call reads the row key spelled as the call, lower-case without spaces
    (``COUNT( * )`` reads ``count(*)``).

    Raises InvalidSpec naming ``where``, the offending token and what is supported.
    """
    if not isinstance(text, str) or not text.strip():
        raise InvalidSpec(where, text, "must be a condition", "write e.g. temperature > 20")
    parser = _Parser(text, where, columns)
    predicate = parser.parse_or()
    if parser.peek() is not None:
        parser.fail("unexpected token")
    return Condition(text.strip(), predicate)


class _Parser:
    def __init__(self, text: str, where: str, columns: Mapping[str, str] | None) -> None:
        self.text = text
        self.where = where
        self.columns = None if columns is None else {
            k.replace(" ", "").lower(): v for k, v in columns.items()
        }
        self.tokens: list[tuple[str, str, int]] = []
        for match in _TOKEN.finditer(text):
            kind = match.lastgroup
            if kind is None:
                continue
            self.tokens.append((kind, match.group(kind), match.start(kind)))
        self.pos = 0

    def fail(self, what: str) -> None:
        token = self.peek()
        shown = "end of text" if token is None else f"{token[1]!r} at offset {token[2]}"
        raise InvalidSpec(
            self.where, self.text, f"{what}: {shown}",
            "supported: field comparisons (= != <> < <= > >=) with numbers, 'strings', true, "
            "false, null, joined by AND, OR, NOT and parentheses",
        )

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def keyword(self, word: str) -> bool:
        token = self.peek()
        if token is not None and token[0] == "word" and token[1].upper() == word:
            self.pos += 1
            return True
        return False

    def parse_or(self) -> Predicate:
        parts = [self.parse_and()]
        while self.keyword("OR"):
            parts.append(self.parse_and())
        return parts[0] if len(parts) == 1 else (lambda p: any(f(p) for f in parts))

    def parse_and(self) -> Predicate:
        parts = [self.parse_not()]
        while self.keyword("AND"):
            parts.append(self.parse_not())
        return parts[0] if len(parts) == 1 else (lambda p: all(f(p) for f in parts))

    def parse_not(self) -> Predicate:
        if self.keyword("NOT"):
            inner = self.parse_not()
            return lambda p: not inner(p)
        token = self.peek()
        if token is not None and token[1] == "(":
            self.pos += 1
            inner = self.parse_or()
            token = self.peek()
            if token is None or token[1] != ")":
                self.fail("expected )")
            self.pos += 1
            return inner
        left = self.operand()
        token = self.peek()
        if token is None or token[0] != "op":
            self.fail("expected a comparison operator")
        assert token is not None
        self.pos += 1
        op = _OPS[token[1]]
        right = self.operand()
        return lambda p: _compare(op, left(p), right(p))

    def operand(self) -> Callable[[Mapping[str, Any]], Any]:
        token = self.peek()
        if token is None:
            self.fail("expected a field or a value")
        assert token is not None
        kind, text, _ = token
        self.pos += 1
        if kind == "num":
            number = float(text) if "." in text else int(text)
            return lambda p: number
        if kind == "str":
            string = text[1:-1]
            return lambda p: string
        if kind == "word":
            if text.lower() in _CONSTANTS:
                constant = _CONSTANTS[text.lower()]
                return lambda p: constant
            nxt = self.peek()
            if nxt is not None and nxt[1] == "(":  # an aggregate call in HAVING: count(*)
                end = self.text.find(")", nxt[2])
                call = self.text[token[2] : end + 1].replace(" ", "").lower()
                if end < 0 or (self.columns is not None and call not in self.columns):
                    self.pos -= 1
                    self.fail("not a column of this query")
                while (t := self.peek()) is not None and t[1] != ")":
                    self.pos += 1
                self.pos += 1
                key = call if self.columns is None else self.columns[call]
                return lambda p: p.get(key)
            return getter(text)
        self.pos -= 1
        self.fail("expected a field or a value")
        raise AssertionError  # unreachable: fail raises


def _compare(op: Callable[[Any, Any], bool], left: Any, right: Any) -> bool:
    if left is None or right is None:
        return False
    numeric = (int, float)
    if isinstance(left, bool) != isinstance(right, bool):
        return False
    if not (isinstance(left, numeric) and isinstance(right, numeric)) and type(left) is not type(
        right
    ):
        return False
    try:
        return bool(op(left, right))
    except TypeError:
        return False
