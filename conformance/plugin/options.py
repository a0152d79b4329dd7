"""The plugin's options, ini settings and run-wide reporting: what ``--windtunnel-*`` mean,
the target collected scenario files run on, where counterexample files go, the report
header and the terminal summary listing the files written. Imports only pytest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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

