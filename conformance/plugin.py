"""pytest plugin: scenario files as tests, and fixtures for differential checks.

Enable collection by naming scenario files in ``pytest.ini``/``pyproject.toml``::

    [tool.pytest.ini_options]
    windtunnel_scenarios = ["scenarios/*.yaml"]

Each matching file becomes one test that replays it on the oracle and checks its
``expect`` block; with ``--windtunnel-engine spark`` or ``both`` it also replays it
on Spark and requires the same outputs as the oracle. Fixtures: ``windtunnel_oracle``
(replays a scenario path or object on the oracle) and ``windtunnel_assert_same``
(fails with a readable diff when two output lists diverge).

The plugin loads in every pytest run of an environment where windtunnel is installed,
so this module imports only pytest at load time: windtunnel's parts are imported when a
scenario runs or a fixture is used, and a missing optional extra (``--windtunnel-engine
spark`` without pyspark) skips the scenario with the ``pip install`` line that fixes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from windtunnel.oracle.model.results import Output, Result
    from windtunnel.oracle.scenario import Scenario

ENGINES = ("oracle", "spark", "both")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("windtunnel")
    group.addoption(
        "--windtunnel-engine",
        choices=ENGINES,
        default="oracle",
        help="engine that replays collected scenario files (default: oracle)",
    )
    parser.addini(
        "windtunnel_scenarios",
        type="args",
        default=[],
        help="glob patterns (relative to rootdir) of scenario files to collect as tests",
    )


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.suffix not in (".yaml", ".yml", ".json"):
        return None
    config = parent.config
    patterns = config.getini("windtunnel_scenarios")
    root = config.rootpath
    for pattern in patterns:
        if any(file_path == p.resolve() for p in root.glob(pattern)):
            return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        yield ScenarioItem.from_parent(self, name=self.path.stem)


class ScenarioFailure(Exception):
    """A scenario's expectation or an engine comparison failed."""


class ScenarioItem(pytest.Item):
    def runtest(self) -> None:
        from windtunnel.conformance.differential import diverge, report
        from windtunnel.oracle.engine import replay
        from windtunnel.oracle.expect import check
        from windtunnel.oracle.model.errors import MissingExtra, WindtunnelError
        from windtunnel.oracle.scenario import load_scenario

        try:
            scenario = load_scenario(self.path)
        except WindtunnelError as exc:
            raise ScenarioFailure(f"invalid scenario: {exc}") from None
        result = replay(scenario)
        if scenario.expect is not None:
            problems = check(scenario.expect, result.outputs)
            if problems:
                raise ScenarioFailure("\n".join(["oracle: expectation failed:", *problems]))
        engine = self.config.getoption("--windtunnel-engine")
        if engine in ("spark", "both"):
            try:
                spark_outputs = replay_on_spark(scenario)
            except MissingExtra as exc:
                pytest.skip(f"oracle part passed; the Spark part is skipped: {exc}")
            text = report(diverge(spark_outputs, result.outputs), "spark", "oracle")
            if text:
                raise ScenarioFailure(text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ScenarioFailure):
            return f"{self.path.name}: {excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario {self.name}"


def replay_on_spark(scenario: Scenario) -> Sequence[Output]:
    """Replay ``scenario`` on the Spark engine (imported only when asked for; raises
    MissingExtra without the ``spark`` extra)."""
    from windtunnel.oracle.model.extras import requires_extra

    with requires_extra("spark", "--windtunnel-engine spark"):
        from windtunnel.spark_impl.replay import replay_scenario  # type: ignore[import-not-found,unused-ignore]

    return replay_scenario(scenario).result.outputs


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
