"""Injected watermark items ``{watermark: T}`` (docs/semantics.md, W1), per profile."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.oracle.model.errors import InvalidInput, InvalidStream
from windtunnel.oracle.model.results import Drop, Emission, Output
from windtunnel.oracle.model.stream import Event, StreamChecker, Watermark
from windtunnel.oracle.scenario import parse_scenario

from ..implementations import RunQuery

REFERENCE = RunQuery("reference")
"""For the profiles without a fast path (spark, kdb, ...)."""


def outputs(run_query: RunQuery, profile: str, items: list[Any], **extra: Any) -> list[Output]:
    data: dict[str, Any] = {
        "profile": profile,
        "window": {"kind": "fixed", "size": 10},
        "aggregate": {"n": "count()"},
        "input": items,
    }
    data.update(extra)
    return list(run_query.replay(parse_scenario(data)).outputs)


def emits(result: list[Output]) -> list[tuple[int, int, Any, str, int | None]]:
    return [
        (o.window.start_ms or 0, o.window.end_ms or 0, o.row["n"], o.reason, o.after_seq)
        for o in result
        if isinstance(o, Emission)
    ]


def closes(result: list[Output]) -> list[tuple[int, int, Any, str, int | None]]:
    """The emissions of closed windows (timeplus discards the open ones at end of input)."""
    return [e for e in emits(result) if e[3] == "close"]


def drops(result: list[Output]) -> list[tuple[int, str]]:
    return [(o.seq, o.reason) for o in result if isinstance(o, Drop)]


# --- the item ---------------------------------------------------------------------------


def test_the_item_parses_in_the_time_unit_and_consumes_no_seq() -> None:
    scenario = parse_scenario(
        {"window": {"size": 10}, "time_unit": "s",
         "input": [{"ts": 1}, {"watermark": 5}, {"ts": 2}, {"watermark": "1970-01-01T00:01:00Z"}]}
    )
    assert scenario.items[1] == Watermark(5000)
    assert scenario.items[2] == Event(1, {"ts": 2})  # the watermark took no seq
    assert scenario.items[3] == Watermark(60_000)


@pytest.mark.parametrize(
    ("item", "needle"),
    [
        ({"watermark": 5, "at": 3}, "input[0].at=3: cannot stand beside 'watermark'"),
        ({"watermark": None}, "input[0].watermark=None"),
        ({"watermark": "soon"}, "input[0].watermark='soon': not a timestamp"),
    ],
)
def test_a_bad_item_names_the_field(item: dict[str, Any], needle: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_scenario({"window": {"size": 10}, "input": [item]})
    assert needle in str(caught.value)


def test_the_item_checks_its_value_and_leaves_seq_and_wall_alone() -> None:
    with pytest.raises(InvalidStream, match="watermark=True"):
        Watermark(True)  # type: ignore[arg-type]
    checker = StreamChecker(7)
    checker.item(0, Watermark(100))
    assert (checker.wall_ms, checker.next_seq) == (7, 0)


# --- fired windows, late events, backwards watermarks, per profile ----------------------

FIRE = [{"ts": 1}, {"ts": 3}, {"watermark": 10}, {"ts": 4}]


@pytest.mark.parametrize("profile", ["tenzir", "flink", "timeplus"])
def test_a_watermark_ahead_of_the_events_fires_the_window_it_reaches(run_query: RunQuery, profile: str) -> None:
    result = outputs(run_query, profile, FIRE)
    # fired by the watermark item: after_seq is the last event before it
    assert emits(result)[0] == (0, 10, 2, "close", 1)
    assert drops(result) == [(2, "late")]  # made late by the watermark


def test_flink_fires_at_the_window_max_timestamp(run_query: RunQuery) -> None:
    # Flink fires [0, 10) once the watermark reaches 9 (end - 1 ms); tenzir needs 10
    assert emits(outputs(REFERENCE, "flink", [{"ts": 1}, {"watermark": 9}]))[0][3] == "close"
    assert emits(outputs(run_query, "tenzir", [{"ts": 1}, {"watermark": 9}]))[0][3] == "end_of_input"


@pytest.mark.parametrize("profile", ["tenzir", "flink", "timeplus"])
def test_tolerance_is_the_delay_between_clock_and_watermark(run_query: RunQuery, profile: str) -> None:
    # watermark 10 with tolerance 5: the clock is at 15, the window [0, 10) closes; [10, 20) not
    window = {"kind": "fixed", "size": 10, "tolerance": 5}
    result = outputs(run_query, profile, [{"ts": 1}, {"ts": 12}, {"watermark": 10}], window=window)
    assert closes(result) == [(0, 10, 1, "close", 1)]


@pytest.mark.parametrize("profile", ["tenzir", "flink", "timeplus"])
def test_a_watermark_behind_the_current_one_is_ignored(run_query: RunQuery, profile: str) -> None:
    items = [{"ts": 1}, {"watermark": 20}, {"watermark": 5}, {"ts": 12}, {"ts": 25}]
    result = outputs(run_query, profile, items)
    assert drops(result) == [(1, "late")]  # still late: the watermark did not go back to 5
    assert closes(result) == [(0, 10, 1, "close", 0)]


@pytest.mark.parametrize("profile", ["tenzir", "flink", "timeplus"])
def test_a_watermark_behind_the_event_times_changes_nothing(run_query: RunQuery, profile: str) -> None:
    items = [{"ts": 1}, {"ts": 14}, {"watermark": 3}, {"ts": 15}]
    assert outputs(run_query, profile, items) == outputs(run_query, profile, [i for i in items if "watermark" not in i])


def test_tenzir_moves_every_key_clock_and_new_keys_start_there(run_query: RunQuery) -> None:
    items = [{"ts": 1, "k": "a"}, {"ts": 2, "k": "b"}, {"watermark": 10}, {"ts": 5, "k": "c"}]
    result = outputs(run_query, "tenzir", items, group_by=["k"])
    assert [(o.group, o.reason) for o in result if isinstance(o, Emission)] == [
        ("a", "close"), ("b", "close")
    ]
    assert drops(result) == [(2, "late")]  # key c was first seen after the watermark


def test_sessions_take_a_watermark(run_query: RunQuery) -> None:
    window = {"kind": "session", "gap": 5}
    for profile, late in (("tenzir", True), ("flink", True)):
        result = outputs(run_query, profile, [{"ts": 1, "k": "a"}, {"watermark": 7}, {"ts": 2, "k": "a"}],
                         window=window, group_by=["k"])
        assert emits(result)[0][3] == "close"
        assert (drops(result) == [(1, "late")]) is late


# --- spark: the watermark of the next micro-batch -----------------------------------------


def test_spark_uses_the_injected_watermark_in_the_next_micro_batch() -> None:
    # wm_N comes from batches before N: the item sets the next micro-batch's watermark
    alone = outputs(REFERENCE, "spark", [{"ts": 1}, {"watermark": 10}, {"batch": [{"ts": 2}]}])
    assert emits(alone) == [(0, 10, 2, "close", 1)]  # [0, 10) emitted by that micro-batch
    assert drops(alone) == []  # its rows were tested against the previous watermark
    later = outputs(REFERENCE, "spark", [{"ts": 1}, {"watermark": 10}, {"batch": []}, {"batch": [{"ts": 2}]}])
    assert emits(later) == [(0, 10, 1, "close", 0)]
    assert drops(later) == [(1, "late")]  # late from the micro-batch after


def test_spark_end_of_input_runs_the_injected_watermark() -> None:
    # the final no-data micro-batch closes what the watermark reaches; the rest is discarded
    result = outputs(REFERENCE, "spark", [{"ts": 1}, {"ts": 15}, {"watermark": 12}])
    assert emits(result) == [(0, 10, 1, "close", 1)]


def test_spark_a_watermark_behind_the_data_is_ignored() -> None:
    items = [{"ts": 1}, {"ts": 25}, {"batch": []}, {"watermark": 5}, {"batch": [{"ts": 12}]}]
    assert drops(outputs(REFERENCE, "spark", items)) == [(2, "late")]  # wm stays 25, not 5


def test_spark_empty_batch_is_a_no_data_micro_batch() -> None:
    # batch 1 closes with wm_1 = 1 (nothing); the empty batch runs with wm_2 = 12
    result = outputs(REFERENCE, "spark", [{"batch": [{"ts": 1}]}, {"batch": [{"ts": 12}]}, {"batch": []},
                               {"batch": [{"ts": 30}]}])
    # [0, 10) by the empty batch (after seq 1); [10, 20) by the final no-data micro-batch
    assert emits(result) == [(0, 10, 1, "close", 1), (10, 20, 1, "close", 2)]


# --- rejections -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ({"profile": "kdb"}, "profile kdb cannot take an injected watermark"),
        ({"window": {"kind": "count", "count": 3}}, "profile tenzir cannot take"),
        ({"window": {"kind": "trailing", "size": 5}}, "profile tenzir cannot take"),
        ({"window": {"kind": "fixed", "size": 10, "on": "now()"}}, "windows on now()"),
        ({"window": {"kind": "session", "gap": 5, "on": "now()"}, "group_by": ["k"]},
         "windows on now()"),
        ({"profile": "timeplus", "window": {"kind": "fixed", "size": 10, "on": "now()"}},
         "processing-time windows"),
    ],
)
def test_profiles_and_kinds_without_a_watermark_reject_the_item(
    data: dict[str, Any], why: str
) -> None:
    with pytest.raises(InvalidStream) as caught:
        outputs(REFERENCE, data.pop("profile", "tenzir"), [{"ts": 1}, {"watermark": 10}], **data)
    assert str(caught.value).startswith("watermark_ms=10: ")
    assert why in str(caught.value) and "\n" not in str(caught.value)
