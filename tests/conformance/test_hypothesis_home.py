"""Drawing streams leaves no ``.hypothesis/`` in the working directory and keeps the
caller's own Hypothesis storage setting."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import configuration

from windtunnel.conformance.generate import generate
from windtunnel.conformance.hypothesis_home import scratch_home
from windtunnel.oracle.scenario import parse_scenario

SPEC = {"window": {"size": "10s", "on": "ts"}, "group_by": ["k"], "aggregate": {"n": "count()"}}


def test_generated_streams_leave_no_hypothesis_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    streams = list(generate(parse_scenario({**SPEC, "input": []}), 12, 0))
    assert len(streams) == 12
    assert list(tmp_path.iterdir()) == []


def test_the_callers_setting_is_restored(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    configuration.set_hypothesis_home_dir(mine)
    try:
        with scratch_home():
            inside = configuration.storage_directory("x").home_directory
            assert inside != mine and inside.name.startswith("windtunnel-hypothesis-")
        assert not inside.exists()
        assert configuration.storage_directory("x").home_directory == mine
    finally:
        configuration.set_hypothesis_home_dir(None)
