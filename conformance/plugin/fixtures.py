"""The plugin's fixtures: ``windtunnel_check`` (hold a job or target to a spec in a test),
``windtunnel_oracle`` (replay a scenario on the oracle) and ``windtunnel_assert_same``
(fail with a readable diff). Imports only pytest at load."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from windtunnel.conformance.plugin.options import counterexample_dir, note_written

if TYPE_CHECKING:
    from windtunnel.conformance.check import CheckResult
    from windtunnel.oracle.model.results import Output, Result
    from windtunnel.oracle.scenario import Scenario


Check = Callable[..., "CheckResult"]


@pytest.fixture
def windtunnel_check(request: pytest.FixtureRequest) -> Check:
    """``check(job_or_target, spec, *, examples=None, profile=None, seed=None)``: hold a
    Spark job (callable or ``module:function``), a target name (``spark``, ``spark-stock``,
    ``oracle:PROFILE``) or a Target to ``spec`` (a scenario path, its data, or a Scenario)
    on the spec's own input and ``examples`` generated streams; returns the CheckResult,
    or fails the test with the divergence report and the counterexample file's path."""
    from windtunnel.conformance.plugin.checking import run_check
    from windtunnel.oracle.model.errors import MissingExtra, WindtunnelError

    config = request.config

    def spark() -> Any:
        return request.getfixturevalue("windtunnel_spark")

    def check(
        job_or_target: Any,
        spec: Any,
        *,
        examples: int | None = None,
        profile: str | None = None,
        seed: int | None = None,
    ) -> CheckResult:
        try:
            result, text = run_check(
                job_or_target,
                spec,
                spark=spark,
                examples=config.getoption("--windtunnel-examples") if examples is None else examples,
                seed=config.getoption("--windtunnel-seed") if seed is None else seed,
                profile=profile or config.getoption("--windtunnel-profile"),
                out_dir=counterexample_dir(config),
                shrink_seconds=config.getoption("--windtunnel-shrink-seconds"),
            )
        except MissingExtra as exc:
            pytest.skip(str(exc))
        except WindtunnelError as exc:
            pytest.fail(f"windtunnel_check: {exc}", pytrace=False)
        if text is not None:
            note_written(config, text)
            pytest.fail(text, pytrace=False)
        return result

    return check


@pytest.fixture
def windtunnel_oracle() -> Callable[[str | Path | Scenario], Result]:
    """Replay a scenario (path or parsed) on the oracle and return its Result."""

    from windtunnel.oracle.engine import replay
    from windtunnel.oracle.scenario import Scenario, load_scenario

    def run(scenario: str | Path | Scenario) -> Result:
        parsed = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
        return replay(parsed)

    return run


@pytest.fixture
def windtunnel_assert_same() -> Callable[..., None]:
    """``assert_same(actual, expected, left="engine", right="oracle")``: fail with a diff."""
    from windtunnel.conformance.differential import diverge, report

    def assert_same(
        actual: Sequence[Output], expected: Sequence[Output], left: str = "engine", right: str = "oracle"
    ) -> None:
        text = report(diverge(actual, expected), left, right)
        if text:
            pytest.fail(text, pytrace=False)

    return assert_same
