"""The batched shrinker: planted bugs shrink to the few events that show them."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings

from windtunnel.conformance.check import check
from windtunnel.conformance.focus import focus_cuts
from windtunnel.conformance.mismatch import Mismatch
from windtunnel.conformance.reductions import candidates, cuts
from windtunnel.conformance.shrink import shrink
from windtunnel.conformance.targets import callable_target, oracle_outputs
from windtunnel.oracle.engine import replay
from windtunnel.oracle.model.results import Emission, Output
from windtunnel.oracle.model.stream import events_of
from windtunnel.oracle.scenario import Scenario, parse_scenario
from windtunnel.simulator.strategies import streams

SPEC = parse_scenario({
    "window": {"kind": "fixed", "size": "10s", "tolerance": "2s", "on": "ts"},
    "group_by": ["user"],
    "aggregate": {"n": "count()", "total": "sum(bytes)"},
    "input": [],
})


CALL = 10
"""Streams per target call: a check draws only the streams up to the call that fails."""


def events(scenario: Scenario) -> int:
    return len(list(events_of(scenario.items)))


def emissions_only(profile: str) -> Any:
    def run(scenario: Scenario) -> list[Output]:
        return [o for o in oracle_outputs(scenario, profile) if isinstance(o, Emission)]
    return run


def drops_windows_of_three(scenario: Scenario) -> list[Output]:
    """Planted bug: windows counting 3 or more events vanish."""
    return [o for o in oracle_outputs(scenario)
            if not (isinstance(o, Emission) and (o.row.get("n") or 0) >= 3)]


def test_planted_bug_shrinks_to_exactly_the_events_it_needs() -> None:
    target = callable_target(drops_windows_of_three, name="bug", reports_drops=True)
    result = check(SPEC, target, examples=200, seed=1, batch_size=CALL)
    assert result.failure is not None
    assert events(result.failure.original) > 3
    assert events(result.failure.scenario) == 3
    (missing,) = result.failure.mismatch.missing
    assert isinstance(missing, Emission) and missing.row["n"] == 3


def test_stock_spark_stand_in_shrinks_to_at_most_three_events() -> None:
    """The oracle's spark profile (stock Spark's emissions) against the default profile."""
    target = callable_target(emissions_only("spark"), name="stock")
    for seed in range(3):
        result = check(SPEC, target, examples=100, seed=seed, batch_size=CALL)
        assert result.failure is not None
        assert events(result.failure.scenario) <= 3
        assert result.failure.shrink_seconds < 60  # generous: milliseconds in practice


def test_late_data_bug_shrinks_small() -> None:
    """Planted bug: late events are counted instead of dropped (tolerance ignored)."""
    def never_late(scenario: Scenario) -> list[Output]:
        return list(oracle_outputs(scenario_with_huge_tolerance(scenario)))

    def scenario_with_huge_tolerance(scenario: Scenario) -> Scenario:
        window = replace(scenario.query.window, tolerance_ms=10**9)  # type: ignore[type-var]
        return replace(scenario, query=replace(scenario.query, window=window))

    target = callable_target(never_late, name="never-late", reports_drops=True)
    result = check(SPEC, target, examples=200, seed=2, batch_size=CALL)
    assert result.failure is not None
    assert events(result.failure.scenario) <= 3


class CostlyTarget:
    """A target whose calls take ``fixed_s`` plus ``per_candidate_s`` each on a fake clock;
    planted bug: windows counting 3 or more events vanish."""

    def __init__(self, per_candidate_s: float, fixed_s: float = 0.0) -> None:
        self.now = 0.0
        self.per_candidate_s = per_candidate_s
        self.fixed_s = fixed_s
        self.calls: list[tuple[float, int]] = []  # (start, candidates)

    def clock(self) -> float:
        return self.now

    def fails(self, scenarios: Sequence[Scenario]) -> list[bool]:
        self.calls.append((self.now, len(scenarios)))
        self.now += self.fixed_s + self.per_candidate_s * len(scenarios)
        return [any(o not in drops_windows_of_three(s) for o in oracle_outputs(s))
                for s in scenarios]


@functools.cache
def _failing() -> Scenario:
    target = callable_target(drops_windows_of_three, name="bug", reports_drops=True)
    failure = check(SPEC, target, examples=200, seed=1, shrink_seconds=0, batch_size=CALL).failure
    assert failure is not None and events(failure.original) > 3
    return failure.original


def test_chunks_start_at_one_and_grow_while_calls_stay_short() -> None:
    cheap = CostlyTarget(per_candidate_s=0.01)
    shrunk = shrink(_failing(), cheap.fails, clock=cheap.clock, max_chunk=16)
    sizes = [n for _, n in cheap.calls]
    assert sizes[:3] == [1, 2, 4] and max(sizes) <= 16
    assert all(b <= 2 * a for a, b in itertools.pairwise(sizes))
    assert events(shrunk.scenario) == 3 and not shrunk.timed_out
    capped = CostlyTarget(per_candidate_s=0.01)
    shrink(_failing(), capped.fails, clock=capped.clock, max_chunk=3)
    assert max(n for _, n in capped.calls) == 3
    costly = CostlyTarget(per_candidate_s=5.0)  # one candidate already passes call_seconds
    shrink(_failing(), costly.fails, clock=costly.clock, max_seconds=600)
    assert {n for _, n in costly.calls} == {1}
    middling = CostlyTarget(per_candidate_s=3.0)  # one fits call_seconds, two do not
    shrink(_failing(), middling.fails, clock=middling.clock, max_seconds=600)
    sizes = [n for _, n in middling.calls]
    assert set(sizes) == {1, 2}
    assert all(a == 1 for a, b in itertools.pairwise(sizes) if b == 2)


@pytest.mark.parametrize(("per_candidate_s", "first_cost_s"), [(7.0, 7.0), (7.0, None), (0.5, 0.5)])
def test_no_call_starts_that_cannot_finish_within_the_budget(
    per_candidate_s: float, first_cost_s: float | None
) -> None:
    target = CostlyTarget(per_candidate_s, fixed_s=0.0)
    shrunk = shrink(_failing(), target.fails, clock=target.clock, max_seconds=20,
                    first_cost_s=first_cost_s)
    assert target.now <= 20
    assert shrunk.calls == len(target.calls)
    if per_candidate_s == 7.0:
        assert shrunk.timed_out and len(target.calls) == 2


def test_the_events_behind_the_divergence_are_cut_first() -> None:
    failing = _failing()
    target = CostlyTarget(per_candidate_s=1.0)
    judged: dict[str, Mismatch] = {}

    def fails(scenarios: Sequence[Scenario]) -> list[bool]:
        verdicts = target.fails(scenarios)
        for scenario in scenarios:
            missing = tuple(o for o in oracle_outputs(scenario)
                            if o not in drops_windows_of_three(scenario))
            judged[repr(scenario.items)] = Mismatch(missing=missing)
        return verdicts

    judged[repr(failing.items)] = Mismatch(missing=tuple(
        o for o in oracle_outputs(failing) if o not in drops_windows_of_three(failing)))
    shrunk = shrink(failing, fails, clock=target.clock,
                    focus=lambda s: focus_cuts(s, judged.get(repr(s.items))))
    assert events(shrunk.scenario) == 3
    first_round = shrunk.calls
    assert first_round <= 12, target.calls  # a focus cut, then no smaller cut fails


def test_kept_fields_stay_in_every_candidate() -> None:
    failing = _failing()
    payload_fields = {k for e in events_of(failing.items) for k in e.payload}
    seen: list[Scenario] = []

    def fails(scenarios: Sequence[Scenario]) -> list[bool]:
        seen.extend(scenarios)
        return [any(o not in drops_windows_of_three(s) for o in oracle_outputs(s))
                for s in scenarios]

    shrunk = shrink(failing, fails, keep_fields=payload_fields)
    assert seen and all(set(e.payload) == payload_fields
                        for s in seen for e in events_of(s.items))
    assert events(shrunk.scenario) == 3
    stopped = shrink(failing, fails, max_seconds=0)
    assert stopped.timed_out and stopped.scenario == failing


@settings(max_examples=30, deadline=None)
@given(streams(max_events=8, with_batches=True, with_advances=True, max_disorder_ms=5000,
               keys=["a", "b"], key_field="user"))
def test_candidates_are_valid_smaller_streams(items: tuple[Any, ...]) -> None:
    scenario = replace(SPEC, items=items)
    for candidate in (*cuts(scenario), *candidates(scenario)):
        seqs = [e.seq for e in events_of(candidate.items)]
        assert seqs == list(range(len(seqs)))
        replay(candidate)  # raises for a malformed stream
