"""A tokenizer shared by the window-clause parsers, with errors that point at a token."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, NoReturn

from windtunnel.oracle.model.errors import InvalidSpec

_TOKEN: Final = re.compile(
    r"\s*(?:(?P<str>'[^']*'|\"[^\"]*\")"
    r"|(?P<num>\d+(?:\.\d+)?(?:ms|[a-zA-Z]+)?)"
    r"|(?P<op><=|>=|<>|!=|==|[=<>])"
    r"|(?P<punct>[(){}\[\],;!*`:.$])"
    r"|(?P<word>[A-Za-z_][\w]*)"
    r"|(?P<bad>\S))"
)


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # str num op punct word bad end
    text: str
    offset: int

    @property
    def upper(self) -> str:
        return self.text.upper()


class Tokens:
    """A cursor over the tokens of ``text``; ``fail`` raises InvalidSpec naming ``field``."""

    def __init__(self, text: str, field: str, supported: str) -> None:
        self.text = text
        self.field = field
        self.supported = supported
        self.items = [
            Token(m.lastgroup, m.group(m.lastgroup), m.start(m.lastgroup))
            for m in _TOKEN.finditer(text)
            if m.lastgroup is not None
        ]
        self.items.append(Token("end", "", len(text)))
        self.pos = 0

    def peek(self, ahead: int = 0) -> Token:
        return self.items[min(self.pos + ahead, len(self.items) - 1)]

    def next(self) -> Token:
        token = self.peek()
        if token.kind != "end":
            self.pos += 1
        return token

    def at_end(self) -> bool:
        return self.peek().kind == "end"

    def is_word(self, *words: str) -> bool:
        token = self.peek()
        return token.kind == "word" and token.upper in words

    def take_word(self, *words: str) -> bool:
        if self.is_word(*words):
            self.pos += 1
            return True
        return False

    def expect_word(self, *words: str) -> Token:
        if not self.is_word(*words):
            self.fail(f"expected {' or '.join(words)}")
        return self.next()

    def take(self, text: str) -> bool:
        if self.peek().text == text and self.peek().kind in ("punct", "op"):
            self.pos += 1
            return True
        return False

    def expect(self, text: str) -> Token:
        if not self.take(text):
            self.fail(f"expected {text!r}")
        return self.items[self.pos - 1]

    def rest_from(self, token: Token) -> str:
        """The source text from ``token`` to the current position."""
        return self.text[token.offset : self.peek().offset].strip()

    def fail(self, what: str, token: Token | None = None) -> NoReturn:
        token = token or self.peek()
        shown = "the end of the text" if token.kind == "end" else repr(token.text)
        raise InvalidSpec(
            self.field, self.text, f"{what}, found {shown} at offset {token.offset}",
            f"supported: {self.supported}",
        )
