"""Scenarios as Flink DataStream window jobs, and Flink's firings as the contract's outputs.

Each scenario becomes one branch of the harness job (``WindowHarness.java``): its events in
stream order (batches and advances do not matter to Flink's event time), keyed by the
index of their ``group_by`` value, through a punctuated bounded-out-of-orderness watermark
(``tolerance`` is the bound) or scripted ``{watermark: T}`` items, into
``TumblingEventTimeWindows``, ``SlidingEventTimeWindows`` or ``EventTimeSessionWindows`` with
the spec's ``allowed_lateness`` and a late side output. Cumulating windows (``kind:
cumulate``) have no DataStream assigner: their branch runs Flink SQL's ``CUMULATE`` window
aggregation over the same events and watermarks, collecting each window's seqs.

Back from the engine: every firing's window, key, watermark and contents (event seqs). Its
rows are the spec's aggregate over those events' payloads in the order Flink's window state
holds them. Its reason: ``end_of_input`` (partial) when it fired on the final watermark,
``close`` when the watermark passed the window's max timestamp (``end - 1``: the trigger's
timer), ``late_firing`` when an element fired it, the watermark being past that already
(an element within allowed lateness; the cause comes from Flink's own trigger). A
late side-output element is a ``late`` drop; an element no window took and not late is a
``no_window`` drop; events without a usable time are not fed (a timestamp assigner needs a
long) and are reported as the oracle reports them. Flink SQL drops late rows without a side
output: an event of a cumulating scenario in no fired window is a ``late`` drop (every
event that is not dropped is in some window fired by the end of input at the latest).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.fields import getter, hashable
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef
from windtunnel.oracle.model.spec import NOW, CumulateWindows, FixedWindows, Query, SessionWindows
from windtunnel.oracle.model.stream import Batch, End, Event, Watermark, checked
from windtunnel.oracle.model.timeparse import NotATime, timestamp_ms
from windtunnel.oracle.scenario import Scenario
from windtunnel.oracle.windows.driver import group_value, unusable_time_drop

MAX_WATERMARK = 2**63 - 1
"""Flink's ``Long.MAX_VALUE`` watermark: a bounded source's end of input."""


@dataclass(slots=True)
class Prepared:
    """One scenario as harness input: its lines, its groups by key index, the payload and
    time of every fed event, and the drops of events without a usable time."""

    sid: int
    lines: list[str] = field(default_factory=list)
    groups: list[Any] = field(default_factory=list)
    payloads: dict[int, Mapping[str, Any]] = field(default_factory=dict)
    times: dict[int, int] = field(default_factory=dict)
    keys: dict[int, int] = field(default_factory=dict)
    unusable: list[Drop] = field(default_factory=list)


def check_query(query: Query, what: str = "the flink target") -> None:
    """Raise InvalidSpec when ``query`` is not a Flink DataStream window job."""
    window = query.window
    if not isinstance(window, FixedWindows | SessionWindows | CumulateWindows):
        raise InvalidSpec(
            "window.kind", getattr(window, "kind", "?"), f"not supported by {what}",
            "use kind: fixed, session or cumulate",
        )
    if window.on == NOW:
        raise InvalidSpec(
            "window.on", NOW, f"{what} runs event-time windows", "window on an event-time field"
        )
    if query.aggregate is None:
        raise InvalidSpec(
            "aggregate", None, f"{what} compares window results (Flink has no pass-through "
            "window)", "add aggregate: {n: count()}",
        )


def spec_line(sid: int, query: Query) -> str:
    """The harness's ``S`` line: kind (T, H, S, C), size, slide (a cumulating window's step),
    gap, lateness, tolerance (ms)."""
    window = query.window
    lateness = getattr(window, "allowed_lateness_ms", None) or 0
    if isinstance(window, SessionWindows):
        return f"S\t{sid}\tS\t0\t0\t{window.gap_ms}\t{lateness}\t{window.tolerance_ms}"
    if isinstance(window, CumulateWindows):
        return f"S\t{sid}\tC\t{window.size_ms}\t{window.step_ms}\t0\t0\t{window.tolerance_ms}"
    assert isinstance(window, FixedWindows)
    kind = "T" if window.hop_ms == window.size_ms else "H"
    return (f"S\t{sid}\t{kind}\t{window.size_ms}\t{window.hop_ms}\t0\t{lateness}\t"
            f"{window.tolerance_ms}")


def prepare(scenario: Scenario, sid: int) -> Prepared:
    """The harness input for ``scenario`` as branch ``sid`` (InvalidSpec for what Flink's
    window operator cannot run)."""
    query = scenario.query
    check_query(query)
    prepared = Prepared(sid, [spec_line(sid, query)])
    time_of = getter(query.window.on)
    key_getters = [getter(p) for p in query.group_by]
    index: dict[Any, int] = {}
    unit = scenario.time_unit_ms

    def feed(event: Event) -> None:
        values = tuple(g(event.payload) for g in key_getters)
        ident = tuple(hashable(v) for v in values)
        if ident not in index:
            index[ident] = len(prepared.groups)
            prepared.groups.append(group_value(values))
        key = index[ident]
        raw = time_of(event.payload)
        try:
            t_ms = raw * unit if type(raw) is int else timestamp_ms(raw, unit)
        except NotATime as exc:
            prepared.unusable.append(
                unusable_time_drop(event.seq, query.window.on, raw, exc, prepared.groups[key])
            )
            return
        if t_ms is None:
            prepared.unusable.append(
                unusable_time_drop(event.seq, query.window.on, None, None, prepared.groups[key])
            )
            return
        prepared.payloads[event.seq] = event.payload
        prepared.times[event.seq] = t_ms
        prepared.keys[event.seq] = key
        prepared.lines.append(f"E\t{sid}\t{event.seq}\t{key}\t{t_ms}")

    for item in checked(scenario.items, scenario.start_wall_ms):
        if isinstance(item, Event):
            feed(item)
        elif isinstance(item, Batch):
            for event in item.events:
                feed(event)
        elif isinstance(item, Watermark):
            prepared.lines.append(f"W\t{sid}\t{item.to_ms}")
        elif isinstance(item, End):
            break
    return prepared


@dataclass(frozen=True, slots=True)
class Firing:
    """One ``O`` line: a window of a key fired at a watermark with these contents."""

    key: int
    start_ms: int
    end_ms: int
    watermark_ms: int
    cause: str
    seqs: tuple[int, ...]


def parse(lines: Sequence[str]) -> tuple[dict[int, list[Firing]], dict[int, list[int]]]:
    """Harness output by scenario: firings and late side-output seqs."""
    firings: dict[int, list[Firing]] = defaultdict(list)
    late: dict[int, list[int]] = defaultdict(list)
    for line in lines:
        fields = line.split("\t")
        sid = int(fields[1])
        if fields[0] == "O":
            seqs = tuple(int(s) for s in fields[7].split(",") if s)
            firings[sid].append(Firing(int(fields[2]), int(fields[3]), int(fields[4]),
                                       int(fields[5]), fields[6], seqs))
        elif fields[0] == "L":
            late[sid].append(int(fields[2]))
    return firings, late


def reason_of(firing: Firing) -> tuple[str, bool]:
    """Why a window fired (see the module docstring) and whether it is partial."""
    if firing.cause == "element":
        return "late_firing", False
    if firing.watermark_ms == MAX_WATERMARK:
        return "end_of_input", True
    return "close", False


def windows_of(query: Query, t_ms: int) -> tuple[WindowRef, ...]:
    """The windows Flink's assigner gives an element at ``t_ms`` (a session: its own)."""
    window = query.window
    if isinstance(window, SessionWindows):
        return (WindowRef(t_ms, t_ms + window.gap_ms),)
    assert isinstance(window, FixedWindows | CumulateWindows)
    return tuple(WindowRef(s, e) for s, e in window.bounds_containing(t_ms))


