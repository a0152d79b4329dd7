"""kdb API options (docs/semantics.md, kdb windows and K12): timeAssigner, mixedSchemas and
acceptDictionaries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from windtunnel.oracle import Advance, Aggregation, Batch, InvalidSpec, parse_scenario
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.stream import numbered
from windtunnel.oracle.profiles.kdb.spec import (
    KdbCountWindows,
    KdbGlobalWindows,
    KdbTimerWindows,
    KdbTimeWindows,
)

from .kdb_helpers import batches, kdb_run, scenario

# --- timeAssigner, mixedSchemas, acceptDictionaries -------------------------------------------


def stamped(*pairs: tuple[int, Any]) -> list[Batch]:
    """One batch of events ``{"id": i, "at": value}`` (no ``t`` field: only an assigner times it)."""
    return [Batch(numbered({"id": i, "at": value} for i, value in pairs))]


def test_time_assigner_gives_the_times_and_the_time_column_is_not_read() -> None:
    # the assigner reads "at" (seconds): 1 s, 4 s, 12 s, 25 s; tumbling 10 s
    #  0         10        20        30
    #  |1  4     |12       |    25^  |   25 triggers [0,10) and [10,20)
    def seconds(payload: Any) -> Any:
        return payload["at"] * 1000

    result = kdb_run(KdbTimeWindows(10_000, time_assigner=seconds),
                     stamped((1, 1), (2, 4), (3, 12), (4, 25)),
                     aggregate=(Aggregation("ids", "collect", "id"),))
    assert [(e.window.start_ms, e.row["ids"], e.reason) for e in result.emissions] == [
        (0, [1, 2], "close"), (10_000, [3], "close"), (20_000, [4], "end_of_input")]
    assert not result.drops


@pytest.mark.parametrize(
    ("value", "reason"),
    [(None, "null_time"), ("soon", "not_a_time"), (True, "not_a_time"), ([5], "not_a_time")],
)
def test_time_assigner_results_that_are_no_time_are_dropped_with_a_reason(
    value: Any, reason: str
) -> None:
    # ids 1 and 3 are timed 5 ms and 7 ms by ISO text and a number; id 2 (seq 1) gets ``value``
    def assign(payload: Any) -> Any:
        return payload["at"]

    items = stamped((1, "1970-01-01T00:00:00.005Z"), (2, value), (3, 7))
    result = kdb_run(KdbTimeWindows(10, time_assigner=assign), items,
                     aggregate=(Aggregation("ids", "collect", "id"),))
    assert [(d.seq, d.reason) for d in result.drops] == [(1, reason)]
    assert result.drops[0].message.startswith("time_assigner")
    assert [e.row["ids"] for e in result.emissions] == [[1, 3]]


def test_time_assigner_must_be_callable_and_excludes_now() -> None:
    with pytest.raises(InvalidSpec, match=r"window\.time_assigner"):
        KdbTimeWindows(10, time_assigner="at")  # type: ignore[arg-type]
    with pytest.raises(InvalidSpec, match=r"window\.on.*time_assigner"):
        KdbTimeWindows(10, on="now()", time_assigner=lambda p: p["at"])


@pytest.mark.parametrize(
    "text",
    [
        ".qsp.window.tumbling[00:00:10; `time; .qsp.use ``timeAssigner!(::;{x`t})]",
        ".qsp.window.sliding[00:00:05; 00:00:10; `; .qsp.use enlist[`timeAssigner]!enlist {x`t}]",
    ],
)
def test_time_assigner_in_q_text_is_an_api_only_input_error(text: str) -> None:
    from windtunnel.oracle.clauses.kdb_q import parse_kdb_q

    with pytest.raises(InvalidSpec, match=r"API-only.*time_assigner.*'`timeAssigner' at offset"):
        parse_kdb_q(text)


def test_time_assigner_in_a_scenario_file_is_an_api_only_input_error() -> None:
    window = {"kind": "kdb_tumbling", "period": "10s", "time_assigner": "at"}
    with pytest.raises(InvalidInput, match="API-only") as info:
        parse_scenario(scenario(window))
    assert info.value.field == "window.time_assigner"


@pytest.mark.parametrize(
    ("mixed", "views"),
    [
        (False, [(1, 2, 3), (1, 2, 3, 4, 5), (5, 6)]),
        (True, [((1, 2, 3),), ((1, 2, 3), (4, 5)), ((5,), (6,))]),
    ],
)
def test_mixed_schemas_passes_batches_and_indices_still_count_records(
    mixed: bool, views: list[tuple[Any, ...]]
) -> None:
    # batches [1 2 3] [4 5] [6]; the trigger splits at record index 4 once 5 records are buffered:
    #   buffer 1 2 3 4 | 5   ->  window [1 2 3 4]; 5 stays (the rest of batch [4 5])
    seen: list[tuple[Any, ...]] = []

    def split_at_four(buffer: Sequence[Any], offset: int, data: Sequence[Any],
                      state: Any) -> tuple[list[int], Any]:
        seen.append(tuple(tuple(r["t"] for r in b) if mixed else b["t"] for b in buffer))
        records = sum(len(b) for b in buffer) if mixed else len(buffer)
        assert offset == records - len(data)  # offset counts records either way
        return ([4] if records >= 5 else []), state

    result = kdb_run(KdbGlobalWindows(split_at_four, mixed_schemas=mixed),
                     batches([1, 2, 3], [4, 5], [6]))
    assert seen == views
    assert [(e.window.start_offset, e.window.end_offset, e.row["vals"], e.reason)
            for e in result.emissions] == [
        (0, 4, [1, 2, 3, 4], "trigger"), (4, 6, [5, 6], "end_of_input")]


@pytest.mark.parametrize(("mixed_offset", "offsets"), [("records", [0, 3, 1]), ("batches", [0, 1, 1])])
def test_mixed_offset_chooses_what_offset_counts_and_windows_stay_the_same(
    mixed_offset: str, offsets: list[int]
) -> None:
    # batches [1 2 3] [4 5] [6]; split at record 4 once 5 records are buffered (as above):
    #   call 1: buffer ([1 2 3])          offset 0 either way
    #   call 2: buffer ([1 2 3], [4 5])   records: 3 (where [4 5] starts); batches: 1
    #   call 3: buffer ([5], [6])         records: 1; batches: 1
    seen: list[int] = []

    def split_at_four(buffer: Sequence[Any], offset: int, data: Sequence[Any],
                      state: Any) -> tuple[list[int], Any]:
        seen.append(offset)
        if mixed_offset == "batches":
            assert buffer[offset] == tuple(data)
        records = sum(len(b) for b in buffer)
        return ([4] if records >= 5 else []), state

    window = KdbGlobalWindows(split_at_four, mixed_schemas=True, mixed_offset=mixed_offset)
    result = kdb_run(window, batches([1, 2, 3], [4, 5], [6]))
    assert seen == offsets
    assert [e.row["vals"] for e in result.emissions] == [[1, 2, 3, 4], [5, 6]]


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"mixed_schemas": True, "mixed_offset": "rows"}, "mixed_offset.*'rows'.*records or batches"),
        ({"mixed_offset": "batches"}, "mixed_offset.*'batches'.*mixed_schemas=True"),
    ],
)
def test_bad_mixed_offsets_name_the_field(options: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidSpec, match=match):
        KdbGlobalWindows(lambda b, o, d, s: ([], s), **options)


@pytest.mark.parametrize(
    "make",
    [
        lambda accept: KdbTimeWindows(5, 10, on="t", accept_dictionaries=accept),
        lambda accept: KdbCountWindows(2, accept_dictionaries=accept),
        lambda accept: KdbGlobalWindows(lambda b, o, d, s: ([len(b) - 1], s),
                                        accept_dictionaries=accept),
        lambda accept: KdbTimerWindows(5, accept_dictionaries=accept),
    ],
    ids=["sliding", "count", "global", "timer"],
)
def test_accept_dictionaries_changes_no_result(make: Any) -> None:
    first, second, third = batches([1, 7], [3, 12], [30])
    items = [first, second, Advance(6), third, Advance(12)]
    accepting, refusing = kdb_run(make(True), items), kdb_run(make(False), items)
    assert accepting.emissions and accepting == refusing


def test_accept_dictionaries_must_be_boolean_in_q_and_is_read() -> None:
    from windtunnel.oracle.clauses.kdb_q import parse_kdb_q

    spec = parse_kdb_q(".qsp.window.count[10; .qsp.use ``acceptDictionaries!(::;0b)]")
    assert spec == KdbCountWindows(10, accept_dictionaries=False)
    window = {"kind": "kdb_timer", "period": "5s", "accept_dictionaries": False}
    assert parse_scenario(scenario(window)).query.window == KdbTimerWindows(
        5_000, accept_dictionaries=False)
    with pytest.raises(InvalidSpec, match=r"window\.accept_dictionaries"):
        KdbTimeWindows(10, accept_dictionaries="no")  # type: ignore[arg-type]
