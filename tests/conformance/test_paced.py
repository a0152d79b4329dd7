"""Paced idle_timeout scenarios: arrival gaps short or long, near misses left out."""

from __future__ import annotations

import pytest

from windtunnel.conformance.paced import Pacing, paced_variant, stable
from windtunnel.oracle.model.stream import Advance, Event
from windtunnel.oracle.scenario import Scenario, parse_scenario

WINDOW = {"kind": "fixed", "size": "10s", "idle_timeout": "5s"}


def scenario(arrivals: list[int]) -> Scenario:
    return parse_scenario({"name": "p", "window": WINDOW, "aggregate": {"n": "count()"},
                           "input": [{"event": {"ts": i}, "at": at} for i, at in enumerate(arrivals)]})


def walls(paced: Scenario) -> list[int]:
    return [i.at_ms if isinstance(i, Event) else i.to_ms for i in paced.items]


def test_gaps_become_short_or_long_and_an_idle_period_ends_the_scenario() -> None:
    # idle 5000 in the original: gaps 100 (short), 7000 (long), 4999 (short)
    paced = paced_variant(scenario([0, 100, 7100, 12099]), Pacing(300))
    assert paced is not None
    assert walls(paced) == [0, 20, 20 + 1000, 20 + 1000 + 20, 20 + 1000 + 20 + 1000]
    assert isinstance(paced.items[-1], Advance)
    assert getattr(paced.query.window, "idle_timeout_ms", None) == 300


def test_a_chain_of_short_gaps_near_the_idle_timeout_is_not_stable() -> None:
    # 11 short gaps of 20 ms: 220 ms apart, within 100 ms of the 300 ms idle timeout
    assert paced_variant(scenario(list(range(12))), Pacing(300)) is None
    assert paced_variant(scenario(list(range(5))), Pacing(300)) is not None


def test_stable_checks_every_pair_of_instants() -> None:
    assert stable(scenario([0, 150]), Pacing(100, short_ms=10, margin_ms=40, long_extra_ms=50))
    assert not stable(scenario([0, 120]), Pacing(100, short_ms=10, margin_ms=40, long_extra_ms=50))


def test_gaps_that_cannot_keep_the_margin_are_refused() -> None:
    with pytest.raises(ValueError, match="widen the gaps"):
        Pacing(300, short_ms=20, margin_ms=100, long_extra_ms=50)
