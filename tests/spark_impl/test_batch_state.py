"""State versions of the fast path by micro-batch id (spark_impl/batch_state.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel.spark_impl.batch_state import BatchStateStore, Version, forget_cached


def test_a_micro_batch_starts_from_the_newest_version_below_it_and_old_ones_go(tmp_path: Path) -> None:
    store = BatchStateStore(tmp_path)
    for batch_id in range(4):
        store.save(Version(batch_id, {"after": batch_id}, rows_out=batch_id * 10, rows_in=batch_id * 100))
    assert store.versions() == [2, 3]  # the last two stay: micro-batch 3 can be replayed
    forget_cached(tmp_path)
    replay = store.before(3)
    assert replay is not None and replay.state == {"after": 2}
    assert store.before(0) is None


def test_counts_are_kept_for_every_micro_batch_and_read_from_older_checkpoints(tmp_path: Path) -> None:
    store = BatchStateStore(tmp_path)
    store.save(Version(0, {}, rows_out=4, rows_in=80))
    store.save(Version(1, {}, rows_out=0))
    store.save(Version(2, {}, rows_out=3, rows_in=81))
    assert [store.counts(i) for i in range(3)] == [(4, 80), (0, None), (3, 81)]
    (tmp_path / "rows" / "7").write_text("12")  # as checkpoints before the input count held it
    assert store.counts(7) == (12, None) and store.rows_out(7) == 12
    with pytest.raises(FileNotFoundError):
        store.counts(9)  # not run yet


@pytest.mark.parametrize("bad", [{"batch_id": -1}, {"rows_out": -1}, {"rows_in": -2}])
def test_negative_ids_and_counts_are_refused(bad: dict[str, int]) -> None:
    values = {"batch_id": 0, "rows_out": 0, "rows_in": 0, **bad}
    with pytest.raises(ValueError, match="must be >= 0"):
        Version(values["batch_id"], None, values["rows_out"], values["rows_in"])
