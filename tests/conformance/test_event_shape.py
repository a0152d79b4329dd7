"""Generated streams carry every field of the spec's event shape: declared, seen in its
input, read by its stages; and ``check`` takes a spec without input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from windtunnel.cli.main import cli
from windtunnel.conformance.event_shape import KEY_VALUES, inferred_fields, stage_fields
from windtunnel.conformance.generate import generate
from windtunnel.oracle.model.field_specs import FieldSpec
from windtunnel.oracle.model.stream import events_of
from windtunnel.oracle.scenario import load_spec, load_yaml, parse_scenario

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "clicks-dedup.yaml"


def payloads(spec: Any, count: int = 12, seed: int = 3) -> list[list[dict[str, Any]]]:
    return [[dict(e.payload) for e in events_of(s.items)] for s in generate(spec, count, seed)]


def test_input_fields_are_inferred_by_type_with_their_nulls() -> None:
    seen = inferred_fields([
        {"user": "a", "n": 1, "x": 2.5, "ok": True, "mixed": 1, "geo": {"city": "x"}},
        {"user": "b", "n": 4, "x": 1, "ok": None, "mixed": "one", "geo": {"city": None}},
    ])
    assert seen == [
        FieldSpec("user", "string", ("a", "b")),
        FieldSpec("n", "int", low=1, high=4),
        FieldSpec("x", "float", low=1, high=2.5),
        FieldSpec("ok", "bool", nulls=0.5),
        FieldSpec("geo.city", "string", ("x",), nulls=0.5),
    ]  # "mixed" has two types: left out


def test_stage_fields_are_drawn_around_their_literals_and_keys_repeat() -> None:
    spec = parse_scenario({"window": {"size": 10}, "aggregate": {"n": "count()"},
                           "where": "amount > 0 AND kind = 'web' AND NOT (flag = true)",
                           "deduplicate": {"key": ["click_id"]}, "input": []})
    fields = {f.path: f for f in stage_fields(spec)}
    assert fields["amount"].choices == (-1, 0, 1)
    assert fields["kind"].choices == ("web", "not web")
    assert fields["flag"].choices == (True, False)
    assert fields["click_id"].choices == KEY_VALUES
    assert all(fields[p].nulls > 0 for p in ("amount", "kind", "flag"))


def test_every_generated_event_carries_every_field_of_the_example() -> None:
    spec = load_spec(EXAMPLE)
    streams = payloads(spec)
    events = [p for stream in streams for p in stream]
    assert events and all(set(p) == {"ts", "campaign", "click_id", "cost"} for p in events)
    assert {p["campaign"] for p in events} == {"spring", "summer"}  # as declared, not a/b/c
    assert {type(p["cost"]) for p in events} <= {int, type(None)}
    assert any(p["cost"] is not None and p["cost"] <= 0 for p in events)  # the filter is exercised


def test_a_deduplicate_spec_gets_repeated_keys_and_redelivered_events() -> None:
    streams = payloads(load_spec(EXAMPLE), count=20)
    repeated_key = redelivered = False
    for stream in streams:
        ids = [p["click_id"] for p in stream]
        repeated_key |= len(set(ids)) < len(ids)
        redelivered |= any(p == q for i, p in enumerate(stream) for q in stream[:i])
    assert repeated_key and redelivered


def test_fields_only_in_the_input_are_generated_too() -> None:
    spec = parse_scenario({"window": {"size": 10}, "aggregate": {"n": "count()"}, "input": [
        {"ts": 1, "note": "hi", "score": 3}, {"ts": 2, "note": "ho", "score": 7}]})
    events = [p for stream in payloads(spec) for p in stream]
    assert events and all({"note", "score"} <= set(p) for p in events)
    assert {p["note"] for p in events} <= {"hi", "ho"}
    assert all(3 <= p["score"] <= 7 for p in events)


def test_a_spec_without_fields_or_stages_generates_what_it_did_before() -> None:
    spec = parse_scenario({"window": {"size": 10}, "group_by": "k", "aggregate": {"s": "sum(v)"},
                           "input": []})
    assert all(set(p) <= {"ts", "k", "v"} for stream in payloads(spec) for p in stream)


def test_the_same_seed_gives_the_same_streams() -> None:
    spec = load_spec(EXAMPLE)
    assert payloads(spec, 6, seed=9) == payloads(spec, 6, seed=9)


def test_check_takes_a_spec_without_input(tmp_path: Path) -> None:
    data = load_yaml(EXAMPLE.read_text())
    del data["input"], data["expect"]
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(cli, ["check", str(path), "--target", "oracle:spark",
                                      "--examples", "8", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "checked 8 scenarios against oracle:spark" in result.output


def test_an_unknown_faker_provider_stops_check_before_any_run(tmp_path: Path) -> None:
    data = load_yaml(EXAMPLE.read_text())
    data["fields"]["click_id"]["faker"] = "clickid"
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(cli, ["check", str(path), "--target", "oracle:spark"])
    assert result.exit_code == 2
    assert "fields.click_id.faker='clickid': is not a Faker provider" in result.output
