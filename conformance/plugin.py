"""pytest plugin: scenario files as tests, and fixtures to check your own Spark job.

Enable collection by naming scenario files in ``pytest.ini``/``pyproject.toml``::

    [tool.pytest.ini_options]
    windtunnel_scenarios = ["scenarios/*.yaml"]

Each matching file becomes one test that replays it on the oracle and checks its
``expect`` block; with ``--windtunnel-target spark`` (alias: ``--windtunnel-engine spark``
or ``both``) it also replays it on Spark and compares as ``windtunnel replay --engine
both`` does (a ``profile: spark`` scenario on stock Spark, emissions only: stock Spark
reports no drops); any other target (``spark-stock``, ``oracle:PROFILE``,
``module:function``) is held to the oracle on the file's own input as ``windtunnel
check FILE --examples 0`` does.

Fixtures:

- ``windtunnel_spark``: the session's SparkSession (windtunnel's ``spark_session()``;
  ``--windtunnel-master spark://...`` or ``--windtunnel-remote sc://...``).
- ``windtunnel_check``: ``check(job_or_target, spec, *, examples=None, profile=None,
  seed=None)`` runs ``windtunnel check`` in the test and fails it with the divergence
  report; defaults from ``--windtunnel-examples``, ``--windtunnel-seed`` and
  ``--windtunnel-profile``; counterexamples go under pytest's temporary directory
  (``--windtunnel-out DIR`` for a folder of your own); the failure and the terminal
  summary name each file. The spec (a path, its data or a Scenario) may leave ``input``
  out, and its ``fields:``, ``where`` and ``deduplicate`` shape the generated streams as
  for ``windtunnel check``.
- ``windtunnel_oracle`` (replays a scenario on the oracle) and ``windtunnel_assert_same``
  (fails with a readable diff when two output lists diverge).

The plugin loads in every pytest run of an environment where windtunnel is installed,
so this module imports only pytest at load time: windtunnel's parts are imported when a
scenario runs or a fixture is used, and a missing optional extra (Spark without pyspark)
skips the test with the ``pip install`` line that fixes it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from windtunnel.conformance.check import CheckResult
    from windtunnel.oracle.model.results import Output, Result
    from windtunnel.oracle.scenario import Scenario

ENGINES = ("oracle", "spark", "both")
"""``--windtunnel-engine`` values (kept working: ``spark`` and ``both`` mean the target ``spark``)."""
DEFAULT_EXAMPLES = 100
DEFAULT_OUT = "windtunnel-counterexamples"
DEFAULT_SHRINK_SECONDS = 60.0


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("windtunnel")
    group.addoption(
        "--windtunnel-target",
        default=None,
        metavar="NAME",
        help="what collected scenario files also run on: oracle (default: expectations "
        "only), spark (as replay --engine both), spark-stock, oracle:PROFILE, module:function",
    )
    group.addoption(
        "--windtunnel-engine",
        choices=ENGINES,
        default=None,
        help="older spelling: spark or both = --windtunnel-target spark",
    )
    group.addoption(
        "--windtunnel-examples",
        type=int,
        default=DEFAULT_EXAMPLES,
        metavar="N",
        help=f"generated streams per windtunnel_check (default: {DEFAULT_EXAMPLES})",
    )
    group.addoption(
        "--windtunnel-seed",
        type=int,
        default=0,
        metavar="S",
        help="seed of windtunnel_check's generated streams (default: 0)",
    )
    group.addoption(
        "--windtunnel-profile",
        default=None,
        metavar="PROFILE",
        help="profile windtunnel_check holds targets to (default: each spec's own)",
    )
    group.addoption(
        "--windtunnel-shrink-seconds",
        type=float,
        default=DEFAULT_SHRINK_SECONDS,
        metavar="S",
        help="time budget for shrinking a divergence (default: "
        f"{DEFAULT_SHRINK_SECONDS:g}; 0 reports the failing stream as found)",
    )
    group.addoption(
        "--windtunnel-out",
        default=None,
        metavar="DIR",
        help="directory for counterexample files, relative to rootdir (default: "
        f"{DEFAULT_OUT}/ under pytest's temporary directory, printed at the end)",
    )
    group.addoption(
        "--windtunnel-master",
        default=None,
        metavar="URL",
        help="Spark master for windtunnel_spark (default local[2]; spark://host:port)",
    )
    group.addoption(
        "--windtunnel-remote",
        default=None,
        metavar="URL",
        help="Spark Connect server for windtunnel_spark (sc://host:port)",
    )
    parser.addini(
        "windtunnel_scenarios",
        type="args",
        default=[],
        help="glob patterns (relative to rootdir) of scenario files to collect as tests",
    )


def chosen_target(config: pytest.Config) -> str:
    """The target collected scenario files run on: ``--windtunnel-target``, else
    ``--windtunnel-engine`` (``spark``/``both`` -> ``spark``), else ``oracle``."""
    target = config.getoption("--windtunnel-target")
    engine = config.getoption("--windtunnel-engine")
    if target is not None and engine is not None:
        raise pytest.UsageError(
            "--windtunnel-engine is the older spelling of --windtunnel-target: give one of them"
        )
    if target is not None:
        if not target:
            raise pytest.UsageError("--windtunnel-target='' must name a target: e.g. spark")
        return str(target)
    return "spark" if engine in ("spark", "both") else "oracle"


def pytest_configure(config: pytest.Config) -> None:
    chosen_target(config)  # a bad combination is a usage error before collection
    for option in ("--windtunnel-examples", "--windtunnel-shrink-seconds"):
        if config.getoption(option) < 0:
            raise pytest.UsageError(
                f"{option} must be 0 or more: {option.lstrip('-')}="
                f"{config.getoption(option)}; give e.g. 0"
            )


WRITTEN = pytest.StashKey[list[str]]()
"""Counterexample files written in this run (listed in the terminal summary)."""


def counterexample_dir(config: pytest.Config) -> Path:
    """Where counterexample files go: ``--windtunnel-out`` (relative to rootdir), else
    ``windtunnel-counterexamples/`` under pytest's temporary directory (``--basetemp``),
    never the project's own folders."""
    chosen = config.getoption("--windtunnel-out")
    if chosen:
        return config.rootpath / str(chosen)
    factory = getattr(config, "_tmp_path_factory", None)  # pytest's tmpdir plugin sets it
    if factory is None:  # that plugin disabled (-p no:tmpdir): the project's folder after all
        return config.rootpath / DEFAULT_OUT
    return Path(str(factory.getbasetemp())) / DEFAULT_OUT


