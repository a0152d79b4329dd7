"""What `windtunnel run` says about its source without Spark: records held, a payload
sample, and the notes after a run (records not read, windows left open)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from windtunnel.cli.run_source import Held, end_notes, make_out_dir
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.spark_impl.peek import payloads_of, records_sample, records_total


@dataclass(frozen=True)
class Report:
    rows_in: int
    checkpoint: str | None = None
    open_windows: int | None = None


def line(seq: int, value: object) -> str:
    return json.dumps({"seq": seq, "arrival_ms": seq, "value": json.dumps(value)}) + "\n"


def test_records_and_a_sample_of_a_jsonl_file_and_a_spark_dir(tmp_path: Path) -> None:
    file = tmp_path / "s.jsonl"
    file.write_text("".join(line(i, {"ts": i, "k": f"u{i}"}) for i in range(5)))
    assert records_total(file) == 5
    assert records_sample(file, limit=2) == [{"ts": 0, "k": "u0"}, {"ts": 1, "k": "u1"}]
    directory = tmp_path / "dir"
    directory.mkdir()
    (directory / "batch-00000000.jsonl").write_text(line(0, {"ts": 0}) + line(1, {"ts": 1}))
    (directory / "batch-00000001.jsonl").write_text(line(2, {"ts": 2}))
    assert records_total(directory) == 3
    (directory / "_batches.json").write_text(json.dumps([{"records": 2}, {"records": 1}]))
    assert records_total(directory) == 3
    assert [p["ts"] for p in records_sample(directory)] == [0, 1, 2]


def test_only_json_objects_make_the_sample() -> None:
    assert payloads_of(iter([b'{"a": 1}', "not json", "[1]", None, '{"b": 2}'])) == [
        {"a": 1}, {"b": 2}
    ]


@pytest.mark.parametrize(
    ("report", "options", "expected"),
    [
        (Report(11), {"ended": True, "kafka": False, "stock": False}, []),
        (Report(0), {"ended": False, "kafka": True, "stock": False},
         ["read 0 of the 10 records the source held at the start"]),
        (Report(10, "ck"), {"ended": False, "kafka": True, "stock": False}, [
            "windows still open when the run stopped (those of the latest events, at least) "
            "were not emitted: Kafka has no end of input; they close when later records move "
            "the clock past them",
            "their state is kept in ck: run again with --checkpoint ck to go on"]),
        (Report(10, None, 3), {"ended": False, "kafka": False, "stock": True}, [
            "3 windows were still open when the input stopped: stock Spark emits a window once "
            "the watermark passes its end and has no end of input, so they are not emitted",
            "without --checkpoint their state went with this run"]),
    ],
    ids=["ended", "nothing-read", "kafka", "stock"],
)
def test_notes_on_open_windows(report: Report, options: dict[str, bool], expected: list[str]) -> None:
    assert end_notes(report, Held(10), available_now=True, **options) == expected


def test_fewer_records_read_than_held_is_said() -> None:
    notes = end_notes(Report(7), Held(10), ended=True, kafka=False, stock=False,
                      available_now=True)
    assert notes == ["read 6 of the 10 records the source held at the start"]


def test_out_is_created_or_refused(tmp_path: Path) -> None:
    make_out_dir(str(tmp_path / "a" / "b"))
    assert (tmp_path / "a" / "b").is_dir()
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidInput, match="cannot be created"):
        make_out_dir(str(tmp_path / "file" / "out"))
