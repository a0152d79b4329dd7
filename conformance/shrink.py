"""Shrinking a failing stream: delta debugging sized to what a call to the target costs.

A round lists the reductions of the current stream (:mod:`windtunnel.conformance.reductions`),
big cuts first: ``focus`` (the caller's cuts to the events behind the divergence,
:mod:`windtunnel.conformance.focus`), then ddmin's cuts (each half alone; each quarter alone
and each quarter dropped; each eighth dropped, ...; each single event dropped), then every
other reduction smallest first. The fields the spec reads and those in ``keep_fields``
(those the target reads) stay in every event. ``fails`` is asked about the candidates in
order, a chunk per call, stopping at the first chunk with a failure: its smallest failing
candidate is the next stream. A stream asked about once is not asked again.

Chunks are sized to the target's cost: the first holds one candidate, and each next one
twice as many as the last while a call stays within ``call_seconds`` (half as many after a
longer call). No call starts that cannot finish within ``max_seconds`` at the measured cost
(:class:`Pace`; ``first_cost_s`` before any call): the chunk is cut to what fits, and
shrinking stops when not even one candidate does. Rounds repeat until no candidate fails;
the smallest failure so far is returned, so shrinking always finishes.

"Smaller" is :func:`~windtunnel.conformance.reductions.size`: fewer events, then fewer
items, batches, distinct keys, smaller event times, fewer fields, fewer arrival times.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from windtunnel.conformance.reductions import candidates, cuts, size
from windtunnel.oracle.scenario import Scenario

Fails = Callable[[Sequence[Scenario]], list[bool]]
"""Whether each scenario still fails, for many scenarios in one call."""

Focus = Callable[[Scenario], Sequence[Scenario]]
"""The big cuts to try first on a failing stream (each a smaller stream)."""

CALL_SECONDS = 4.0
"""How long a call may take before chunks stop growing (seconds)."""


@dataclass(frozen=True, slots=True)
class Shrunk:
    """The smallest failing scenario found, the rounds that led there, the calls made and
    candidates asked about, and whether the time budget ended it."""

    scenario: Scenario
    rounds: int
    calls: int
    candidates: int
    timed_out: bool


MARGIN = 1.25
"""A call is expected to take up to this much longer than the calls measured so far."""

RECENT = 3
"""Calls whose costs estimate the next one."""


class Pace:
    """Chunk sizes from the measured cost of calls (see the module docstring): after a call
    within ``call_seconds`` the next may hold twice as many candidates, after a longer one
    half as many. A call of ``n`` candidates is expected to take :data:`MARGIN` times the
    larger of the shortest recent call (what any call costs) and ``n`` times the dearest
    recent candidate; a chunk is cut to what is expected to fit the time left."""

    def __init__(self, call_seconds: float = CALL_SECONDS, first_cost_s: float | None = None,
                 max_chunk: int | None = None) -> None:
        self.call_seconds = call_seconds
        self.max_chunk = max_chunk
        self.chunk = 1
        self._recent: list[tuple[int, float]] = [] if first_cost_s is None else [
            (1, first_cost_s)]

    def expected_s(self, candidates: int) -> float | None:
        """Seconds a call of ``candidates`` is expected to take (None: nothing measured)."""
        if not self._recent:
            return None
        floor = min(s for _, s in self._recent)
        per = max(s / n for n, s in self._recent)
        return MARGIN * max(floor, per * candidates)

    def next_chunk(self, left_s: float) -> int:
        """Candidates for the next call with ``left_s`` seconds left (0: none fits)."""
        chunk = self.chunk if left_s > 0 else 0
        while chunk > 0 and (self.expected_s(chunk) or 0.0) > left_s:
            chunk -= 1
        return chunk

    def measured(self, candidates: int, seconds: float) -> None:
        """A call of ``candidates`` took ``seconds``."""
        self._recent = [*self._recent, (candidates, seconds)][-RECENT:]
        chunk = 2 * candidates if seconds <= self.call_seconds else max(1, candidates // 2)
        self.chunk = chunk if self.max_chunk is None else min(chunk, self.max_chunk)


def shrink(
    scenario: Scenario,
    fails: Fails,
    *,
    max_seconds: float = 60.0,
    clock: Callable[[], float] = time.monotonic,
    call_seconds: float = CALL_SECONDS,
    first_cost_s: float | None = None,
    max_chunk: int | None = None,
    keep_fields: Collection[str] = (),
    focus: Focus | None = None,
) -> Shrunk:
    """The smallest failing variant of ``scenario`` (which must fail) reachable by
    candidate reductions (module docstring); ``max_chunk`` caps the candidates per call."""
    started = clock()
    pace = Pace(call_seconds, first_cost_s, max_chunk)
    current = scenario
    rounds = calls = tried = 0
    asked: set[str] = {repr(scenario.items)}
    while True:
        ordered = [c for c in _ordered(current, keep_fields, focus) if repr(c.items) not in asked]
        found = None
        index = 0
        while index < len(ordered):
            chunk_size = pace.next_chunk(max_seconds - (clock() - started))
            if chunk_size == 0:
                return Shrunk(current, rounds, calls, tried, True)
            chunk = ordered[index : index + chunk_size]
            index += len(chunk)
            before = clock()
            verdicts = fails(chunk)
            pace.measured(len(chunk), clock() - before)
            calls += 1
            tried += len(chunk)
            asked.update(repr(c.items) for c in chunk)
            failing = [c for c, bad in zip(chunk, verdicts, strict=True) if bad]
            if failing:
                found = min(failing, key=size)
                break
        if found is None:
            return Shrunk(current, rounds, calls, tried, False)
        current = found
        rounds += 1


def _ordered(current: Scenario, keep_fields: Collection[str], focus: Focus | None) -> list[Scenario]:
    """The round's candidates (module docstring), each smaller than ``current``, once."""
    here = size(current)
    seen: dict[str, Scenario] = {}
    first = [*(focus(current) if focus is not None else ()), *cuts(current)]
    rest = sorted(candidates(current, keep_fields), key=size)
    for candidate in (*first, *rest):
        if size(candidate) < here:
            seen.setdefault(repr(candidate.items), candidate)
    return list(seen.values())
