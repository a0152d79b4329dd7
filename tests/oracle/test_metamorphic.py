"""Properties that need no expected output: one run against another.

Each property replays a generated scenario file (``simulator.strategies.scenario_dicts``:
every window kind, keys, disorder, null times, batches, idle periods, idle timeouts) and
a transformed copy of it, and states how the two results relate:

- batch-split invariance: under the per-event profiles (tenzir, flink) the same events, regrouped into
  other batches (or one per batch), give the very same outputs, ``after_seq`` and
  ``wall_ms`` included (clocks move per event, the wall clock per arrival);
- relabelling keys: a bijection on the ``group_by`` values maps the outputs' groups (and
  pass-through rows) and changes nothing else;
- shifting every event time by a multiple of the hop (fixed windows), or by any amount
  (sessions, trailing and count windows) shifts every window by the same amount and
  leaves everything else equal;
- tumbling equals hopping with ``every = size`` (fixed and count windows);
- accounting, for every built-in profile: each event is delivered to a window or dropped
  with a reason, under the default profile never both, and a fixed window only ever
  holds events whose time it contains.

Drop messages are prose naming times, so the shift property compares them only by
reason, seq and windows.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.oracle.engine import replay, run
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef
from windtunnel.oracle.model.spec import CountWindows, FixedWindows, SessionWindows, TrailingWindows
from windtunnel.oracle.model.stream import events_of
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.scenario import parse_scenario
from windtunnel.simulator.strategies import scenario_dicts

SETTINGS = settings(max_examples=60, deadline=None)
KINDS = ("fixed", "session", "count", "trailing")


def rich(**options: Any) -> st.SearchStrategy[dict[str, Any]]:
    """Scenario files of every kind with small times, so windows, gaps and late events meet."""
    chosen: dict[str, Any] = {
        "kinds": KINDS,
        "max_size_ms": 40,
        "max_tolerance_ms": 10,
        "idle_timeouts": True,
        "max_events": 18,
        "keys": 3,
        "max_step_ms": 12,
        "max_disorder_ms": 30,
        "allow_null_times": True,
        "with_batches": True,
        "with_advances": True,
    }
    chosen.update(options)
    return scenario_dicts(**chosen)


PER_EVENT = st.one_of(
    rich(), rich(profiles=("flink",), kinds=("fixed", "session"), idle_timeouts=False)
)
"""Scenarios of the per-event profiles: tenzir (every kind) and flink (fixed, merging sessions)."""


def outputs(data: dict[str, Any]) -> tuple[Output, ...]:
    return replay(parse_scenario(data)).outputs


def map_items(data: dict[str, Any], change: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """A copy of the scenario with ``change`` applied to every event payload."""
    out = copy.deepcopy(data)
    for item in out["input"]:
        for event in item.get("batch", [item] if "event" in item else []):
            event["event"] = change(event["event"])
    return out


def lone_events(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The scenario's items with every batch taken apart: lone events and advances."""
    flat: list[dict[str, Any]] = []
    for item in data["input"]:
        flat += item.get("batch", [item])
    return flat


def regrouped(data: dict[str, Any], cuts: list[int]) -> dict[str, Any]:
    """The same events and advances, cut into batches at ``cuts`` (a batch never spans an
    advance): lone events when ``cuts`` is empty."""
    out = copy.deepcopy(data)
    items: list[dict[str, Any]] = []
    run_: list[dict[str, Any]] = []
    positions = set(cuts)

    def close() -> None:
        if run_:
            items.append({"batch": list(run_)})
            run_.clear()

    for index, item in enumerate(lone_events(out)):
        if "event" not in item:
            close()
            items.append(item)
            continue
        if not cuts:
            items.append(item)
            continue
        if index in positions:
            close()
        run_.append(item)
    close()
    out["input"] = items
    return out


# --- batch-split invariance -------------------------------------------------------------------


@SETTINGS
@given(data=PER_EVENT, cuts=st.lists(st.integers(0, 40), max_size=8))
def test_per_event_profiles_do_not_depend_on_batching(data: dict[str, Any], cuts: list[int]) -> None:
    want = outputs(regrouped(data, []))  # one event per batch
    assert outputs(data) == want
    assert outputs(regrouped(data, cuts)) == want


