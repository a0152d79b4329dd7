"""Running a query over a stream: the oracle's entry points."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from windtunnel.oracle.fast import fast_outputs, refusal
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.results import Output, Result
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import (
    CountWindows,
    CumulateWindows,
    FixedWindows,
    Query,
    SessionWindows,
    TrailingCountWindows,
    TrailingWindows,
)
from windtunnel.oracle.model.stream import Item
from windtunnel.oracle.profiles import PROFILES, check_rule_owners, check_supported
from windtunnel.oracle.windows.count import CountOperator
from windtunnel.oracle.windows.driver import Context, Driver, Operator
from windtunnel.oracle.windows.fixed import FixedOperator
from windtunnel.oracle.windows.output_modes import mode_operator
from windtunnel.oracle.windows.session_reorder import session_operator
from windtunnel.oracle.windows.trailing_ordered import trailing_operator

if TYPE_CHECKING:
    from windtunnel.oracle.scenario import Scenario

DEFAULT_RULES = Rules()


def stream_outputs(
    query: Query,
    items: Iterable[Item],
    *,
    rules: Rules = DEFAULT_RULES,
    profile: str = "tenzir",
    time_unit_ms: int = 1,
    start_wall_ms: int = 0,
) -> Iterator[Output]:
    """Outputs as the stream is consumed; memory is bounded by the open windows.

    ``time_unit_ms`` scales plain-number event times. A fast path (``oracle/fast/``) runs
    the query when one takes it, else the reference operators. Raises InvalidStream for a
    malformed stream (wall clock going back, seq out of order, items after End), and
    InvalidSpec for an option the profile cannot express.
    """
    if profile in PROFILES:
        check_supported(PROFILES[profile], query)
    check_rule_owners(profile, rules)
    if refusal(query, rules, profile) is None:
        return fast_outputs(
            query, items, rules=rules, time_unit_ms=time_unit_ms, start_wall_ms=start_wall_ms
        )
    return reference_outputs(
        query, items, rules=rules, profile=profile, time_unit_ms=time_unit_ms,
        start_wall_ms=start_wall_ms,
    )


def reference_outputs(
    query: Query,
    items: Iterable[Item],
    *,
    rules: Rules = DEFAULT_RULES,
    profile: str = "tenzir",
    time_unit_ms: int = 1,
    start_wall_ms: int = 0,
) -> Iterator[Output]:
    """The outputs of the reference operators, never a fast path (as :func:`stream_outputs`)."""
    driver = Driver(
        query,
        lambda q, ctx: operator_for(q, ctx, profile),
        rules,
        time_unit_ms=time_unit_ms,
        start_wall_ms=start_wall_ms,
        profile=profile,
    )
    return driver.run(items)


def run(
    query: Query,
    items: Iterable[Item],
    *,
    rules: Rules = DEFAULT_RULES,
    profile: str = "tenzir",
    time_unit_ms: int = 1,
    start_wall_ms: int = 0,
) -> Result:
    """Every output of ``query`` over ``items``, collected (see :func:`stream_outputs`)."""
    return Result(
        tuple(
            stream_outputs(
                query,
                items,
                rules=rules,
                profile=profile,
                time_unit_ms=time_unit_ms,
                start_wall_ms=start_wall_ms,
            )
        )
    )


OperatorFactory = Callable[[Query, Context], Operator]
_OPERATORS: dict[tuple[type, str | None], OperatorFactory] = {}


def register_operator(
    spec_type: type, profile: str | None = None
) -> Callable[[OperatorFactory], OperatorFactory]:
    """Register the operator for a window spec type, for one profile or (None) for all."""

    def register(factory: OperatorFactory) -> OperatorFactory:
        _OPERATORS[(spec_type, profile)] = factory
        return factory

    return register


register_operator(FixedWindows)(FixedOperator)
register_operator(CumulateWindows, profile="flink")(FixedOperator)  # Flink SQL's CUMULATE
register_operator(SessionWindows)(session_operator)
register_operator(CountWindows)(CountOperator)
register_operator(TrailingWindows)(trailing_operator)
register_operator(TrailingCountWindows)(trailing_operator)


def operator_factory(spec_type: type, profile: str) -> OperatorFactory | None:
    """The factory registered for ``spec_type`` under ``profile`` (or for all profiles)."""
    return _OPERATORS.get((spec_type, profile)) or _OPERATORS.get((spec_type, None))


def operator_for(query: Query, ctx: Context, profile: str = "tenzir") -> Operator:
    """The operator implementing ``query.window``'s kind under ``profile``.

    Raises InvalidSpec when no operator implements that kind for the profile, or the
    profile cannot express the kind or one of its options (:func:`check_supported`).
    """
    known = PROFILES.get(profile)
    if known is not None:
        check_supported(known, query)
    check_rule_owners(profile, ctx.rules)
    if query.output_mode != "append":
        return mode_operator(query, ctx)
    spec_type = type(query.window)
    factory = operator_factory(spec_type, profile)
    if factory is None:
        raise InvalidSpec(
            "window.kind",
            getattr(query.window, "kind", spec_type.__name__),
            f"not supported by profile {profile}",
            "choose another kind or profile",
        )
    return factory(query, ctx)


def replay(scenario: Scenario) -> Result:
    """Run a parsed scenario on the oracle with its profile, rules and time unit."""
    return run(
        scenario.query,
        scenario.items,
        rules=scenario.rules,
        profile=scenario.profile.name,
        time_unit_ms=scenario.time_unit_ms,
        start_wall_ms=scenario.start_wall_ms,
    )
