"""Checkpoints of queries nobody resumes are removed after the query, also on Ctrl-C."""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel.spark_impl import scratch, shutdown
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


@pytest.fixture
def register(monkeypatch: pytest.MonkeyPatch) -> scratch.Register:
    """A register of this test's own (closing the process's one would refuse later tests)."""
    fresh = scratch.Register()
    monkeypatch.setattr(scratch, "REGISTER", fresh)
    return fresh


def test_stopping_spark_removes_a_checkpoint_whose_thread_never_gets_to(
    register: scratch.Register, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C: a lane's query is still inside its block (or its daemon thread is halted
    halfway) when the main thread has stopped Spark and leaves; the folder goes anyway."""
    monkeypatch.setattr(shutdown, "active_session", lambda: None)
    with checkpoint_dir(None, "job") as location:
        (Path(location) / "offsets").mkdir()
        (Path(location) / "offsets" / "0").write_text("v1")
        shutdown.stop_spark()
        assert not Path(location).exists()


def test_no_checkpoint_is_made_once_spark_is_stopping(
    register: scratch.Register, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lane between two queries when Ctrl-C comes starts no new one (it would write into
    a folder nobody removes, with a JVM that is going away)."""
    monkeypatch.setattr(shutdown, "active_session", lambda: None)
    shutdown.stop_spark()
    with pytest.raises(scratch.ScratchClosed, match="Spark is stopping"), checkpoint_dir(None, "job"):
        pass
    with checkpoint_dir("/given/by/the/user", "job") as location:  # the caller's own: no folder made
        assert location == "/given/by/the/user"


def test_a_closed_block_forgets_its_folder(register: scratch.Register) -> None:
    with checkpoint_dir(None, "job") as location:
        pass
    assert register.remove_open() == []
    assert not Path(location).exists()