# --- relabelling keys ---------------------------------------------------------------------------


@SETTINGS
@given(data=PER_EVENT.filter(lambda d: "group_by" in d), salt=st.sampled_from(["x", "key-", "Ω"]))
def test_relabelling_keys_relabels_the_outputs_and_nothing_else(data: dict[str, Any], salt: str) -> None:
    def label(value: Any) -> Any:
        return None if value is None else f"{salt}{value}"[::-1]  # injective on strings

    def relabel(payload: dict[str, Any]) -> dict[str, Any]:
        return {**payload, "key": label(payload.get("key"))}

    def expected(output: Output) -> Output:
        if isinstance(output, Drop):
            return Drop(output.seq, output.reason, output.windows, output.message, label(output.group))
        row = relabel(dict(output.row)) if "key" in output.row else output.row
        return Emission(output.window, label(output.group), row, output.reason,
                        output.after_seq, output.wall_ms, output.partial)

    assert outputs(map_items(data, relabel)) == tuple(expected(o) for o in outputs(data))


# --- shifting time --------------------------------------------------------------------------------


def shifted_ref(ref: WindowRef, by_ms: int) -> WindowRef:
    if ref.start_ms is None or ref.end_ms is None:
        return ref
    return WindowRef(ref.start_ms + by_ms, ref.end_ms + by_ms, ref.start_offset, ref.end_offset)


def comparable(output: Output, by_ms: int) -> Any:
    """An output with its windows (and pass-through ``ts``) shifted back by ``by_ms``;
    a drop's prose message left out."""
    if isinstance(output, Drop):
        return ("drop", output.seq, output.reason, tuple(shifted_ref(w, -by_ms) for w in output.windows),
                output.group)
    row = dict(output.row)
    if isinstance(row.get("ts"), int):
        row["ts"] -= by_ms
    return ("emit", shifted_ref(output.window, -by_ms), output.group, row, output.reason,
            output.after_seq, output.wall_ms, output.partial)


@SETTINGS
@given(data=PER_EVENT, multiple=st.integers(-3, 3).filter(bool), odd=st.integers(1, 1000))
def test_shifting_event_times_shifts_the_windows_only(data: dict[str, Any], multiple: int, odd: int) -> None:
    spec = parse_scenario(data).query.window
    if isinstance(spec, FixedWindows):
        by_ms = multiple * spec.hop_ms  # windows are aligned to multiples of the hop
    else:
        assert isinstance(spec, SessionWindows | TrailingWindows | CountWindows)
        by_ms = multiple * odd  # nothing is aligned: any shift

    def shift(payload: dict[str, Any]) -> dict[str, Any]:
        ts = payload.get("ts")
        return payload if ts is None else {**payload, "ts": ts + by_ms}

    moved = outputs(map_items(data, shift))
    assert [comparable(o, by_ms) for o in moved] == [comparable(o, 0) for o in outputs(data)]


# --- tumbling is hopping with every = size ------------------------------------------------------


@SETTINGS
@given(data=rich(kinds=("fixed", "count")))
def test_tumbling_equals_hopping_with_every_equal_to_size(data: dict[str, Any]) -> None:
    block = data["window"]
    if "every" in block:  # a hopping draw: make it tumbling first
        del block["every"]
    hopping = copy.deepcopy(data)
    hopping["window"]["every"] = block["size"] if block["kind"] == "fixed" else block["count"]
    assert parse_scenario(hopping).query.window != parse_scenario(data).query.window
    assert outputs(hopping) == outputs(data)


# --- accounting -----------------------------------------------------------------------------------


def with_ids(data: dict[str, Any], aggregate: bool) -> dict[str, Any]:
    """The scenario with each event's seq in its payload as ``id``, collected per window
    (``aggregate``) or passed through."""
    seqs = iter(range(10**6))
    out = map_items(data, lambda payload: {**payload, "id": next(seqs)})
    out.pop("aggregate", None)
    if aggregate:
        out["aggregate"] = {"ids": "collect(id)"}
    return out


def delivered_ids(emission: Emission) -> list[int]:
    return list(emission.row["ids"]) if "ids" in emission.row else [emission.row["id"]]


