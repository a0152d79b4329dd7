"""The JVM step's answer log and background writer (spark_impl/answer_log.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from windtunnel.spark_impl.answer_log import MAX_PENDING, AnswerLog, AnswerWriter, writer_for


def test_answers_are_kept_by_id_and_listed_in_order(tmp_path: Path) -> None:
    log = AnswerLog(tmp_path)
    for batch_id in (10, 2, 7):
        log.incoming(batch_id).write_bytes(bytes([batch_id]))
        log.keep(batch_id)
    log.incoming(3).write_bytes(b"not kept")  # a task's answer before keep: not an answer
    assert log.pending() == [2, 7, 10]
    log.incoming(7).write_bytes(b"again")  # a replayed micro-batch replaces its answer
    log.keep(7)
    assert log.read(7) == b"again"
    log.remove(7)
    log.remove(7)  # removing twice is fine (a restart may write an answer out twice)
    assert log.pending() == [2, 10]


def test_writes_run_in_submission_order_and_wait_waits_for_all() -> None:
    writer = AnswerWriter()
    done: list[int] = []
    for index in range(6):
        writer.submit(lambda index=index: done.append(index))
    writer.wait()
    assert done == list(range(6))


def test_at_most_max_pending_writes_wait_behind_a_micro_batch() -> None:
    writer = AnswerWriter()
    gate = threading.Event()
    started: list[int] = []

    def slow(index: int) -> None:
        started.append(index)
        gate.wait(5)

    for index in range(MAX_PENDING):
        writer.submit(lambda index=index: slow(index))
    submitted = threading.Event()

    def one_more() -> None:
        writer.submit(lambda: None)
        submitted.set()

    thread = threading.Thread(target=one_more)
    thread.start()
    assert not submitted.wait(0.3)  # blocked: MAX_PENDING writes are still waiting
    gate.set()
    thread.join(5)
    assert submitted.is_set()
    writer.wait()


def test_a_failed_write_is_raised_by_the_next_submit_and_by_wait() -> None:
    writer = AnswerWriter()

    def broken() -> None:
        raise OSError("disk full")

    writer.submit(broken)
    with pytest.raises(OSError, match="disk full"):
        writer.wait()
    writer.submit(broken)
    while not writer._pending[0].done():
        threading.Event().wait(0.01)
    with pytest.raises(OSError, match="disk full"):
        writer.submit(lambda: None)


def test_one_writer_per_state_directory_while_held(tmp_path: Path) -> None:
    first = writer_for(tmp_path / "state")
    assert writer_for(tmp_path / "state" / ".." / "state") is first
    assert writer_for(tmp_path / "other") is not first
