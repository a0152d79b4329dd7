"""A spark-dir input for Spark's own file source: read only when the file source's order is
the Python source's (one file per micro-batch, in name order), staged with the end row."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from windtunnel.simulator.outputs import write_spark_dir
from windtunnel.simulator.workloads import simulate
from windtunnel.spark_impl.jobs.file_records import end_line, ordered_files, staged_dir


@pytest.fixture
def spark_dir(tmp_path: Path) -> Path:
    out = tmp_path / "spark-dir"
    write_spark_dir(simulate("bare", events=30, seed=2, batch_size=10), out)
    return out


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def test_generated_files_are_read_in_name_order(spark_dir: Path) -> None:
    files = ordered_files(spark_dir)
    assert files is not None
    assert [p.name for p in files] == [f"batch-{i:08d}.jsonl" for i in range(3)]


def test_files_whose_times_do_not_increase_in_name_order_are_left_to_python(
    spark_dir: Path,
) -> None:
    first = spark_dir / "batch-00000000.jsonl"
    last = spark_dir / "batch-00000002.jsonl"
    os.utime(first, ns=(last.stat().st_mtime_ns, last.stat().st_mtime_ns))
    assert ordered_files(spark_dir) is None


@pytest.mark.parametrize("change", ["no manifest", "unlisted file", "typed columns"])
def test_inputs_not_as_generate_writes_them_are_left_to_python(spark_dir: Path, change: str) -> None:
    if change == "no manifest":
        (spark_dir / "_batches.json").unlink()
    elif change == "unlisted file":
        (spark_dir / "zz-extra.jsonl").write_text('{"seq": 99, "arrival_ms": 1, "value": "{}"}\n')
    else:
        first = spark_dir / "batch-00000000.jsonl"
        stamp = first.stat().st_mtime_ns
        first.write_text('{"ts": 1, "key": "a", "seq": 0, "arrival_ms": 1}\n')
        os.utime(first, ns=(stamp, stamp))
    assert ordered_files(spark_dir) is None


def test_the_staged_input_ends_with_the_end_row_in_the_last_file(
    spark_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    files = ordered_files(spark_dir)
    assert files is not None
    staged = staged_dir(files, end_of_input=True)
    assert staged is not None
    assert staged_dir(files, end_of_input=True) == staged  # resumable: the same paths
    copies = sorted(staged.glob("*.jsonl"))
    assert [p.name for p in copies] == [p.name for p in files]
    assert [p.stat().st_mtime_ns for p in copies] == [p.stat().st_mtime_ns for p in files]
    *rows, end = records(copies[-1])
    assert rows == records(files[-1])
    assert end == {"kind": "end", "after_seq": max(r["seq"] for r in rows),
                   "arrival_ms": max(r["arrival_ms"] for r in rows)}
    assert staged_dir(files, end_of_input=False) != staged


def test_an_empty_last_file_ends_without_a_record() -> None:
    assert json.loads(end_line(Path(os.devnull))) == {
        "kind": "end", "after_seq": None, "arrival_ms": None}
