"""Checkpoints of queries nobody resumes are removed after the query, also on Ctrl-C."""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel.spark_impl.scratch import checkpoint_dir


def test_a_temporary_checkpoint_is_removed(tmp_path: Path) -> None:
    with checkpoint_dir(None, "job-ckpt") as location:
        (Path(location) / "offsets").mkdir()
        assert Path(location).name.startswith("windtunnel-job-ckpt-")
    assert not Path(location).exists()


def test_also_when_interrupted() -> None:
    with pytest.raises(KeyboardInterrupt), checkpoint_dir(None, "ckpt") as location:
        raise KeyboardInterrupt
    assert not Path(location).exists()


def test_a_given_checkpoint_stays(tmp_path: Path) -> None:
    with checkpoint_dir(str(tmp_path / "keep"), "ckpt") as location:
        Path(location).mkdir()
    assert Path(location).is_dir()
