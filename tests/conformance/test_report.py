"""The check report: times in the scenario's unit (ISO for calendar times), and a timeline
built from the oracle's own account, its clock named as the profile names it."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.conformance.check import check, describe_output
from windtunnel.conformance.report import render, timeline, unit_note
from windtunnel.conformance.targets import callable_target, oracle_outputs
from windtunnel.oracle.explain import explain
from windtunnel.oracle.model.results import Emission, Output
from windtunnel.oracle.scenario import Scenario, parse_scenario

ISO_SPEC: dict[str, Any] = {
    "name": "iso",
    "profile": "spark",
    "window": {"kind": "fixed", "size": "10min", "on": "ts", "tolerance": "2min"},
    "group_by": ["user"],
    "aggregate": {"n": "count()"},
    "input": [
        {"batch": [{"event": {"ts": "2024-05-01T10:01:00Z", "user": "alice"}}]},
        {"batch": [{"event": {"ts": "2024-05-01T10:13:00Z", "user": "alice"}}]},
        {"batch": [{"event": {"ts": "2024-05-01T10:05:00Z", "user": "alice"}}]},
    ],
}
SECONDS_SPEC: dict[str, Any] = {
    "name": "seconds",
    "time_unit": "s",
    "window": {"kind": "fixed", "size": "10s", "on": "ts"},
    "group_by": ["user"],
    "aggregate": {"n": "count()"},
    "input": [{"ts": 1, "user": "a"}, {"ts": 12, "user": "a"}, {"ts": 3, "user": "b"}],
}


def emissions_of(profile: str) -> Any:
    def run(scenario: Scenario) -> list[Output]:
        return [o for o in oracle_outputs(scenario, profile) if isinstance(o, Emission)]
    return run


def report(spec: dict[str, Any], behaves_like: str) -> str:
    target = callable_target(emissions_of(behaves_like), name="other")
    result = check(parse_scenario(spec), target, examples=0, shrink_seconds=0)
    assert result.failure is not None
    return render(result, result.failure)


def test_calendar_times_read_as_iso_everywhere() -> None:
    text = report(ISO_SPEC, "tenzir")
    assert "17145" not in text  # no raw epoch milliseconds anywhere
    assert "[2024-05-01T10:00:00Z,2024-05-01T10:10:00Z) \"alice\"" in text
    assert "times ISO-8601 UTC" in text
    rows = text.split("timeline under profile spark")[1].splitlines()
    assert any("2024-05-01T10:13:00Z" in row and "2024-05-01T10:11:00Z" in row for row in rows)


def test_times_read_in_the_scenario_unit() -> None:
    text = report(SECONDS_SPEC, "spark")
    assert 'first divergent window: [0s,10s) "b" n=1 (end_of_input partial)' in text
    assert "times in s" in text and "10000" not in text


@pytest.mark.parametrize(
    ("profile", "clock"), [("tenzir", "clock"), ("kdb", "clock"), ("spark", "watermark"),
                           ("flink", "watermark")],
)
def test_the_clock_column_is_named_as_the_profile_names_it(profile: str, clock: str) -> None:
    scenario = parse_scenario({**SECONDS_SPEC, "profile": profile})
    head = timeline(scenario, profile, None)[1].split()
    assert head[:5] == ["seq", "time", "arrival", "batch", clock]


def test_the_timeline_reads_the_clock_from_explain() -> None:
    scenario = parse_scenario(SECONDS_SPEC)
    account = explain(scenario, "tenzir")
    lines = timeline(scenario, "tenzir", None)
    assert "clock of the event's key" in lines[0]
    for seq, line in enumerate(lines[2:5]):
        item = account.items[seq]
        (change,) = [c for c in item.clocks if c.group == item.events[0].group]
        assert line.split()[4] == f"{change.after_ms // 1000}s"
    assert any("[0s,10s) \"a\" n=1 (close)" in line for line in lines[2:])  # emitted at #1


def test_focus_marks_events_behind_the_window_and_follows_its_key() -> None:
    scenario = parse_scenario(SECONDS_SPEC)
    focus = next(o for o in oracle_outputs(scenario) if isinstance(o, Emission)
                 and o.group == "b")
    lines = timeline(scenario, "tenzir", focus)
    assert 'clock of "b"' in lines[0]
    marked = [line.split()[1] for line in lines[2:] if line.startswith("  *")]
    assert marked == ["2"]


def test_describe_output_in_unit_and_as_iso() -> None:
    (first, *_) = [o for o in oracle_outputs(parse_scenario(SECONDS_SPEC)) if isinstance(o, Emission)]
    assert describe_output(first, 1000).startswith("[0s,10s) \"a\" n=1")
    assert describe_output(first).startswith("[0,10000) \"a\"")


def test_unit_note() -> None:
    assert unit_note(parse_scenario(SECONDS_SPEC)) == "times in s"
    assert unit_note(parse_scenario(ISO_SPEC)) == "times ISO-8601 UTC"
