"""One implementation of the oracle at a time: the reference operators or a fast path.

:class:`RunQuery` is ``windtunnel.oracle.run`` (and ``replay``) on one of them; the
``run_query`` fixture (tests/oracle/conftest.py) gives one per test variant. Where no fast
path takes a run, the ``fast`` variant is skipped with the reason
(:func:`windtunnel.oracle.fast.refusal`): it never tests the reference twice. A fast path
runs with ``min_run=1``, so that even the shortest stream goes through its columns; where
it stops (a watermark, end of input) the reference takes over, as in any run.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from windtunnel.oracle.engine import reference_outputs
from windtunnel.oracle.fast import fast_outputs, refusal
from windtunnel.oracle.model.results import Output, Result
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.model.stream import Item
from windtunnel.oracle.profiles import PROFILES, check_supported
from windtunnel.oracle.scenario import Scenario

DEFAULT_RULES = Rules()


class RunQuery:
    """``run`` and ``replay`` on one implementation: ``reference`` or ``fast``."""

    def __init__(self, implementation: str) -> None:
        self.implementation = implementation

    def __call__(
        self, query: Query, items: Iterable[Item], *, rules: Rules = DEFAULT_RULES,
        profile: str = "tenzir", time_unit_ms: int = 1, start_wall_ms: int = 0,
    ) -> Result:
        outputs: Iterable[Output]
        if self.implementation == "reference":
            outputs = reference_outputs(
                query, items, rules=rules, profile=profile, time_unit_ms=time_unit_ms,
                start_wall_ms=start_wall_ms,
            )
        else:
            reason = refusal(query, rules, profile)
            if reason is not None:
                pytest.skip(f"no fast path: {reason}")
            if profile in PROFILES:
                check_supported(PROFILES[profile], query)
            outputs = fast_outputs(
                query, items, rules=rules, time_unit_ms=time_unit_ms,
                start_wall_ms=start_wall_ms, min_run=1,
            )
        return Result(tuple(outputs))

    def replay(self, scenario: Scenario) -> Result:
        """A parsed scenario with its profile, rules and time unit (as ``engine.replay``)."""
        return self(
            scenario.query, scenario.items, rules=scenario.rules, profile=scenario.profile.name,
            time_unit_ms=scenario.time_unit_ms, start_wall_ms=scenario.start_wall_ms,
        )
