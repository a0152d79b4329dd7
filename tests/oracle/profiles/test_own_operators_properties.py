"""Properties of the kdb, timeplus and ekuiper profiles (Hypothesis).

- nothing is lost silently: with ``end_of_input: flush``, every input event is in some emitted
  window (its ``id`` appears in an emission's collected ids) or reported as dropped, for every
  window kind and option of the three operators, over disordered, batched streams with idle
  periods and null times;
- batches matter only through the batch rule: kdb and timeplus under ``clock_moves: event``,
  and ekuiper always, give the same outputs with every batch split into lone events;
- timeplus: the last ``EMIT ON UPDATE`` rows of a window are its ``EMIT AFTER WINDOW CLOSE`` rows.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from windtunnel.oracle import Aggregation, Batch, Query, run
from windtunnel.oracle.model.conditions import parse_condition
from windtunnel.oracle.model.spec import NOW
from windtunnel.oracle.model.stream import Event, Item
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.profiles.ekuiper.spec import EkuiperWindows
from windtunnel.oracle.profiles.kdb.count_windows import high_water_mark, split_on_value
from windtunnel.oracle.profiles.kdb.spec import (
    KdbCountWindows,
    KdbGlobalWindows,
    KdbTimerWindows,
    KdbTimeWindows,
)
from windtunnel.oracle.profiles.timeplus.spec import EmitPolicy, TimeplusWindows
from windtunnel.simulator.strategies import streams

SETTINGS = settings(max_examples=60, deadline=None)
IDS = (Aggregation("ids", "collect", "id"),)

stream_items = streams(min_events=4, max_events=20, keys=2, max_step_ms=6, max_disorder_ms=15,
                       allow_null_times=True, with_batches=True, with_advances=True)

kdb_times = st.integers(1, 8).flatmap(lambda period: st.builds(
    KdbTimeWindows,
    period_ms=st.just(period),
    duration_ms=st.none() | st.integers(1, 3).map(lambda k: k * period + period // 2),
    on=st.just("ts"),
    lateness_ms=st.integers(0, 4),
    passthrough=st.booleans(),
    sort=st.booleans(),
    count_trigger=st.none() | st.integers(1, 5),
    skip_empty_windows=st.booleans(),
))
kdb_counts = st.builds(KdbCountWindows, size=st.integers(1, 4),
                       frequency=st.none() | st.integers(1, 6))
kdb_globals = st.sampled_from([
    KdbGlobalWindows(split_on_value("value", 3)),
    KdbGlobalWindows(high_water_mark("value"), state=0),
    KdbGlobalWindows(high_water_mark("value", "starts"), state=0),
])
kdb_timers = st.builds(KdbTimerWindows, period_ms=st.integers(1, 10),
                       count_trigger=st.none() | st.integers(1, 5),
                       skip_empty_windows=st.booleans())

emits = st.one_of(
    st.builds(EmitPolicy, mode=st.just("close"), delay_ms=st.integers(0, 4),
              timeout_ms=st.none() | st.integers(1, 8)),
    st.builds(EmitPolicy, mode=st.just("update"), delay_ms=st.integers(0, 4)),
    st.builds(EmitPolicy, mode=st.just("update"), batch_ms=st.integers(1, 6)),
)
timeplus_windows = st.one_of(
    st.builds(TimeplusWindows, window=st.just("tumble"), size_ms=st.integers(1, 10)),
    st.integers(1, 10).flatmap(lambda size: st.builds(
        TimeplusWindows, window=st.just("hop"), size_ms=st.just(size),
        hop_ms=st.integers(1, size))),
    st.builds(TimeplusWindows, window=st.just("session"), size_ms=st.integers(1, 8),
              max_size_ms=st.none() | st.integers(1, 15)),
).flatmap(lambda w: st.builds(
    TimeplusWindows, window=st.just(w.window), size_ms=st.just(w.size_ms), hop_ms=st.just(w.hop_ms),
    max_size_ms=st.just(w.max_size_ms), on=st.sampled_from(["ts", NOW]), emit=emits))

WHEN = parse_condition("value > 2", "when")
ekuiper_windows = st.tuples(st.one_of(
    st.builds(EkuiperWindows, window=st.just("tumbling"), size_ms=st.integers(1, 10)),
    st.builds(EkuiperWindows, window=st.just("hopping"), size_ms=st.integers(1, 10),
              hop_ms=st.integers(1, 12)),
    st.builds(EkuiperWindows, window=st.just("sliding"), size_ms=st.integers(1, 10),
              delay_ms=st.integers(0, 3), when=st.none() | st.just(WHEN)),
    st.builds(EkuiperWindows, window=st.just("session"), timeout_ms=st.integers(1, 6),
              max_duration_ms=st.integers(1, 20)),
    st.integers(1, 5).flatmap(lambda n: st.builds(
        EkuiperWindows, window=st.just("count"), count=st.just(n),
        interval=st.none() | st.integers(1, n))),
), st.sampled_from(["ts", NOW]), st.integers(0, 4))
"""(window, on, lateness): every eKuiper window kind in event or processing time."""


def with_ids(items: tuple[Item, ...]) -> tuple[Item, ...]:
    """The items with each event's seq copied into its payload as ``id``."""

    def tag(event: Event) -> Event:
        return Event(event.seq, {**event.payload, "id": event.seq}, event.at_ms)

    return tuple(
        tag(i) if isinstance(i, Event) else Batch(tuple(tag(e) for e in i.events))
        if isinstance(i, Batch) else i for i in items
    )


