"""An :class:`Explanation`: the account of a scenario with its writers (words and JSON)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from windtunnel.oracle.explain.data import explanation_json
from windtunnel.oracle.explain.text import explanation_lines
from windtunnel.oracle.explain.values import Account


@dataclass(frozen=True, slots=True)
class Explanation(Account):
    """The whole account of a scenario under one profile: every input item in order, and
    the windows that were never emitted. ``lines()`` writes it in words, ``to_json()`` as data."""

    def lines(self, seqs: tuple[int, ...] = (), *, drops: bool = False) -> list[str]:
        """The account in words: every item; or only events ``seqs`` / only dropped events."""
        return explanation_lines(self, seqs, drops)

    def to_json(self, seqs: tuple[int, ...] = (), *, drops: bool = False) -> dict[str, Any]:
        """The account as JSON-ready data (same selection as :meth:`lines`)."""
        return explanation_json(self, seqs, drops)
