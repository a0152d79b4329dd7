"""Profiles as data: named rules with sources, overrides, and what a profile cannot express."""

from __future__ import annotations

import pytest

from windtunnel.oracle import InvalidSpec, Rules
from windtunnel.oracle.engine import replay
from windtunnel.oracle.model.rules import RULE_DOCS, RULE_VALUES
from windtunnel.oracle.profiles import PROFILES, Profile, profile_named, register
from windtunnel.oracle.scenario import parse_scenario

OWN = ("tenzir", "flink", "spark")


def scenario(**top: object) -> dict[str, object]:
    base: dict[str, object] = {"window": {"kind": "fixed", "size": 10}, "aggregate": {"n": "count()"}, "input": [{"ts": 1}, {"ts": 12}, {"ts": 3}]}
    base.update(top)
    return base


@pytest.mark.parametrize("name", OWN)
def test_every_rule_of_every_profile_cites_a_source(name: str) -> None:
    profile = profile_named(name)
    assert set(profile.sources) == set(RULE_VALUES)
    assert all(profile.source(rule).strip() for rule in RULE_VALUES)


def test_every_rule_has_values_a_default_and_an_explanation() -> None:
    assert set(RULE_DOCS) == set(RULE_VALUES)
    defaults = Rules().as_dict()
    assert all(defaults[name] in values and len(values) >= 1 for name, values in RULE_VALUES.items())


def test_the_default_profile_is_tenzir_with_default_rules() -> None:
    assert parse_scenario(scenario()).profile.name == "tenzir"
    assert profile_named("tenzir").rules == Rules()


def test_a_scenario_overrides_single_rules_of_its_profile() -> None:
    parsed = parse_scenario(scenario(profile="spark", rules={"end_of_input": "flush"}))
    assert parsed.rules.end_of_input == "flush"
    assert parsed.rules.clock_moves == "batch"  # the rest stays the profile's


def test_an_override_changes_the_result() -> None:
    # tenzir: 3 is late after 12 closed [0,10); with close_at passes [0,10) is still open
    # at clock 12? no: 12 > 10 either way; use tolerance 2: reaches closes at 12, passes at 13
    data = scenario(window={"kind": "fixed", "size": 10, "tolerance": 2})
    assert [d.seq for d in replay(parse_scenario(data)).drops] == [2]
    assert replay(parse_scenario({**data, "rules": {"close_at": "passes"}})).drops == []


def test_an_unknown_rule_is_an_input_error_listing_the_valid_rules() -> None:
    with pytest.raises(InvalidSpec) as error:
        parse_scenario(scenario(rules={"close_when": "reaches"}))
    assert error.value.field == "rules.close_when"
    assert "session_gap" in str(error.value) and "close_at" in str(error.value)


def test_an_unknown_rule_value_is_an_input_error_listing_the_valid_values() -> None:
    with pytest.raises(InvalidSpec) as error:
        parse_scenario(scenario(rules={"clock_moves": "sometimes"}))
    assert error.value.field == "rules.clock_moves"
    assert "event, batch, batch_inclusive" in str(error.value)


def test_an_unknown_profile_lists_the_known_ones() -> None:
    with pytest.raises(InvalidSpec) as error:
        parse_scenario(scenario(profile="storm"))
    assert all(name in str(error.value) for name in OWN)


def test_a_registered_profile_is_usable_by_name_and_its_sources_must_name_rules() -> None:
    custom = Profile("test-passes", "close strictly past the end", Rules(close_at="passes"), {"close_at": "a test"})
    try:
        register(custom)
        parsed = parse_scenario(scenario(profile="test-passes"))
        assert parsed.rules.close_at == "passes"
    finally:
        PROFILES.pop("test-passes", None)
    with pytest.raises(InvalidSpec):
        Profile("bad", "", Rules(), {"no_such_rule": "x"})


@pytest.mark.parametrize(
    ("profile", "window", "field"),
    [
        ("spark", {"kind": "trailing", "size": 5}, "window.kind"),
        ("flink", {"kind": "count", "count": 5}, "window.kind"),
        ("flink", {"kind": "session", "gap": 5, "max_events": 3}, "window.max_events"),
        ("spark", {"kind": "fixed", "size": 5, "idle_timeout": 5}, "window.idle_timeout"),
    ],
)
def test_a_profile_rejects_what_its_engine_cannot_express(profile: str, window: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        replay(parse_scenario(scenario(profile=profile, window=window, group_by="k")))
    assert error.value.field == field
    assert f"profile {profile}" in str(error.value)


@pytest.mark.parametrize(
    ("rule", "value"), [("late_test", "record"), ("empty_windows", "emit")]
)
def test_rule_values_an_operator_does_not_implement_are_errors_not_silently_ignored(rule: str, value: str) -> None:
    data = scenario(window={"kind": "session", "gap": 5}, rules={rule: value})
    with pytest.raises(InvalidSpec) as error:
        replay(parse_scenario(data))
    assert error.value.field == f"rules.{rule}"
