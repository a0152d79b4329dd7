"""Small boolean conditions over event fields: eKuiper's ``WHERE``, ``FILTER (WHERE ...)``,
``HAVING`` and ``OVER (WHEN ...)``, and the ``where`` stage before the window.

Grammar: ``or := and (OR and)*``, ``and := not (AND not)*``, ``not := NOT not | atom``,
``atom := ( or ) | operand op operand``; ``op`` one of ``= == != <> < <= > >=``; an operand is
a field path (``a.b``), a number, a quoted string (``'x'`` or ``"x"``), ``true``, ``false`` or
``null``. Two readings of a parsed condition: :meth:`Condition.holds` (two-valued: a
comparison with a missing or null field, or between values of different types, is false,
and ``NOT`` turns it true) and :meth:`Condition.truth` (three-valued, SQL's: such a
comparison is unknown, ``None``, and ``NOT``/``AND``/``OR`` follow Kleene's logic; with
``nulls_compared`` an equality with a null side compares the null as a value, as Tenzir's
``==`` does). Raises InvalidSpec pointing at the offending token.
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
EQUALITY: Final = frozenset({"=", "==", "!=", "<>"})
"""The operators that test equality (the others order their operands)."""
_CONSTANTS: Final = {"true": True, "false": False, "null": None}
Predicate = Callable[[Mapping[str, Any]], bool]


# --- the parsed tree: operands, comparisons and the connectives ---------------------------


@dataclass(frozen=True, slots=True)
class FieldRef:
    """An operand reading the field ``path`` (a dotted path; missing reads as None), or, in
    HAVING, the output row column ``path`` (``row``)."""

    path: str
    row: bool = False
    read: Callable[[Mapping[str, Any]], Any] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        path = self.path
        read = (lambda p: p.get(path)) if self.row else getter(path)
        object.__setattr__(self, "read", read)

    def value(self, payload: Mapping[str, Any]) -> Any:
        return self.read(payload)


@dataclass(frozen=True, slots=True)
class Literal:
    """A constant operand: a number, a string, a boolean or None (``null``)."""

    value_: Any

    def value(self, payload: Mapping[str, Any]) -> Any:
        return self.value_


Operand = FieldRef | Literal


@dataclass(frozen=True, slots=True)
class Compare:
    """``left op right``."""

    op: str
    left: Operand
    right: Operand


@dataclass(frozen=True, slots=True)
class Not:
    """The negation of ``inner``."""

    inner: Node


@dataclass(frozen=True, slots=True)
class All:
    """Every part (AND)."""

    parts: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    """At least one part (OR)."""

    parts: tuple[Node, ...]


Node = Compare | Not | All | AnyOf


def _comparable(left: Any, right: Any) -> bool:
    """Neither null, and of one kind: both numbers (booleans are not numbers) or one type."""
    if left is None or right is None or isinstance(left, bool) != isinstance(right, bool):
        return False
    numeric = (int, float)
    return (isinstance(left, numeric) and isinstance(right, numeric)) or type(left) is type(right)


def _compare(op: str, left: Any, right: Any) -> bool:
    """The two-valued comparison: false for a null side or values of different kinds."""
    if not _comparable(left, right):
        return False
    try:
        return bool(_OPS[op](left, right))
    except TypeError:
        return False


def holds(node: Node, payload: Mapping[str, Any]) -> bool:
    """The two-valued reading (see the module docstring)."""
    if isinstance(node, Compare):
        return _compare(node.op, node.left.value(payload), node.right.value(payload))
    if isinstance(node, Not):
        return not holds(node.inner, payload)
    if isinstance(node, All):
        return all(holds(p, payload) for p in node.parts)
    return any(holds(p, payload) for p in node.parts)


def truth(node: Node, payload: Mapping[str, Any], nulls_compared: bool = False) -> bool | None:
    """The three-valued reading: True, False or None (unknown); see the module docstring."""
    if isinstance(node, Compare):
        left, right = node.left.value(payload), node.right.value(payload)
        if nulls_compared and node.op in EQUALITY and (left is None or right is None):
            return (left is None and right is None) == (node.op in ("=", "=="))
        if not _comparable(left, right):
            if nulls_compared and node.op in EQUALITY and None not in (left, right):
                return node.op in ("!=", "<>")  # values of different kinds are not equal
            return None
        try:
            return bool(_OPS[node.op](left, right))
        except TypeError:
            return None
    if isinstance(node, Not):
        inner = truth(node.inner, payload, nulls_compared)
        return None if inner is None else not inner
    values = [truth(p, payload, nulls_compared) for p in node.parts]
    if isinstance(node, All):
        return False if False in values else None if None in values else True
    return True if True in values else None if None in values else False


def fields_of(node: Node) -> tuple[str, ...]:
    """The event fields ``node`` reads, in first-read order (HAVING's row columns left out)."""
    found: dict[str, None] = {}

    def walk(part: Node) -> None:
        if isinstance(part, Compare):
            for operand in (part.left, part.right):
                if isinstance(operand, FieldRef) and not operand.row:
                    found.setdefault(operand.path)
        elif isinstance(part, Not):
            walk(part.inner)
        else:
            for inner in part.parts:
                walk(inner)

    walk(node)
    return tuple(found)


@dataclass(frozen=True, slots=True)
class Condition:
    """A parsed condition: its text and tree; :meth:`holds` and :meth:`truth` read a payload
    (or an output row)."""

    text: str
    tree: Node = field(compare=False, repr=False)

    def holds(self, payload: Mapping[str, Any]) -> bool:
        return holds(self.tree, payload)

    def truth(self, payload: Mapping[str, Any], nulls_compared: bool = False) -> bool | None:
        return truth(self.tree, payload, nulls_compared)

    @property
    def predicate(self) -> Predicate:
        """:meth:`holds` as a function of the payload."""
        return self.holds

    @property
    def fields(self) -> tuple[str, ...]:
        """The event fields the condition reads."""
        return fields_of(self.tree)

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
    tree = parser.parse_or()
    if parser.peek() is not None:
        parser.fail("unexpected token")
    return Condition(text.strip(), tree)


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

    def parse_or(self) -> Node:
        parts = [self.parse_and()]
        while self.keyword("OR"):
            parts.append(self.parse_and())
        return parts[0] if len(parts) == 1 else AnyOf(tuple(parts))

    def parse_and(self) -> Node:
        parts = [self.parse_not()]
        while self.keyword("AND"):
            parts.append(self.parse_not())
        return parts[0] if len(parts) == 1 else All(tuple(parts))

    def parse_not(self) -> Node:
        if self.keyword("NOT"):
            return Not(self.parse_not())
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
        return Compare(token[1], left, self.operand())

    def operand(self) -> Operand:
        token = self.peek()
        if token is None:
            self.fail("expected a field or a value")
        assert token is not None
        kind, text, _ = token
        self.pos += 1
        if kind == "num":
            return Literal(float(text) if "." in text else int(text))
        if kind == "str":
            return Literal(text[1:-1])
        if kind == "word":
            if text.lower() in _CONSTANTS:
                return Literal(_CONSTANTS[text.lower()])
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
                return FieldRef(call if self.columns is None else self.columns[call], row=True)
            return FieldRef(text)
        self.pos -= 1
        self.fail("expected a field or a value")
        raise AssertionError  # unreachable: fail raises
