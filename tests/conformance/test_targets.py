"""Targets: the oracle under a profile, callables, names, micro-batch numbering."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from windtunnel.conformance.targets import (
    TARGETS,
    TargetRun,
    callable_target,
    known_targets,
    micro_batch_of_seq,
    oracle_outputs,
    oracle_target,
    register_target,
    registry,
    stand_in_of,
    target_named,
)
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.scenario import Scenario, parse_scenario


def _scenario(items: list[object], **extra: object) -> Scenario:
    data = {
        "window": {"kind": "fixed", "size": 10, "on": "ts"},
        "aggregate": {"n": "count()"},
        "input": items,
        **extra,
    }
    return parse_scenario(data)


LATE = [{"ts": 1}, {"ts": 12}, {"ts": 3}]


def test_oracle_target_reports_outputs_and_micro_batches() -> None:
    scenario = _scenario([*LATE, {"batch": [{"ts": 30}, {"ts": 2}]}])
    (got,) = oracle_target("tenzir").run_many([scenario])
    assert got.outputs == oracle_outputs(scenario)
    assert got.micro_batches is not None and len(got.micro_batches) == len(got.outputs)
    # the window [0, 10) closes after seq 1, which is micro-batch 1
    assert got.micro_batches[0] == 1


def test_oracle_target_under_another_profile_differs_on_late_data() -> None:
    scenario = _scenario(LATE)
    tenzir, spark = (oracle_target(p).run_many([scenario])[0] for p in ("tenzir", "spark"))
    assert tenzir.outputs != spark.outputs


def test_micro_batches_batches_lone_events_and_advances() -> None:
    scenario = _scenario(
        [{"ts": 0}, {"advance": 5}, {"batch": [{"ts": 1}, {"ts": 2}]}, {"ts": 3}, {"advance": 1}, {"ts": 4}]
    )
    assert micro_batch_of_seq(scenario.items) == {0: 0, 1: 2, 2: 2, 3: 3, 4: 4}


def test_callable_target_maps_the_function() -> None:
    seen: list[str] = []

    def fn(scenario: Scenario) -> tuple[()]:
        seen.append(scenario.name)
        return ()

    target = callable_target(fn, name="empty")
    runs = target.run_many([_scenario(LATE), _scenario([])])
    assert runs == [TargetRun(()), TargetRun(())] and len(seen) == 2
    assert target.name == "empty" and not target.reports_drops and not target.reports_timing


def test_target_run_needs_one_micro_batch_per_output() -> None:
    with pytest.raises(InvalidSpec, match="one entry per output"):
        TargetRun((), (1,))


@pytest.mark.parametrize("name", ["nope", "oracle:nope", "python:no_such_module_xyz:f", "os:nope"])
def test_unknown_targets_are_invalid_input(name: str) -> None:
    with pytest.raises(InvalidSpec) as info:
        target_named(name)
    if name == "nope":
        assert "spark-stock" in str(info.value)


def test_named_forms() -> None:
    assert target_named("oracle:flink").name == "oracle:flink"
    target = target_named("python:windtunnel.conformance.targets:oracle_outputs")
    (got,) = target.run_many([_scenario(LATE)])
    assert got.outputs == oracle_outputs(_scenario(LATE))
    assert stand_in_of("spark-stock") == "spark" and stand_in_of("spark") is None


def test_register_target_extends_the_names() -> None:
    register_target("test-only", lambda spark: oracle_target("flink"), "for this test")
    try:
        assert target_named("test-only").name == "oracle:flink"
    finally:
        del TARGETS["test-only"]


def _plugin_distribution(root: Path, name: str, entry_points: str, module: str) -> None:
    """An installed distribution as importlib.metadata finds it: a module and a dist-info
    folder with ``entry_points.txt`` on ``sys.path``."""
    (root / f"{name}.py").write_text(module)
    info = root / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[windtunnel.targets]\n{entry_points}\n")


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The registry read again from the entry points, and restored afterwards."""
    saved = dict(registry.TARGETS)
    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.setattr(registry, "_problems", [])
    registry.TARGETS.clear()
    yield
    registry.TARGETS.clear()
    registry.TARGETS.update(saved)


def test_a_third_party_package_adds_a_target_through_its_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_registry: None
) -> None:
    _plugin_distribution(
        tmp_path,
        "wt_plugin",
        "flink-oracle = wt_plugin:ENTRY\nspark = wt_plugin:ENTRY\nbroken = wt_plugin:MISSING",
        "from windtunnel.conformance.targets import TargetEntry, oracle_target\n"
        "ENTRY = TargetEntry(lambda spark: oracle_target('flink'), 'the flink profile', 'flink')\n",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert target_named("flink-oracle").name == "oracle:flink"
    assert stand_in_of("flink-oracle") == "flink"
    assert "flink-oracle" in known_targets()
    # a plug-in never replaces a built-in, and a broken one is reported, not raised
    assert stand_in_of("spark") is None
    problems = registry.entry_point_problems()
    assert any(p.startswith("spark (wt_plugin:ENTRY): names a built-in") for p in problems)
    assert any(p.startswith("broken (wt_plugin:MISSING): AttributeError") for p in problems)
