"""The oracle's emissions are tagged with the micro-batch during which they happened."""

from __future__ import annotations

from windtunnel.conformance.targets import (
    micro_batch_of_items,
    micro_batch_of_seq,
    oracle_micro_batches_of,
    oracle_outputs,
)
from windtunnel.oracle.model.results import Emission
from windtunnel.oracle.scenario import parse_scenario

SPEC = {
    "window": {"kind": "fixed", "size": "10s", "on": "ts", "idle_timeout": "5s"},
    "group_by": ["k"],
    "aggregate": {"n": "count()"},
}


def tags(inputs: list[object]) -> list[tuple[str, int | None]]:
    scenario = parse_scenario({**SPEC, "input": inputs})
    outputs = oracle_outputs(scenario)
    batches = oracle_micro_batches_of(scenario, outputs)
    return [(o.reason, b) for o, b in zip(outputs, batches, strict=True) if isinstance(o, Emission)]


def test_an_advance_closes_an_idle_window_in_the_next_micro_batch() -> None:
    # micro-batch 0: a@1s (wall 0)      micro-batch 1: the wall moves to 20s -> a's [0,10s)
    #                                   has been idle 5 s: emitted there, not in micro-batch 0
    assert tags([{"ts": 1000, "k": "a"}, {"advance": "20s"}]) == [("idle_timeout", 1)]


def test_a_later_arrival_closes_an_idle_window_in_its_own_micro_batch() -> None:
    # micro-batch 0: a@1s at wall 0; micro-batch 1: b@2s arrives at wall 20s, which first
    # fires a's idle timer (after_seq is still 0) -> the emission is micro-batch 1's
    got = tags([{"event": {"ts": 1000, "k": "a"}, "at": 0}, {"event": {"ts": 2000, "k": "b"}, "at": 20000}])
    assert ("idle_timeout", 1) in got
    assert ("end_of_input", 1) in got  # b's window flushed at the end rides in the last one


def test_item_numbering_agrees_with_the_event_numbering() -> None:
    scenario = parse_scenario({**SPEC, "input": [
        {"ts": 1, "k": "a"}, {"advance": "1s"}, {"batch": [{"ts": 2, "k": "a"}, {"ts": 3, "k": "b"}]},
        {"advance": "1s"}, {"ts": 4, "k": "a"},
    ]})
    items = list(scenario.items)
    by_item = micro_batch_of_items(items)
    by_seq = micro_batch_of_seq(items)
    assert by_seq == {0: 0, 1: 2, 2: 2, 3: 3}
    assert by_item[:5] == [0, 1, 2, 3, 3]
