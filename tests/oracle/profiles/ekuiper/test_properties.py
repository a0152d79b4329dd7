"""Hypothesis properties of the ekuiper profile in event time (E10, E12 in docs/semantics.md):
every event is accounted for, no window is emitted before the watermark reaches its end, and
rows reach a window in timestamp order."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.oracle import Aggregation, Query, run
from windtunnel.oracle.model.conditions import parse_condition
from windtunnel.oracle.model.results import Result
from windtunnel.oracle.model.stream import Batch, Event, Item, events_of
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.profiles.ekuiper.spec import EkuiperWindows
from windtunnel.simulator.strategies import streams

EKUIPER = profile_named("ekuiper").rules
AGGREGATE = (Aggregation("ids", "collect", "id"), Aggregation("times", "collect", "ts"))
REASONS = {"late", "null_time", "filtered", "no_window", "end_of_input"}


@st.composite
def event_time_windows(draw: st.DrawFn) -> EkuiperWindows:
    """An event-time eKuiper window in ms: tumbling, hopping (gapped too), sliding (with or
    without a delay), or session; lateness 0-3 s; sometimes a FILTER."""
    kind = draw(st.sampled_from(("tumbling", "hopping", "sliding", "session")))
    size = draw(st.integers(1, 10)) * 500
    spec: dict[str, Any] = {"on": "ts", "unit": "ms",
                            "lateness_ms": draw(st.integers(0, 6)) * 500}
    if kind in ("tumbling", "hopping", "sliding"):
        spec["size_ms"] = size
    if kind == "hopping":
        spec["hop_ms"] = draw(st.integers(1, 12)) * 250
    if kind == "sliding":
        spec["delay_ms"] = draw(st.sampled_from((0, 0, 700)))
    if kind == "session":
        spec["timeout_ms"] = size
        spec["max_duration_ms"] = draw(st.integers(1, 6)) * 1000
    if draw(st.booleans()):
        spec["filter"] = parse_condition("value > 30", "filter")
    return EkuiperWindows(kind, **spec)


def with_ids(items: tuple[Item, ...]) -> list[Item]:
    """The stream with each event's seq in its payload as ``id``."""
    def tag(event: Event) -> Event:
        return replace(event, payload={**event.payload, "id": event.seq})
    return [Batch(tuple(tag(e) for e in item.events)) if isinstance(item, Batch)
            else tag(item) if isinstance(item, Event) else item for item in items]


STREAMS = streams(max_events=14, keys=2, max_step_ms=1500, max_disorder_ms=3000,
                  allow_null_times=True, with_batches=True, with_advances=True)


def ekuiper(window: EkuiperWindows, items: list[Item], rules: Any = EKUIPER) -> Result:
    return run(Query(window, group_by=("key",), aggregate=AGGREGATE), items, profile="ekuiper",
               rules=rules)


@settings(max_examples=150, deadline=None)
@given(window=event_time_windows(), items=STREAMS)
def test_every_event_is_delivered_dropped_with_a_reason_or_reported_lost(
        window: EkuiperWindows, items: tuple[Item, ...]) -> None:
    stream = with_ids(items)
    result = ekuiper(window, stream)
    delivered = {i for e in result.emissions for i in e.row["ids"]}
    dropped: dict[int, set[str]] = {}
    for drop in result.drops:
        dropped.setdefault(drop.seq, set()).add(drop.reason)
        assert drop.reason in REASONS
    for event in events_of(stream):
        assert event.seq in delivered or event.seq in dropped, event
        reasons = dropped.get(event.seq, set())
        assert not (event.seq in delivered and reasons & {"late", "null_time", "filtered",
                                                          "end_of_input"}), event


@settings(max_examples=150, deadline=None)
@given(window=event_time_windows(), items=STREAMS)
def test_no_window_is_emitted_before_the_watermark_reaches_it(
        window: EkuiperWindows, items: tuple[Item, ...]) -> None:
    stream = with_ids(items)
    result = ekuiper(window, stream)
    largest: dict[int, int] = {}  # seq -> largest event time up to it
    top: int | None = None
    for event in events_of(stream):
        t = event.payload["ts"]
        if t is not None:
            top = t if top is None else max(top, t)
        if top is not None:
            largest[event.seq] = top
    for emission in result.emissions:
        assert emission.after_seq is not None
        watermark = largest[emission.after_seq] - window.lateness_ms
        assert emission.window.end_ms is not None
        assert emission.window.end_ms <= watermark, (emission, watermark)
        assert emission.row["times"] == sorted(emission.row["times"])  # time order