def note_written(config: pytest.Config, text: str | None) -> None:
    """Remember the counterexample file a failure text names (for the terminal summary)."""
    marker = "counterexample written to "
    for line in (text or "").splitlines():
        if line.startswith(marker):
            config.stash.setdefault(WRITTEN, []).append(line[len(marker) :])


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    written = config.stash.get(WRITTEN, [])
    if written:
        terminalreporter.write_sep("-", "windtunnel counterexamples")
        for path in written:
            terminalreporter.write_line(f"written to {path}")
        terminalreporter.write_line(
            "(pytest's temporary directory keeps the last runs; copy a file into the project "
            "to keep it as a test, or give --windtunnel-out DIR)"
        )


def _spark_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pyspark")
    except PackageNotFoundError:
        return None


def pytest_report_header(config: pytest.Config) -> list[str]:
    """One line: the seed, examples, target, profile and (when installed) pyspark's version."""
    profile = config.getoption("--windtunnel-profile") or "each spec's own"
    parts = [
        f"seed {config.getoption('--windtunnel-seed')}",
        f"examples {config.getoption('--windtunnel-examples')}",
        f"scenario target {chosen_target(config)}",
        f"profile {profile}",
    ]
    spark = _spark_version()
    if spark is not None:
        where = config.getoption("--windtunnel-remote") or config.getoption("--windtunnel-master")
        parts.append(f"pyspark {spark}" + (f" at {where}" if where else ""))
    return ["windtunnel: " + ", ".join(parts)]


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
        target = chosen_target(self.config)
        if target == "oracle":
            return
        try:
            if target == "spark":
                problems = spark_divergences(scenario, self.config)
                if problems:
                    raise ScenarioFailure(
                        "\n".join([f"spark: {len(problems)} divergence(s) from the oracle "
                                   f"(profile {scenario.profile.name}):", *problems])
                    )
                return
            text = _check_target(self, target)
        except MissingExtra as exc:
            pytest.skip(f"oracle part passed; the {target} part is skipped: {exc}")
        except WindtunnelError as exc:
            raise ScenarioFailure(f"{target}: {exc}") from None
        if text:
            raise ScenarioFailure(text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ScenarioFailure):
            return f"{self.path.name}: {excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario {self.name}"