PROFILE_SCENARIOS = {
    "tenzir": rich(),
    "flink": rich(kinds=("fixed", "session"), idle_timeouts=False),
    "spark": rich(kinds=("fixed", "session"), idle_timeouts=False, grouped=True, aggregates=True),
}


@SETTINGS
@given(
    pair=st.sampled_from(sorted(PROFILE_SCENARIOS)).flatmap(
        lambda name: st.tuples(st.just(name), PROFILE_SCENARIOS[name])
    ),
    aggregate=st.booleans(),
)
def test_every_event_is_delivered_or_dropped_with_a_reason(pair: tuple[str, dict[str, Any]], aggregate: bool) -> None:
    profile, data = pair
    data = with_ids(data, aggregate or profile == "spark")
    scenario = parse_scenario({**data, "profile": profile})
    # a profile that discards open windows at end of input (spark) loses them by design
    # (docs/semantics.md); with a flush every event must still show up
    rules = profile_named(profile).rules.with_overrides({"end_of_input": "flush"})
    result = run(scenario.query, scenario.items, rules=rules, profile=profile)
    delivered: dict[int, list[Emission]] = {}
    for emission in result.emissions:
        for seq in delivered_ids(emission):
            delivered.setdefault(seq, []).append(emission)
    dropped = {d.seq: d for d in result.drops}
    assert len(dropped) == len(result.drops), "an event dropped twice"
    times = {e.seq: e.payload.get("ts") for e in events_of(scenario.items)}
    for seq, t_ms in times.items():
        assert seq in delivered or seq in dropped, f"event {seq} lost silently"
        if seq in dropped:
            assert dropped[seq].reason, dropped[seq]
            if t_ms is None:
                assert dropped[seq].reason == "null_time"
        if profile == "tenzir":
            assert not (seq in delivered and seq in dropped), f"event {seq} delivered and dropped"
    window = scenario.query.window
    if profile == "tenzir" and isinstance(window, FixedWindows):
        for seq, emissions in delivered.items():
            t_ms = times[seq]
            starts = [e.window.start_ms for e in emissions]
            assert len(starts) == len(set(starts)), f"event {seq} delivered twice to a window"
            assert set(starts) <= set(window.starts_containing(t_ms)), (seq, t_ms, starts)
        for seq, drop in dropped.items():
            if drop.reason == "late":
                wanted = [WindowRef(s, s + window.size_ms) for s in window.starts_containing(times[seq])]
                assert list(drop.windows) == wanted, drop


def test_regrouping_keeps_every_item_in_order() -> None:
    data = {"input": [{"event": {"ts": 1}, "at": 0}, {"batch": [{"event": {"ts": 2}, "at": 0},
            {"event": {"ts": 3}, "at": 1}]}, {"at": 5}, {"event": {"ts": 4}, "at": 6}]}
    assert regrouped(data, [])["input"] == [
        {"event": {"ts": 1}, "at": 0}, {"event": {"ts": 2}, "at": 0}, {"event": {"ts": 3}, "at": 1},
        {"at": 5}, {"event": {"ts": 4}, "at": 6},
    ]
    assert [len(i.get("batch", [i])) for i in regrouped(data, [2])["input"]] == [2, 1, 1, 1]


# --- two implementations of one semantics -------------------------------------------------------


@SETTINGS
@given(data=rich(kinds=("fixed",), idle_timeouts=False))
def test_pass_through_delivers_what_the_aggregate_collects(data: dict[str, Any]) -> None:
    """Pass-through fixed windows (the reference operator) emit, per window and group, exactly
    the events an aggregated run (the fast path) collects there; drops are the same."""
    streamed = run_profile(with_ids(data, aggregate=False))
    collected = run_profile(with_ids(data, aggregate=True))
    per_window: dict[Any, list[int]] = {}
    for emission in streamed.emissions:
        per_window.setdefault((emission.window, str(emission.group)), []).append(emission.row["id"])
    assert per_window == {(e.window, str(e.group)): list(e.row["ids"]) for e in collected.emissions}
    assert [(d.seq, d.reason, d.windows) for d in streamed.drops] == [
        (d.seq, d.reason, d.windows) for d in collected.drops
    ]


def run_profile(data: dict[str, Any]) -> Any:
    return replay(parse_scenario(data))