def outputs_of(
    query: Query,
    prepared: Prepared,
    firings: Sequence[Firing],
    late: Sequence[int],
) -> list[Output]:
    """The contract's outputs of one scenario from its branch's harness output."""
    assert query.aggregate is not None
    aggregator = Aggregator(query.aggregate, query.aggregate_by)
    out: list[Output] = []
    delivered: set[int] = set()
    for firing in firings:
        state = aggregator.new()
        # a merged session's state lists are concatenated in an order Flink does not define,
        # a cumulating window's in slice order: aggregate in arrival order, as the oracle does
        # (docs/engines.md)
        merged = isinstance(query.window, SessionWindows | CumulateWindows)
        seqs = sorted(firing.seqs) if merged else firing.seqs
        for seq in seqs:
            aggregator.add(state, prepared.payloads[seq])
        delivered.update(firing.seqs)
        reason, partial = reason_of(firing)
        ref = WindowRef(firing.start_ms, firing.end_ms)
        group = prepared.groups[firing.key]
        for row in aggregator.rows(state, firing.start_ms, firing.end_ms):
            out.append(Emission(ref, group, row, reason, None, 0, partial))
    side = set(late)
    for seq, t_ms in prepared.times.items():
        if seq in delivered and seq not in side:
            continue
        group = prepared.groups[prepared.keys[seq]]
        refs = windows_of(query, t_ms)
        if seq in side:
            out.append(Drop(seq, "late", refs, "flink: late side output", group))
        elif isinstance(query.window, CumulateWindows):
            out.append(Drop(seq, "late", refs, "flink sql: in no fired window (late)", group))
        elif not refs:
            out.append(Drop(seq, "no_window", (), "flink: assigned to no window", group))
        else:
            out.append(Drop(seq, "unreported", refs, "flink: neither fired nor late", group))
    out.extend(prepared.unusable)
    return out
