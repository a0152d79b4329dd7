"""Spark's output modes under the ``spark`` profile: the rows stock Spark emits per
micro-batch in ``update`` and ``complete`` mode, as measured with PySpark 4.3.0 (stock
``withWatermark`` + ``window()``/``session_window()``, delay 0, ``foreachBatch``; the table
below is that run's output, docs/semantics.md "Output modes under spark").

Times in seconds; each inner list is one micro-batch; ``b3`` with three data batches is
Spark's last no-data micro-batch.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from windtunnel.oracle import Aggregation, FixedWindows, InvalidSpec, Query
from windtunnel.oracle.engine import operator_for, run
from windtunnel.oracle.model.results import Emission, Output
from windtunnel.oracle.model.spec import SessionWindows
from windtunnel.oracle.model.stream import Batch, End, Event
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.scenario import parse_scenario
from windtunnel.oracle.windows.driver import Driver

SPARK = profile_named("spark").rules
COUNT = (Aggregation("n", "count"),)
TUMBLE = FixedWindows(10_000)
HOP = FixedWindows(10_000, every_ms=5_000)
SESSION = SessionWindows(5_000)

Rows = dict[int, list[tuple[int, int, str, int]]]
"""micro-batch -> (start s, end s, key, n) rows it emitted"""

MEASURED: list[tuple[str, Any, list[list[Any]], str, Rows]] = [
    # U1: a window updated twice, then a new one; the no-data micro-batch (b3) emits nothing
    ("U1", TUMBLE, [[5], [7], [25]], "update",
     {0: [(0, 10, "a", 1)], 1: [(0, 10, "a", 2)], 2: [(20, 30, "a", 1)]}),
    # U2: 7 arrives when the watermark (25) already passed [0,10) but the late test still
    # uses the previous micro-batch's (5): the window takes it, emits it, then is evicted
    ("U2", TUMBLE, [[5], [25], [7]], "update",
     {0: [(0, 10, "a", 1)], 1: [(20, 30, "a", 1)], 2: [(0, 10, "a", 2)]}),
    # U3: 7 is late in b3 (previous watermark 25 >= 10): nothing is emitted for it
    ("U3", TUMBLE, [[5], [25], [30], [7]], "update",
     {0: [(0, 10, "a", 1)], 1: [(20, 30, "a", 1)], 2: [(30, 40, "a", 1)]}),
    ("U4", TUMBLE, [[5], [25], [7, 26]], "update",
     {0: [(0, 10, "a", 1)], 1: [(20, 30, "a", 1)], 2: [(0, 10, "a", 2), (20, 30, "a", 2)]}),
    # U5: hopping: 8 is late for [0,10) (end 10 <= 12) and delivered to [5,15)
    ("U5", HOP, [[12], [30], [8]], "update",
     {0: [(5, 15, "a", 1), (10, 20, "a", 1)], 1: [(25, 35, "a", 1), (30, 40, "a", 1)],
      2: [(5, 15, "a", 2)]}),
    # U9: only the key that changed is emitted
    ("U9", TUMBLE, [[5], [7], [(5, "b")], []], "update",
     {0: [(0, 10, "a", 1)], 1: [(0, 10, "a", 2)], 2: [(0, 10, "b", 1)]}),
    # U10: empty micro-batches emit nothing; 7 is late in b4
    ("U10", TUMBLE, [[5], [], [25], [], [7]], "update",
     {0: [(0, 10, "a", 1)], 2: [(20, 30, "a", 1)]}),
    # complete: the whole table after every micro-batch, nothing late, no no-data micro-batch
    ("U1", TUMBLE, [[5], [7], [25]], "complete",
     {0: [(0, 10, "a", 1)], 1: [(0, 10, "a", 2)], 2: [(0, 10, "a", 2), (20, 30, "a", 1)]}),
    ("U3", TUMBLE, [[5], [25], [30], [7]], "complete",
     {0: [(0, 10, "a", 1)], 1: [(0, 10, "a", 1), (20, 30, "a", 1)],
      2: [(0, 10, "a", 1), (20, 30, "a", 1), (30, 40, "a", 1)],
      3: [(0, 10, "a", 2), (20, 30, "a", 1), (30, 40, "a", 1)]}),
    ("U5", HOP, [[12], [30], [8]], "complete",
     {0: [(5, 15, "a", 1), (10, 20, "a", 1)],
      1: [(5, 15, "a", 1), (10, 20, "a", 1), (25, 35, "a", 1), (30, 40, "a", 1)],
      2: [(0, 10, "a", 1), (5, 15, "a", 2), (10, 20, "a", 1), (25, 35, "a", 1),
          (30, 40, "a", 1)]}),
    ("U10", TUMBLE, [[5], [], [25], [], [7]], "complete",
     {0: [(0, 10, "a", 1)], 1: [(0, 10, "a", 1)], 2: [(0, 10, "a", 1), (20, 30, "a", 1)],
      3: [(0, 10, "a", 1), (20, 30, "a", 1)], 4: [(0, 10, "a", 2), (20, 30, "a", 1)]}),
    # sessions merge and never close: 10 bridges [5,10) and [15,20); 3 extends [5,10)
    ("U7", SESSION, [[5], [15], [10], [40]], "complete",
     {0: [(5, 10, "a", 1)], 1: [(5, 10, "a", 1), (15, 20, "a", 1)], 2: [(5, 20, "a", 3)],
      3: [(5, 20, "a", 3), (40, 45, "a", 1)]}),
    ("U8", SESSION, [[5], [30], [3]], "complete",
     {0: [(5, 10, "a", 1)], 1: [(5, 10, "a", 1), (30, 35, "a", 1)],
      2: [(3, 10, "a", 2), (30, 35, "a", 1)]}),
]


def stream(groups: list[list[Any]]) -> tuple[Batch, ...]:
    """Micro-batches; an int is an event of key ``a`` at that second, a tuple ``(s, key)``."""
    out, seq = [], 0
    for group in groups:
        events = []
        for item in group:
            t, key = item if isinstance(item, tuple) else (item, "a")
            events.append(Event(seq, {"ts": t * 1000, "k": key}))
            seq += 1
        out.append(Batch(tuple(events)))
    return tuple(out)


def per_micro_batch(query: Query, groups: list[list[Any]]) -> Rows:
    """The oracle's emissions by the micro-batch (item) that produced them; End is the
    micro-batch after the last."""
    driver = Driver(query, lambda q, c: operator_for(q, c, "spark"), SPARK, profile="spark")
    found: Rows = {}
    for index, item in enumerate((*stream(groups), End())):
        out: list[Output] = []
        driver.feed(item, out)
        for e in out:
            if not isinstance(e, Emission):
                continue  # late drops: test_update_mode_drops_late_rows_as_append_does
            assert e.window.start_ms is not None and e.window.end_ms is not None
            found.setdefault(index, []).append(
                (e.window.start_ms // 1000, e.window.end_ms // 1000, e.group, e.row["n"]))
    return found


@pytest.mark.parametrize(("name", "window", "groups", "mode", "rows"), MEASURED,
                         ids=[f"{m[0]}-{m[3]}" for m in MEASURED])
def test_the_profile_emits_what_spark_emitted(
    name: str, window: Any, groups: list[list[Any]], mode: str, rows: Rows
) -> None:
    query = Query(window, group_by=("k",), aggregate=COUNT, output_mode=mode)
    assert per_micro_batch(query, groups) == rows


def test_update_rows_carry_reason_update_and_complete_rows_reason_complete() -> None:
    for mode in ("update", "complete"):
        query = Query(TUMBLE, group_by=("k",), aggregate=COUNT, output_mode=mode)
        result = run(query, stream([[5], [7]]), rules=SPARK, profile="spark")
        assert {(e.reason, e.partial) for e in result.emissions} == {(mode, True)}


def test_update_emits_only_the_aggregate_by_values_a_micro_batch_changed() -> None:
    # one window, two severities; micro-batch 1 touches "low" only: Spark groups by
    # (window, key, severity), so only that row is updated
    query = Query(TUMBLE, aggregate=COUNT, aggregate_by=("sev",), output_mode="update")
    items = (Batch((Event(0, {"ts": 1000, "sev": "low"}), Event(1, {"ts": 2000, "sev": "high"}))),
             Batch((Event(2, {"ts": 3000, "sev": "low"}),)))
    result = run(query, items, rules=SPARK, profile="spark")
    assert [(e.after_seq, e.row) for e in result.emissions] == [
        (1, {"sev": "low", "n": 1}), (1, {"sev": "high", "n": 1}), (2, {"sev": "low", "n": 2}),
    ]


def test_update_mode_drops_late_rows_as_append_does() -> None:
    append = Query(TUMBLE, group_by=("k",), aggregate=COUNT)
    update = dataclasses.replace(append, output_mode="update")
    groups = [[5], [25], [30], [7]]
    drops = [run(q, stream(groups), rules=SPARK, profile="spark").drops
             for q in (append, update)]
    assert drops[0] == drops[1] and [d.seq for d in drops[0]] == [3]


def test_complete_mode_drops_nothing_late() -> None:
    query = Query(TUMBLE, group_by=("k",), aggregate=COUNT, output_mode="complete")
    assert run(query, stream([[5], [25], [30], [7]]), rules=SPARK, profile="spark").drops == []


@pytest.mark.parametrize(
    ("yaml_mode", "profile", "window", "message"),
    [
        ("update", "tenzir", "{kind: fixed, size: 10s}", "not modelled for profile tenzir"),
        ("update", "spark", "{kind: session, gap: 5s}", "not supported for session window"),
        ("sometimes", "spark", "{kind: fixed, size: 10s}", "unknown output mode"),
    ],
)
def test_output_modes_spark_cannot_run_are_input_errors(
    yaml_mode: str, profile: str, window: str, message: str
) -> None:
    import yaml

    data = yaml.safe_load(f"profile: {profile}\noutput_mode: {yaml_mode}\nwindow: {window}\n"
                          "group_by: k\naggregate: {n: count()}\ninput: []\n")
    with pytest.raises(InvalidSpec, match=message) as error:
        parse_scenario(data)
    assert error.value.field == "output_mode"


def test_an_update_scenario_file_reads_the_mode() -> None:
    data = {"profile": "spark", "output_mode": "update", "window": {"kind": "fixed", "size": "10s"},
            "group_by": "k", "aggregate": {"n": "count()"}, "input": [{"ts": 1}]}
    assert parse_scenario(data).query.output_mode == "update"