def _check_target(item: ScenarioItem, target: str) -> str | None:
    """``windtunnel check FILE --examples 0`` for a target other than ``spark``."""
    from windtunnel.conformance.fixtures import run_check

    config = item.config
    _, text = run_check(
        target,
        item.path,
        spark=lambda: _session(config),
        examples=0,
        seed=config.getoption("--windtunnel-seed"),
        profile=config.getoption("--windtunnel-profile"),
        out_dir=counterexample_dir(config),
        shrink_seconds=config.getoption("--windtunnel-shrink-seconds"),
    )
    note_written(config, text)
    return text


def _spark_replay() -> Any:
    """``windtunnel.spark_impl.harness.replay`` (MissingExtra without the ``spark`` extra)."""
    from windtunnel.oracle.model.extras import requires_extra

    with requires_extra("spark", "--windtunnel-target spark"):
        from windtunnel.spark_impl.harness import replay  # type: ignore[import-not-found,unused-ignore]
    return replay


def spark_divergences(scenario: Scenario, config: pytest.Config | None = None) -> list[str]:
    """Divergences between Spark and the oracle on ``scenario``, as ``windtunnel replay
    --engine both`` reports them: windtunnel's Spark operators against the oracle (every output);
    a ``profile: spark`` scenario on stock Spark against the oracle's ``spark`` profile,
    emissions only (stock Spark drops late rows without reporting them)."""
    replay = _spark_replay()
    master = config.getoption("--windtunnel-master") if config is not None else None
    remote = config.getoption("--windtunnel-remote") if config is not None else None
    run = replay.replay_scenario(scenario, master=master, remote=remote)
    problems: list[str] = replay.compare_with_oracle(scenario, run)
    return problems


def _session(config: pytest.Config) -> Any:
    """The SparkSession for this run (started once; getOrCreate reuses a running one).
    Skips the test without the ``spark`` extra; fails it when Spark cannot start."""
    from windtunnel.oracle.model.errors import EngineUnavailable, MissingExtra
    from windtunnel.oracle.model.extras import requires_extra

    try:
        with requires_extra("spark", "the windtunnel_spark fixture"):
            from windtunnel.spark_impl.session import (  # type: ignore[import-not-found,unused-ignore]
                CHECK_CONF,
                spark_session,
            )

            spark = spark_session(
                config.getoption("--windtunnel-master"), config.getoption("--windtunnel-remote"),
                conf=CHECK_CONF, local_files=True, closure_checks=True,
            )
    except MissingExtra as exc:
        pytest.skip(str(exc))
    except EngineUnavailable as exc:
        pytest.fail(f"windtunnel_spark: {exc}", pytrace=False)
    with contextlib.suppress(Exception):  # Spark Connect sessions have no SparkContext
        spark.sparkContext.setLogLevel("ERROR")
    return spark


@pytest.fixture(scope="session")
def windtunnel_spark(pytestconfig: pytest.Config) -> Any:
    """The session's SparkSession: windtunnel's ``spark_session()`` (UTC, RocksDB state
    store, no UI; docs/spark.md), local unless ``--windtunnel-master``/``--windtunnel-remote``."""
    return _session(pytestconfig)


Check = Callable[..., "CheckResult"]


@pytest.fixture
def windtunnel_check(request: pytest.FixtureRequest) -> Check:
    """``check(job_or_target, spec, *, examples=None, profile=None, seed=None)``: hold a
    Spark job (callable or ``module:function``), a target name (``spark``, ``spark-stock``,
    ``oracle:PROFILE``) or a Target to ``spec`` (a scenario path, its data, or a Scenario)
    on the spec's own input and ``examples`` generated streams; returns the CheckResult,
    or fails the test with the divergence report and the counterexample file's path."""
    from windtunnel.conformance.fixtures import run_check
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