def _events(*ts: int) -> tuple[Item, ...]:
    """Lone events at times ``ts`` of key ``a`` (regression examples)."""
    return tuple(Event(i, {"ts": t, "key": "a", "value": t}) for i, t in enumerate(ts))


def assert_nothing_lost(profile: str, window: Any, items: tuple[Item, ...]) -> None:
    tagged = with_ids(items)
    rules = profile_named(profile).rules.with_overrides({"end_of_input": "flush"})
    result = run(Query(window, group_by=("key",), aggregate=IDS), tagged, profile=profile,
                 rules=rules)
    seen = {i for e in result.emissions for i in e.row["ids"]} | {d.seq for d in result.drops}
    seqs = {e.seq for i in tagged for e in (i.events if isinstance(i, Batch) else (i,))
            if isinstance(e, Event)}
    assert seqs <= seen, f"lost silently: {sorted(seqs - seen)}"


@SETTINGS
@given(window=st.one_of(kdb_times, kdb_counts, kdb_globals, kdb_timers), items=stream_items)
@example(window=KdbCountWindows(2, 3), items=_events(1, 2, 3, 4, 5))
def test_kdb_loses_nothing_silently(window: Any, items: tuple[Item, ...]) -> None:
    assert_nothing_lost("kdb", window, items)


