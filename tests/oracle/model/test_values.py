"""The model: durations, timestamps, stream validation, and results as JSON lines and DataFrames."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pytest

from windtunnel.oracle import (
    Advance,
    Aggregation,
    End,
    Event,
    FixedWindows,
    InvalidInput,
    InvalidStream,
    Query,
    run,
)
from windtunnel.oracle.model.results import outputs_from_json
from windtunnel.oracle.model.stream import numbered
from windtunnel.oracle.model.timeparse import (
    NotATime,
    format_duration,
    parse_duration_ms,
    timestamp_ms,
)


@pytest.mark.parametrize(
    ("text", "ms"),
    [("250ms", 250), ("10s", 10_000), ("5min", 300_000), ("5m", 300_000), ("2h", 7_200_000), ("1d", 86_400_000), ("1.5s", 1_500), ("0.0005s", 0), (" 3 s ", 3_000)],
)
def test_durations(text: str, ms: int) -> None:
    assert parse_duration_ms(text, "d") == ms


@pytest.mark.parametrize(("value", "unit", "ms"), [(5, "ms", 5), (5, "s", 5_000), (1.2345, "s", 1_234), (2, "min", 120_000)])
def test_plain_numbers_are_in_the_time_unit_and_floored(value: float, unit: str, ms: int) -> None:
    assert parse_duration_ms(value, "d", unit) == ms


@pytest.mark.parametrize("value", ["10 parsecs", "s", "", None, True, [1], float("nan")])
def test_bad_durations_name_the_field(value: object) -> None:
    with pytest.raises(InvalidInput) as error:
        parse_duration_ms(value, "window.size")
    assert error.value.field == "window.size" and "10s" in str(error.value)


def test_timestamps() -> None:
    assert timestamp_ms("2026-01-01T00:00:00Z") == 1_767_225_600_000
    assert timestamp_ms("2026-01-01T01:00:00.0019+01:00") == 1_767_225_600_001  # floored to the ms
    assert timestamp_ms(datetime(1969, 12, 31, 23, 59, 59, 999_500, tzinfo=UTC)) == -1
    assert timestamp_ms(7, 1000) == 7000
    assert timestamp_ms(None) is None
    for bad in ("2026-01-01T00:00:00", "soon", True, {"a": 1}, float("inf")):
        with pytest.raises(NotATime):
            timestamp_ms(bad)


def test_format_duration() -> None:
    assert [format_duration(ms) for ms in (90_000, 3_600_000, 1_500, 0)] == ["90s", "1h", "1500ms", "0ms"]


@pytest.mark.parametrize(
    ("items", "field"),
    [
        ([Event(0, {"ts": 1}, 10), Event(1, {"ts": 2}, 5)], "input[1].at"),
        ([Advance(10), Advance(5)], "input[1].at"),
        ([Event(1, {"ts": 1})], "input[0].seq"),
        ([End(), Event(0, {"ts": 1})], "input[1]"),
    ],
)
def test_malformed_streams_are_rejected(items: list[object], field: str) -> None:
    with pytest.raises(InvalidStream) as error:
        run(Query(FixedWindows(10)), items)  # type: ignore[arg-type]
    assert error.value.field == field


def test_result_as_jsonl_and_dataframe() -> None:
    query = Query(FixedWindows(10), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    result = run(query, numbered([{"ts": 1, "k": "a"}, {"ts": 12, "k": "a"}, {"ts": 2, "k": "a"}, {"ts": None, "k": "b"}]))
    text = result.to_jsonl()
    buffer = io.StringIO()
    result.write_jsonl(buffer)
    assert buffer.getvalue() == text
    records = [json.loads(line) for line in text.splitlines()]
    assert [r["type"] for r in records] == ["emit", "drop", "drop", "emit"]
    assert list(records[0]) == ["type", "window", "group", "row", "reason", "after_seq", "wall_ms", "partial"]
    # a grouped drop carries its group after the contract's fields (an extension)
    assert list(records[1]) == ["type", "seq", "reason", "windows", "message", "group"]
    assert [records[1]["group"], records[2]["group"]] == ["a", "b"]
    assert tuple(outputs_from_json(records)) == result.outputs
    frame = result.to_pandas()
    assert list(frame["type"]) == ["emit", "drop", "drop", "emit"]
    assert list(frame["reason"]) == ["close", "late", "null_time", "end_of_input"]
    assert frame["start_ms"].tolist()[:2] == [0, 0] and str(frame["start_ms"].dtype) == "Int64"
    assert frame["row.n"].tolist()[0] == 1


def test_a_long_path_is_echoed_whole_and_a_longer_value_keeps_its_end() -> None:
    from windtunnel.oracle.model.errors import InvalidScenario

    path = "/tmp/pytest-of-someone/pytest-123/popen-gw1/test_bad_files_give_one_line_b0/bomb.yaml"
    assert f"file={path!r}: " in str(InvalidScenario("file", path, "rule", "fix"))
    deep = "/" + "d" * 400 + "/spec.yaml"
    echoed = str(InvalidScenario("file", deep, "rule", "fix")).split(": rule")[0]
    assert echoed.startswith("file='/ddd") and echoed.endswith("/spec.yaml'")
    assert "..." in echoed and len(echoed) <= len("file=") + 240
    item = {"events": list(range(200))}
    echoed = str(InvalidScenario("input[3]", item, "rule", "fix")).split(": rule")[0]
    assert len(echoed) <= len("input[3]=") + 80 and echoed.endswith("198, 199]}")
