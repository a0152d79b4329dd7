"""Comparing profiles: windows lined up by profile, each difference with the rules behind it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from windtunnel.oracle import InvalidScenario, InvalidSpec
from windtunnel.oracle.compare import compare
from windtunnel.oracle.scenario import load_yaml

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def article(name: str) -> Any:
    return load_yaml((EXAMPLES / f"article-{name}.yaml").read_text())


def by_window(comparison: Any) -> dict[tuple[str, str], Any]:
    return {(line.key[1], line.key[2]): line for line in comparison.lines}


def test_spark_never_emits_the_window_still_open_at_end_of_input_and_the_rule_is_named() -> None:
    comparison = compare(article("tumbling"), ["tenzir", "spark"], timing=False)
    differences = comparison.differences
    assert len(differences) == 1
    line = differences[0]
    assert line.key == ("emit", '{"end_ms": 240000, "start_ms": 180000}', "91003")
    assert line.cells == {"tenzir": ("sum=300",), "spark": ()}
    assert line.causes == {"spark": ("end_of_input",)}
    assert line.cause_kind["spark"] == "rule"


def test_timing_differences_name_the_closing_rules() -> None:
    comparison = compare(article("tumbling"), ["tenzir", "flink"])
    line = by_window(comparison)[('{"end_ms": 60000, "start_ms": 0}', "91001")]
    # tenzir closes [0,60) for 91001 with 91001's own next event (seq 5); flink's stream-wide
    # watermark reaches 59 s with 91002's event at 70 s (seq 4)
    assert line.cells == {"tenzir": ("sum=4230 (close after #5)",), "flink": ("sum=4230 (close after #4)",)}
    assert line.causes["flink"] == ("clock_scope",)


def test_session_bounds_differ_by_session_ends_and_rows_agree() -> None:
    comparison = compare(article("session"), ["tenzir", "flink"], timing=False)
    windows = by_window(comparison)
    assert windows[('{"end_ms": 35000, "start_ms": 5000}', "91001")].causes == {"flink": ("session_ends",)}
    assert windows[('{"end_ms": 65000, "start_ms": 5000}', "91001")].cells["flink"] == ("sum=4230",)


def test_drops_are_lined_up_by_event_with_delivered_where_not_dropped() -> None:
    data = {"window": {"kind": "fixed", "size": 10}, "group_by": "k", "aggregate": {"n": "count()"}, "input": [{"ts": 100, "k": "a"}, {"ts": 5, "k": "b"}]}
    comparison = compare(data, ["tenzir", "flink"])
    drop = next(line for line in comparison.lines if line.key[0] == "drop")
    assert drop.cells == {"tenzir": ("delivered",), "flink": ("late",)}
    assert drop.causes == {"flink": ("clock_scope",)}


def test_a_profile_that_cannot_run_the_scenario_is_reported_not_fatal() -> None:
    data = {"window": {"kind": "trailing", "size": 10}, "aggregate": {"n": "count()"}, "input": [{"ts": 1}]}
    comparison = compare(data, ["tenzir", "spark"])
    spark = comparison.runs[1]
    assert spark.error is not None and "window.kind" in spark.error
    assert all(line.cells["spark"] == ("n/a",) for line in comparison.lines)


def test_json_output_has_profiles_rules_lines_and_a_difference_count() -> None:
    data = compare(article("tumbling"), ["tenzir", "flink", "spark"]).to_json()
    assert [p["name"] for p in data["profiles"]] == ["tenzir", "flink", "spark"]
    assert data["profiles"][2]["rules"]["clock_moves"] == "batch"
    assert data["differences"] == sum(1 for line in data["lines"] if line["differs"])
    assert {"type", "window", "group", "cells", "differs", "causes"} <= set(data["lines"][0])


def test_scenario_rule_overrides_apply_to_every_profile() -> None:
    comparison = compare(article("sliding"), ["tenzir", "flink"], timing=False)
    assert all(run.rules["alignment"] == "epoch_from_zero" for run in comparison.runs)
    assert comparison.differences == []


@pytest.mark.parametrize(("profiles", "error"), [(["tenzir"], InvalidScenario), (["tenzir", "storm"], InvalidSpec)])
def test_bad_profile_lists_are_input_errors(profiles: list[str], error: type[Exception]) -> None:
    with pytest.raises(error):
        compare(article("tumbling"), profiles)


SIX = ["tenzir", "flink", "spark", "kdb", "timeplus", "ekuiper"]


def six_profiles() -> Any:
    return load_yaml((EXAMPLES / "six-profiles.yaml").read_text())


def test_all_six_profiles_run_one_stream() -> None:
    comparison = compare(six_profiles(), SIX)
    assert [r.error for r in comparison.runs] == [None] * 6
    late = next(line for line in comparison.lines if line.key == ("drop", "4", ""))
    # b@7 after a@12: tenzir's per-key clock (b at 8) keeps it, spark's late test uses the
    # previous batch's watermark (4); the stream-wide clocks at 12 drop it
    assert late.cells == {"tenzir": ("delivered",), "flink": ("late",), "spark": ("delivered",),
                          "kdb": ("late",), "timeplus": ("late",), "ekuiper": ("late",)}
    assert late.causes["kdb"] == ("clock_scope",)


def test_kdb_empty_windows_come_from_its_own_operator_and_the_rule_is_named() -> None:
    line = by_window(compare(six_profiles(), SIX, timing=False))[
        ('{"end_ms": 30000, "start_ms": 20000}', '"a"')]
    assert line.cells["kdb"] == ("n=0 ts=[]",)
    assert line.cells["tenzir"] == ()
    assert line.cause_kind["kdb"] == "operator"
    assert "empty_windows" in line.causes["kdb"]


def test_end_of_input_is_named_for_the_profiles_that_discard() -> None:
    line = by_window(compare(six_profiles(), SIX, timing=False))[
        ('{"end_ms": 40000, "start_ms": 30000}', '"a"')]
    assert {p for p, c in line.cells.items() if c == ()} == {"spark", "timeplus", "ekuiper"}
    assert all(line.causes[p] == ("end_of_input",) for p in ("spark", "timeplus", "ekuiper"))


def test_rules_the_other_profile_cannot_take_back_are_not_named() -> None:
    # ekuiper's empty [20, 30): late_test and clock_scope set back to tenzir's values are input
    # errors under ekuiper, so only empty_windows is named beside its own operator
    line = by_window(compare(six_profiles(), SIX, timing=False))[
        ('{"end_ms": 30000, "start_ms": 20000}', "null")]
    assert line.cells["ekuiper"] == ("n=0 ts=[]",)
    assert (line.causes["ekuiper"], line.cause_kind["ekuiper"]) == (("empty_windows",), "operator")