@SETTINGS
@given(window=timeplus_windows, items=stream_items)
@example(window=TimeplusWindows("tumble", 1, on=NOW, emit=EmitPolicy("update")),
         items=(Batch(tuple(Event(i, {"key": "a"}, at_ms=i // 3) for i in range(4))),))
def test_timeplus_loses_nothing_silently(window: TimeplusWindows, items: tuple[Item, ...]) -> None:
    assert_nothing_lost("timeplus", window, items)


@SETTINGS
@given(spec=ekuiper_windows, items=stream_items)
@example(spec=(EkuiperWindows("count", count=5, interval=2), "ts", 0), items=_events(*range(7)))
@example(spec=(EkuiperWindows("hopping", size_ms=2, hop_ms=5), "ts", 0), items=_events(1, 3, 9))
@example(spec=(EkuiperWindows("sliding", size_ms=1, when=WHEN), "ts", 0), items=_events(0, 0))
@example(spec=(EkuiperWindows("tumbling", size_ms=1), "ts", 1), items=_events(0, 0, -1))
def test_ekuiper_loses_nothing_silently(spec: tuple[EkuiperWindows, str, int],
                                       items: tuple[Item, ...]) -> None:
    window, on, lateness = spec
    fields = {f: getattr(window, f) for f in ("window", "size_ms", "hop_ms", "delay_ms",
                                              "timeout_ms", "max_duration_ms", "count",
                                              "interval", "when")}
    assert_nothing_lost("ekuiper", EkuiperWindows(**fields, unit="ms", on=on,
                                                  lateness_ms=lateness if on != NOW else 0),
                        items)


def unbatched(items: tuple[Item, ...]) -> tuple[Item, ...]:
    """The same items with every batch split into lone events (each its own batch)."""
    return tuple(e for i in items for e in (i.events if isinstance(i, Batch) else (i,)))


def per_event_outputs(profile: str, window: Any, items: tuple[Item, ...]) -> Any:
    rules = profile_named(profile).rules.with_overrides({"clock_moves": "event"})
    return run(Query(window, group_by=("key",), aggregate=IDS), with_ids(items), profile=profile,
               rules=rules).outputs


@SETTINGS
@given(window=kdb_times, items=stream_items)
def test_kdb_per_record_evaluation_does_not_depend_on_batches(
    window: KdbTimeWindows, items: tuple[Item, ...]
) -> None:
    assert per_event_outputs("kdb", window, items) == per_event_outputs(
        "kdb", window, unbatched(items))


@SETTINGS
@given(window=timeplus_windows, items=stream_items)
def test_timeplus_per_record_inserts_do_not_depend_on_batches(
    window: TimeplusWindows, items: tuple[Item, ...]
) -> None:
    assert per_event_outputs("timeplus", window, items) == per_event_outputs(
        "timeplus", window, unbatched(items))


@SETTINGS
@given(spec=ekuiper_windows, items=stream_items)
def test_ekuiper_does_not_depend_on_batches(spec: tuple[EkuiperWindows, str, int],
                                            items: tuple[Item, ...]) -> None:
    window, on, lateness = spec
    fields = {f: getattr(window, f) for f in ("window", "size_ms", "hop_ms", "delay_ms",
                                              "timeout_ms", "max_duration_ms", "count",
                                              "interval", "when")}
    window = EkuiperWindows(**fields, unit="ms", on=on, lateness_ms=lateness if on != NOW else 0)
    query = Query(window, group_by=("key",), aggregate=IDS)
    rules = profile_named("ekuiper").rules
    assert run(query, with_ids(items), profile="ekuiper", rules=rules).outputs == run(
        query, with_ids(unbatched(items)), profile="ekuiper", rules=rules).outputs


@SETTINGS
@given(
    window=st.one_of(
        st.builds(TimeplusWindows, window=st.just("tumble"), size_ms=st.integers(1, 10),
                  on=st.just("ts")),
        st.integers(1, 10).flatmap(lambda size: st.builds(
            TimeplusWindows, window=st.just("hop"), size_ms=st.just(size),
            hop_ms=st.integers(1, size), on=st.just("ts"))),
    ),
    delay=st.integers(0, 4),
    items=stream_items,
)
def test_timeplus_last_update_of_a_closed_window_is_its_close_result(
    window: TimeplusWindows, delay: int, items: tuple[Item, ...]
) -> None:
    # EMIT ON UPDATE [WITH DELAY d] and EMIT AFTER WINDOW CLOSE [WITH DELAY d] see the same
    # watermark: every window the second emits was last updated to the same rows by the first
    def outputs(emit: EmitPolicy) -> Any:
        spec = TimeplusWindows(window.window, window.size_ms, on="ts", hop_ms=window.hop_ms,
                               emit=emit)
        return run(Query(spec, group_by=("key",), aggregate=IDS), with_ids(items),
                   profile="timeplus", rules=profile_named("timeplus").rules)

    closed = outputs(EmitPolicy("close", delay_ms=delay))
    updated = outputs(EmitPolicy("update", delay_ms=delay))
    last = {(e.window, e.group): e.row for e in updated.emissions}
    assert all(last[(e.window, e.group)] == e.row for e in closed.emissions)
    assert closed.drops == updated.drops
