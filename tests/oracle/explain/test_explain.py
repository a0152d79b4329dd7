"""explain: an account of every event under every profile, from the oracle's own hooks."""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel.conformance.targets import oracle_outputs
from windtunnel.oracle.explain import explain
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.results import Drop, Emission, WindowRef
from windtunnel.oracle.model.timefmt import time_text, window_text
from windtunnel.oracle.scenario import load_scenario, parse_scenario

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
PROFILES = ("tenzir", "flink", "spark", "kdb", "timeplus", "ekuiper")
CASES = [(path.name, p) for path in sorted(EXAMPLES.glob("*.yaml")) for p in PROFILES]


@pytest.mark.parametrize(("example", "profile"), CASES)
def test_every_event_is_delivered_or_dropped_as_the_replay_says(example: str, profile: str) -> None:
    scenario = load_scenario(EXAMPLES / example)
    try:
        outputs = oracle_outputs(scenario, profile)
    except InvalidInput:
        with pytest.raises(InvalidInput):
            explain(scenario, profile)
        return
    account = explain(scenario, profile)
    assert [o for o in outputs if isinstance(o, Emission)] == [
        e for item in account.items for e in item.emissions
    ]
    dropped = {o.seq: o.reason for o in outputs if isinstance(o, Drop)}
    fates = account.fates()
    assert [f.seq for f in fates] == list(range(len(fates)))
    for fate in fates:
        assert fate.delivered_to or fate.drop is not None, (fate.seq, account.lines())
        assert (fate.drop.reason if fate.drop else None) == dropped.get(fate.seq)
        if fate.drop is not None:
            assert fate.misses
    assert account.lines()  # renders under every profile and kind


def test_spark_scenarios_explain_instead_of_asking_for_an_aggregate() -> None:
    # regression: explain re-ran spark scenarios as pass-through, which spark rejects
    account = explain(load_scenario(EXAMPLES / "six-profiles.yaml"), "spark")
    text = "\n".join(account.lines())
    assert "not supported" not in text
    assert "micro-batch 2: #2 ts=12 user=a, #3 ts=8 user=b: watermark 4s -> 12s" in text
    assert [w.window for w in account.lost] == [WindowRef(30_000, 40_000)]


def test_ekuiper_window_lost_at_end_of_input_is_reported_lost() -> None:
    # regression: it said "reached no window" for an event held by a window lost at the end
    account = explain(load_scenario(EXAMPLES / "six-profiles.yaml"), "ekuiper")
    fate = account.event(5)
    assert fate.delivered_to == (WindowRef(30_000, 40_000),)
    assert fate.drop is not None and fate.drop.reason == "end_of_input"
    assert "reached no window" not in "\n".join(account.lines())
    assert account.lines()[-1] == (
        "window [30s,40s) of a (holding #5) was never emitted: under ekuiper open windows are "
        "lost at end of input (rule end_of_input: discard)"
    )


def test_a_late_drop_names_the_closing_watermark_and_micro_batch() -> None:
    scenario = parse_scenario({
        "name": "late", "profile": "spark", "time_unit": "s",
        "window": {"kind": "fixed", "size": "10s", "on": "ts"}, "group_by": ["user"],
        "aggregate": {"n": "count()"},
        "input": [{"ts": 1, "user": "b"}, {"ts": 12, "user": "a"}, {"ts": 13, "user": "a"},
                  {"ts": 7, "user": "b"}],
    })
    fate = explain(scenario).event(3)
    assert fate.drop is not None and fate.drop.group == "b"
    assert fate.misses == (
        "its window [0s,10s) of b closed when the watermark reached 12s in micro-batch 2",
    )


def test_old_form_explains_one_event_and_rejects_unknown_seqs() -> None:
    scenario = load_scenario(EXAMPLES / "hourly-severity.yaml")
    fate = explain(scenario, 4)
    assert fate.delivered_to == (WindowRef(1_767_225_600_000, 1_767_229_200_000),)
    assert {e.reason for e in fate.emissions} == {"close"}
    with pytest.raises(InvalidInput, match="no such event"):
        explain(scenario, 99)


def test_json_account_has_every_item_and_the_lost_windows() -> None:
    scenario = load_scenario(EXAMPLES / "six-profiles.yaml")
    data = explain(scenario, "spark").to_json()
    assert [i["kind"] for i in data["items"]] == ["event", "event", "batch", "event", "event", "end"]
    assert data["items"][2]["micro_batch"] == 2
    assert data["never_emitted"][0]["seqs"] == [5]
    assert data["clock"] == "watermark"


@pytest.mark.parametrize(
    ("ms", "unit_ms", "text"),
    [(12_000, 1_000, "12s"), (12_500, 1_000, "12.5s"), (12_000, 1, "12000"),
     (90_000, 60_000, "1.5min"), (1_767_225_600_000, 1_000, "2026-01-01T00:00:00Z"),
     (None, 1, "none")],
)
def test_times_read_in_the_scenario_unit(ms: int | None, unit_ms: int, text: str) -> None:
    assert time_text(ms, unit_ms) == text


def test_windows_show_which_ends_they_include() -> None:
    assert window_text(WindowRef(0, 10_000), 1_000) == "[0s,10s)"
    assert window_text(WindowRef(0, 10_000), 1_000, closed_end=True) == "[0s,10s]"
    assert window_text(WindowRef(start_offset=4, end_offset=6)) == "#[4,6)"
