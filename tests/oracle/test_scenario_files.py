"""Scenario files: parsing the contract's format, and one clear error per kind of mistake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from windtunnel.oracle import (
    Advance,
    Batch,
    End,
    Event,
    InvalidInput,
    load_scenario,
    parse_scenario,
    replay,
)

BASE: dict[str, Any] = {"window": {"size": "10s"}, "input": [{"ts": 0}]}


def scenario(**changes: Any) -> dict[str, Any]:
    data = {**BASE, **changes}
    return {k: v for k, v in data.items() if v is not None}


def test_contract_input_forms() -> None:
    parsed = parse_scenario(
        scenario(
            start_wall=1000,
            input=[
                {"ts": 0, "user": "a"},
                {"event": {"ts": 5000, "at": 1}, "at": 7000},
                {"advance": "30s"},
                {"at": 120000},
                {"batch": [{"ts": 1}, {"ts": 2}]},
                {"end": True},
            ],
        )
    )
    assert parsed.items == (
        Event(0, {"ts": 0, "user": "a"}, None),
        Event(1, {"ts": 5000, "at": 1}, 7000),
        Advance(37000),
        Advance(120000),
        Batch((Event(2, {"ts": 1}), Event(3, {"ts": 2}))),
        End(),
    )
    assert parsed.profile.name == "tenzir"


def test_time_unit_scales_plain_numbers() -> None:
    parsed = parse_scenario(scenario(time_unit="s", window={"size": 60}, input=[{"ts": 59}, {"ts": 60}]))
    assert parsed.query.window.size_ms == 60_000
    assert [(e.window.start_ms, e.window.end_ms) for e in replay(parsed).emissions] == [(0, 60_000), (60_000, 120_000)]


@pytest.mark.parametrize(
    ("changes", "field", "hint"),
    [
        ({"window": {"size": "10 parsecs"}}, "window.size", "10s"),
        ({"window": {"size": "-5s"}}, "window.size", "greater than 0"),
        ({"window": {"size": "10s", "every": "20s"}}, "window.every", "lower every"),
        ({"window": {"size": "10s", "every": "0s"}}, "window.every", "greater than 0"),
        ({"window": {"size": "10s", "tolerance": "-1s"}}, "window.tolerance", "positive"),
        ({"window": {"size": "10s", "colour": "red"}}, "window.colour", "use one of"),
        ({"window": {"kind": "tumbling", "size": "10s"}}, "window.kind", "use one of"),
        ({"window": {"size": "10s", "on": 5}}, "window.on", "on: ts"),
        ({"window": None}, "window", "add window"),
        ({"window": ["size", "10s"]}, "window", "must be a mapping"),
        ({"sizes": 1}, "sizes", "use one of"),
        ({"time_unit": "fortnight"}, "time_unit", "use one of"),
        ({"profile": "kafka-streams"}, "profile", "use one of"),
        ({"rules": {"close_at": "sometimes"}}, "rules.close_at", "use one of"),
        ({"rules": {"closing": "reaches"}}, "rules.closing", "use one of"),
        ({"aggregate": {"n": "median(x)"}}, "aggregate.n", "use one of"),
        ({"aggregate": {"n": 5}}, "aggregate.n", "count()"),
        ({"aggregate": []}, "aggregate", "mapping"),
        ({"group_by": 5}, "group_by", "list"),
        ({"input": {"ts": 0}}, "input", "must be a list"),
        ({"input": [5]}, "input[0]", "must be a mapping"),
        ({"input": [{"ts": 0, "at": 5}]}, "input[0].ts", "event:"),
        ({"input": [{"at": 10}, {"at": 5}]}, "input[1].at", "go back"),
        ({"input": [{"at": 10}, {"event": {"ts": 1}, "at": 3}]}, "input[1].at", "go back"),
        ({"input": [{"advance": "-5s"}]}, "input[0].advance", "go back"),
        ({"input": [{"advance": "soon"}]}, "input[0].advance", "10s"),
        ({"input": [{"end": True}, {"ts": 1}]}, "input[1]", "after end"),
        ({"input": [{"end": "yes"}]}, "input[0].end", "must be true"),
        ({"input": [{"batch": {"ts": 1}}]}, "input[0].batch", "must be a list"),
        ({"input": [{"event": 5}]}, "input[0].event", "mapping"),
        ({"input": [{"at": "noon"}]}, "input[0].at", "ISO-8601"),
        ({"expect": {"emissions": [{"window": 5}]}}, "expect.emissions[0].window", "[start, end]"),
        ({"expect": {"drops": [{"sequence": 1}]}}, "expect.drops[0]", "seq: 4"),
        ({"expect": {"surprises": []}}, "expect.surprises", "use emissions"),
        ({"start_wall": "soon"}, "start_wall", "ISO-8601"),
    ],
)
def test_malformed_scenarios_name_field_value_and_fix(changes: dict[str, Any], field: str, hint: str) -> None:
    with pytest.raises(InvalidInput) as error:
        parse_scenario(scenario(**changes))
    message = str(error.value)
    assert error.value.field == field, message
    assert message.startswith(f"{field}="), message
    assert hint in message, message
    assert "\n" not in message


def test_unreadable_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="cannot be read"):
        load_scenario(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("window: [unclosed\n")
    with pytest.raises(InvalidInput, match="not valid YAML at line"):
        load_scenario(bad)
    json_file = tmp_path / "s.json"
    json_file.write_text('{"window": {"size": "10s"}, "input": [{"ts": 1}]}')
    assert load_scenario(json_file).name == "s"
