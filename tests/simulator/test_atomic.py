"""Output written under a temporary name and renamed: whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from windtunnel.simulator.atomic import PARTIAL, atomic_output


def test_the_target_appears_only_when_the_block_ends(tmp_path: Path) -> None:
    target = tmp_path / "stream.jsonl"
    with atomic_output(target) as partial:
        partial.write_text("a\n")
        assert not target.exists()
        assert partial.parent == tmp_path and partial.suffix == ".jsonl"
        assert PARTIAL in partial.name and partial.name.startswith(".")
    assert target.read_text() == "a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["stream.jsonl"]


def test_an_interrupted_write_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "stream.jsonl"
    with pytest.raises(KeyboardInterrupt), atomic_output(target) as partial:
        partial.write_text("half")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_an_existing_file_is_replaced_only_at_the_end(tmp_path: Path) -> None:
    target = tmp_path / "s.yaml"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_output(target) as partial:
        partial.write_text("new")
        raise RuntimeError("disk full")
    assert target.read_text() == "old"
    with atomic_output(target) as partial:
        partial.write_text("new")
    assert target.read_text() == "new"


def test_a_directory_replaces_an_empty_one_and_is_removed_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "dir"
    target.mkdir()
    with pytest.raises(ValueError), atomic_output(target, directory=True) as partial:
        (partial / "batch-0.jsonl").write_text("x")
        raise ValueError
    assert target.is_dir() and list(target.iterdir()) == []
    assert [p.name for p in tmp_path.iterdir()] == ["dir"]
    with atomic_output(target, directory=True) as partial:
        (partial / "batch-0.jsonl").write_text("x")
    assert [p.name for p in target.iterdir()] == ["batch-0.jsonl"]


def test_permissions_are_those_of_a_plain_write(tmp_path: Path) -> None:
    mask = os.umask(0o022)
    try:
        with atomic_output(tmp_path / "f") as partial:
            partial.write_text("x")
        with atomic_output(tmp_path / "d", directory=True):
            pass
    finally:
        os.umask(mask)
    assert (tmp_path / "f").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "d").stat().st_mode & 0o777 == 0o755
