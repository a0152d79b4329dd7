"""Checking a target against the oracle: the spec's own input, then generated streams,
then the first divergence shrunk to a small counterexample.

Expected outputs are the oracle's under ``profile`` (default: the spec's), compared as
:mod:`windtunnel.conformance.mismatch` says (every emitted row, or with ``compare="final"``
the last row per window: a sink that keeps one row per window, such as update mode into a
merge or Delta table).

Targets run ``batch_size`` scenarios per call (default :data:`DEFAULT_BATCH_SIZE`: the
Spark targets put many scenarios in one streaming query, so a call's cost is mostly the
query's, not the scenarios'). The first divergence is shrunk by
:mod:`windtunnel.conformance.failure`: on a stand-in where one reproduces the target (an
oracle profile registered for it, ``spark`` for stock Spark; the spec as the job's plan
reads it; with ``stand_in=DETECT`` the spec's variants, :mod:`.stand_ins`), else on the
target itself with chunks sized to its cost, and confirmed on the target.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass

from windtunnel.conformance.failure import DETECT, DETECTED, Failure, shrunk_failure
from windtunnel.conformance.generate import MAX_EVENTS, generate
from windtunnel.conformance.judge import Judge
from windtunnel.conformance.mismatch import (
    FINAL_IGNORED,
    Late,
    Mismatch,
    compare_run,
    describe_output,
    final_rows,
)
from windtunnel.conformance.targets import Target
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.stream import End
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.scenario import Scenario

__all__ = [
    "COMPARES",
    "DEFAULT_BATCH_SIZE",
    "DETECT",
    "DETECTED",
    "FINAL_IGNORED",
    "CheckResult",
    "Failure",
    "Late",
    "Mismatch",
    "Progress",
    "check",
    "compare_run",
    "describe_output",
    "final_rows",
]

COMPARES = ("rows", "final")
"""What is compared: every emitted row, or the last row per window (:func:`final_rows`)."""

DEFAULT_BATCH_SIZE = 200
"""Scenarios per target call: ``--examples 200`` plus the spec's own input in two Spark
calls (the job runner puts up to 200 scenarios in a query, the production operator 400)."""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """``checked`` scenarios in ``seconds``; ``failure`` None when all agreed."""

    target: str
    profile: str
    checked: int
    seconds: float
    failure: Failure | None = None

    @property
    def rate_per_min(self) -> float:
        return self.checked * 60.0 / self.seconds if self.seconds > 0 else 0.0


Progress = Callable[[int], None]
"""Told how many more scenarios were checked."""


def check(
    spec: Scenario,
    target: Target,
    *,
    profile: str | None = None,
    examples: int = 100,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    stand_in: str | None = None,
    shrink_seconds: float = 60.0,
    max_events: int = MAX_EVENTS,
    progress: Progress | None = None,
    on_shrinking: Callable[[Scenario], None] | None = None,
    compare: str = "rows",
    clock: Callable[[], float] = time.monotonic,
) -> CheckResult:
    """Check ``target`` on ``spec``'s own input (if it has events) and ``examples``
    generated streams, ``batch_size`` per target call; stop at the first divergence and
    shrink it within ``shrink_seconds`` (``on_shrinking`` is told the diverging scenario
    first). ``compare``: one of :data:`COMPARES`; ``clock``: seconds, monotonic. Raises
    InvalidSpec for bad options or a spec the profile cannot run."""
    chosen = profile or spec.profile.name
    profile_named(chosen)
    if compare not in COMPARES:
        raise InvalidSpec("--compare", compare, "unknown comparison",
                          f"use one of {', '.join(COMPARES)}")
    if isinstance(batch_size, bool) or batch_size < 1:
        raise InvalidSpec("--batch-size", batch_size, "must be 1 or more", "give e.g. 200")
    if stand_in is not None and stand_in != DETECT:
        profile_named(stand_in)
    started = clock()
    judge = Judge(target, chosen, compare)
    judge.expected(spec)  # the profile can run the spec (else InvalidSpec before any target run)
    own = [spec] if any(not isinstance(i, End) for i in spec.items) else []
    generated = generate(spec, examples, seed, max_events=max_events)
    # the spec's own input runs alone first: a failure there is reported without waiting
    # for a whole batch of generated streams
    chunks = itertools.chain(
        [own] if own else [], iter(lambda: list(itertools.islice(generated, batch_size)), [])
    )
    checked = 0
    for calls, chunk in enumerate(chunks, start=1):
        before = clock()
        verdicts = judge.judge(chunk)
        took = clock() - before
        bad = next((i for i, (mismatch, _) in enumerate(verdicts) if mismatch), None)
        done = len(chunk) if bad is None else bad + 1
        checked += done
        if progress is not None:
            progress(done)
        if bad is not None:
            if on_shrinking is not None:
                on_shrinking(chunk[bad])
            failure = shrunk_failure(chunk[bad], judge, stand_in=stand_in,
                                     seconds=shrink_seconds, max_chunk=batch_size,
                                     found_alone=len(chunk) == 1,
                                     alone_s=took if calls > 1 else None,  # 1: start-up too
                                     clock=clock)
            return CheckResult(target.name, chosen, checked, clock() - started, failure)
    return CheckResult(target.name, chosen, checked, clock() - started)


