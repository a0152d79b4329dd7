"""Scenario files as tests: the files the ``windtunnel_scenarios`` setting names are collected,
one test each, replayed on the oracle against their ``expect`` block and, with
``--windtunnel-target``, run on that target. A scenario file named on the command line
that the setting does not match fails collection with the line to add. Imports only pytest
at load."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from windtunnel.conformance.plugin.options import (
    chosen_target,
    counterexample_dir,
    note_written,
)
from windtunnel.conformance.plugin.spark import session, spark_replay

if TYPE_CHECKING:
    from windtunnel.oracle.scenario import Scenario

SUFFIXES = (".yaml", ".yml", ".json")
"""What a scenario file's name ends with."""

SETTING = "windtunnel_scenarios"
"""The ini setting naming the scenario files to collect (glob patterns, relative to rootdir)."""


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.suffix not in SUFFIXES:
        return None
    config = parent.config
    patterns = config.getini(SETTING)
    root = config.rootpath
    for pattern in patterns:
        if any(file_path == p.resolve() for p in root.glob(pattern)):
            return ScenarioFile.from_parent(parent, path=file_path)
    if parent.session.isinitpath(file_path) and looks_like_scenario(file_path):
        return UncollectedScenario.from_parent(parent, path=file_path)
    return None


def looks_like_scenario(path: Path) -> bool:
    """Whether ``path`` holds a mapping with a ``window`` key (a scenario or spec file)."""
    import json

    import yaml

    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and "window" in data


def setting_fix(config: pytest.Config, path: Path) -> str:
    """The setting's line that collects ``path`` too, as the project's configuration file
    (``config.inipath``; pyproject.toml when there is none) writes it."""
    patterns = list(config.getini(SETTING))
    try:
        relative = path.parent.relative_to(config.rootpath)
    except ValueError:
        relative = path.parent
    folder = relative.as_posix()
    patterns.append(f"*{path.suffix}" if folder == "." else f"{folder}/*{path.suffix}")
    inipath = config.inipath
    if inipath is not None and inipath.name != "pyproject.toml":
        section = "[pytest]" if inipath.name in ("pytest.ini", ".pytest.ini") else "[tool:pytest]"
        return f"in {inipath.name}, under {section}: {SETTING} = {' '.join(patterns)}"
    listed = ", ".join(f'"{p}"' for p in patterns)
    return f"in pyproject.toml, under [tool.pytest.ini_options]: {SETTING} = [{listed}]"


class ScenarioOutsideSetting(Exception):
    """A scenario file given on the command line that the setting does not collect."""


class UncollectedScenario(pytest.File):
    """A scenario file named on the command line outside the setting's patterns: collecting
    it fails, naming the setting and the line that collects it."""

    def collect(self) -> Iterator[pytest.Item]:
        patterns = self.config.getini(SETTING)
        matched = f"its patterns ({', '.join(patterns)}) do not match it" if patterns else (
            "it is not set")
        raise ScenarioOutsideSetting(
            f"{self.path.name} is a scenario file, but pytest collects scenario files only where "
            f"the {SETTING} setting says, and {matched}; add {setting_fix(self.config, self.path)}"
        )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ScenarioOutsideSetting):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


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
    from windtunnel.conformance.plugin.checking import run_check

    config = item.config
    _, text = run_check(
        target,
        item.path,
        spark=lambda: session(config),
        examples=0,
        seed=config.getoption("--windtunnel-seed"),
        profile=config.getoption("--windtunnel-profile"),
        out_dir=counterexample_dir(config),
        shrink_seconds=config.getoption("--windtunnel-shrink-seconds"),
    )
    note_written(config, text)
    return text


def spark_divergences(scenario: Scenario, config: pytest.Config | None = None) -> list[str]:
    """Divergences between Spark and the oracle on ``scenario``, as ``windtunnel replay
    --engine both`` reports them: windtunnel's Spark operators against the oracle (every output);
    a ``profile: spark`` scenario on stock Spark against the oracle's ``spark`` profile,
    emissions only (stock Spark drops late rows without reporting them)."""
    replay = spark_replay()
    master = config.getoption("--windtunnel-master") if config is not None else None
    remote = config.getoption("--windtunnel-remote") if config is not None else None
    run = replay.replay_scenario(scenario, master=master, remote=remote)
    problems: list[str] = replay.compare_with_oracle(scenario, run)
    return problems
