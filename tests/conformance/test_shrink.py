"""The batched shrinker: planted bugs shrink to the few events that show them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from hypothesis import given, settings

from windtunnel.conformance.check import check
from windtunnel.conformance.shrink import candidates, shrink, size
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
    result = check(SPEC, target, examples=200, seed=1)
    assert result.failure is not None
    assert events(result.failure.original) > 3
    assert events(result.failure.scenario) == 3
    (missing,) = result.failure.mismatch.missing
    assert isinstance(missing, Emission) and missing.row["n"] == 3


def test_stock_spark_stand_in_shrinks_to_at_most_three_events() -> None:
    """The oracle's spark profile (stock Spark's emissions) against the default profile."""
    target = callable_target(emissions_only("spark"), name="stock")
    for seed in range(3):
        result = check(SPEC, target, examples=100, seed=seed)
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
    result = check(SPEC, target, examples=200, seed=2)
    assert result.failure is not None
    assert events(result.failure.scenario) <= 3


def test_every_round_is_asked_in_batches_and_shrinking_always_finishes() -> None:
    calls: list[int] = []
    target = callable_target(drops_windows_of_three, name="bug", reports_drops=True)
    failing = check(SPEC, target, examples=200, seed=1).failure
    assert failing is not None

    def fails(scenarios: Sequence[Scenario]) -> list[bool]:
        calls.append(len(scenarios))
        return [any(o not in drops_windows_of_three(s) for o in oracle_outputs(s))
                for s in scenarios]

    shrunk = shrink(failing.original, fails, batch_size=7)
    assert max(calls) <= 7 and shrunk.calls == len(calls)
    assert events(shrunk.scenario) == 3 and size(shrunk.scenario) < size(failing.original)
    stopped = shrink(failing.original, fails, max_seconds=0)
    assert stopped.timed_out and stopped.scenario == failing.original


@settings(max_examples=30, deadline=None)
@given(streams(max_events=8, with_batches=True, with_advances=True, max_disorder_ms=5000,
               keys=["a", "b"], key_field="user"))
def test_candidates_are_valid_smaller_streams(items: tuple[Any, ...]) -> None:
    scenario = replace(SPEC, items=items)
    for candidate in candidates(scenario):
        seqs = [e.seq for e in events_of(candidate.items)]
        assert seqs == list(range(len(seqs)))
        replay(candidate)  # raises for a malformed stream
