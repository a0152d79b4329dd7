"""What a Spark replay produced, and comparing two runs' outputs as multisets of JSON lines.

Shared by the replays on windtunnel's operators (:mod:`windtunnel.spark_impl.harness.replay`)
and on stock Spark (:mod:`windtunnel.spark_impl.stock.mapping`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from windtunnel.oracle.model.results import Emission, Output, Result, to_jsonl_line
from windtunnel.spark_impl.harness.feed import Feed


@dataclass(frozen=True, slots=True)
class SparkRun:
    """What a Spark replay produced: outputs in print order, and the micro-batches fed."""

    result: Result
    feed: Feed
    steps: tuple[int, ...]
    """Each output's stream step (schema.OUTPUT_COLUMNS ``step``)."""
    clock: str = "exact"
    """``exact`` (every output compared), ``batch`` (the general operator's batch clock:
    idle timeouts compared by micro-batch) or ``stock`` (stock Spark)."""


def comparable_line(output: Output, relax: bool) -> str:
    """``output`` as a sorted JSON line; ``relax`` leaves out an idle_timeout emission's timing."""
    data = json.loads(to_jsonl_line(output))
    if relax and isinstance(output, Emission) and output.reason == "idle_timeout":
        data["after_seq"] = data["wall_ms"] = None
    return json.dumps(data, sort_keys=True)


def divergences(
    expected: Sequence[Output], actual: Sequence[Output], *, clock: str = "exact"
) -> list[str]:
    """Readable differences between two runs compared as multisets of JSON lines.

    With ``clock="batch"`` the ``after_seq`` and ``wall_ms`` of ``idle_timeout``
    emissions are left out (see :func:`windtunnel.spark_impl.harness.replay.compare_with_oracle` for the
    rule that replaces them).
    """
    relax = clock == "batch"
    want = Counter(comparable_line(o, relax) for o in expected)
    got = Counter(comparable_line(o, relax) for o in actual)
    problems = []
    for line, n in sorted((want - got).items()):
        problems.append(f"- oracle only{'' if n == 1 else f' (x{n})'}: {line}")
    for line, n in sorted((got - want).items()):
        problems.append(f"+ spark only{'' if n == 1 else f' (x{n})'}: {line}")
    return problems
