"""Differential comparison of two runs' outputs (an engine against the oracle).

Outputs are compared as multisets of canonical JSON records: the order of outputs
is not part of the contract across engines (Tenzir's page: "window makes no
ordering guarantees about its output"). ``fields`` chooses what is compared; by
default everything the contract defines except ``wall_ms`` and ``after_seq``,
which an engine may only know up to micro-batch granularity.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from windtunnel.oracle.model.results import Output

DEFAULT_IGNORED = ("wall_ms", "after_seq", "message")


def canonical(output: Output, ignore: Sequence[str] = DEFAULT_IGNORED) -> str:
    """A stable JSON text for one output without the ``ignore``d fields."""
    data: dict[str, Any] = output.to_json()
    for name in ignore:
        data.pop(name, None)
    return json.dumps(data, sort_keys=True, default=str)


@dataclass(frozen=True, slots=True)
class Divergence:
    """Outputs one side produced more often than the other (``count`` extra copies)."""

    side: str
    record: str
    count: int

    def describe(self, left: str, right: str) -> str:
        who = left if self.side == "left" else right
        other = right if self.side == "left" else left
        times = "" if self.count == 1 else f" ({self.count} times)"
        return f"only {who}{times}, not {other}: {self.record}"


def diverge(
    left: Iterable[Output], right: Iterable[Output], ignore: Sequence[str] = DEFAULT_IGNORED
) -> list[Divergence]:
    """Every output that one side has and the other lacks, as multisets; empty: they agree."""
    left_counts = Counter(canonical(o, ignore) for o in left)
    right_counts = Counter(canonical(o, ignore) for o in right)
    found = [Divergence("left", r, n) for r, n in sorted((left_counts - right_counts).items())]
    found += [Divergence("right", r, n) for r, n in sorted((right_counts - left_counts).items())]
    return found


def report(divergences: Sequence[Divergence], left: str = "engine", right: str = "oracle") -> str:
    """A readable multi-line diff; empty string when there is nothing to report."""
    if not divergences:
        return ""
    lines = [f"{len(divergences)} divergence(s) between {left} and {right}:"]
    lines += [f"  {d.describe(left, right)}" for d in divergences]
    return "\n".join(lines)
