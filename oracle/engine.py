"""Running a query over a stream: the oracle's entry points."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from windtunnel.oracle.driver import Context, Driver, Operator
from windtunnel.oracle.fixed import FixedOperator
from windtunnel.oracle.results import Output, Result
from windtunnel.oracle.rules import Rules
from windtunnel.oracle.spec import FixedWindows, Query
from windtunnel.oracle.stream import Item

if TYPE_CHECKING:
    from windtunnel.oracle.scenario import Scenario

DEFAULT_RULES = Rules()


def stream_outputs(
    query: Query,
    items: Iterable[Item],
    *,
    rules: Rules = DEFAULT_RULES,
    time_unit_ms: int = 1,
    start_wall_ms: int = 0,
) -> Iterator[Output]:
    """Outputs as the stream is consumed; memory is bounded by the open windows.

    ``time_unit_ms`` scales plain-number event times. Raises InvalidStream for a
    malformed stream (wall clock going back, seq out of order, items after End).
    """
    driver = Driver(query, operator_for, rules, time_unit_ms=time_unit_ms, start_wall_ms=start_wall_ms)
    return driver.run(items)


def run(
    query: Query,
    items: Iterable[Item],
    *,
    rules: Rules = DEFAULT_RULES,
    time_unit_ms: int = 1,
    start_wall_ms: int = 0,
) -> Result:
    """Every output of ``query`` over ``items``, collected (see :func:`stream_outputs`)."""
    return Result(
        tuple(
            stream_outputs(query, items, rules=rules, time_unit_ms=time_unit_ms, start_wall_ms=start_wall_ms)
        )
    )


def operator_for(query: Query, ctx: Context) -> Operator:
    """The operator implementing ``query.window``'s kind."""
    if isinstance(query.window, FixedWindows):
        return FixedOperator(query, ctx)
    raise TypeError(f"no operator for {type(query.window).__name__}")


def replay(scenario: Scenario) -> Result:
    """Run a parsed scenario on the oracle with its profile, rules and time unit."""
    return run(
        scenario.query,
        scenario.items,
        rules=scenario.rules,
        time_unit_ms=scenario.time_unit_ms,
        start_wall_ms=scenario.start_wall_ms,
    )
