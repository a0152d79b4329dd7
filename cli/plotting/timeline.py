"""What a timeline picture shows, as data: rows, event marks, window bars, clock lines.

x is event time in ms; y is arrival: one row per input item in stream order (top to
bottom), labelled with its wall clock. Windows are bars ``[start_ms, end_ms)`` drawn
in lanes under the row of the item during which they were emitted, their emission
marked at the bar's end; windows never emitted are dashed bars under the end of input.
Rows are shared by every panel (profile or engine) so that panels line up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.results import Drop, Emission, WindowRef, pane_of
from windtunnel.oracle.model.timefmt import ENDS_OF_TIME, time_text, window_text

LANE = 0.32
"""Height of one window lane, in rows."""
MAX_LANES = 24
"""Window bars under one row at most; the rest are counted in a note."""
MAX_ITEMS = 300
"""Input items drawn at most; a longer stream is cut and the title says so."""


@dataclass(frozen=True, slots=True)
class Arrival:
    """One input item: ``index`` in the stream, its ``kind``, the event seqs it holds, the
    wall clock after it, and the event times (ms, None when unusable) of its events."""

    index: int
    kind: str
    seqs: tuple[int, ...]
    wall_ms: int
    times_ms: tuple[int | None, ...] = ()
    groups: tuple[Any, ...] = ()
    to_ms: int | None = None

    def __post_init__(self) -> None:
        if self.index < 0:
            raise InvalidInput("index", self.index, "must be >= 0", "number items from 0")


@dataclass(frozen=True, slots=True)
class PanelSource:
    """One run to draw: the emissions made while each item was consumed (``emitted[i]``),
    the drops by seq, the windows each event went into (``delivered``, may be empty), the
    event-time clock after each item per group (``clocks[i]``: group -> ms, None key for a
    stream-wide clock) and the windows never emitted."""

    name: str
    clock_name: str
    emitted: tuple[tuple[Emission, ...], ...]
    drops: dict[int, Drop]
    delivered: dict[int, tuple[WindowRef, ...]] = field(default_factory=dict)
    clocks: tuple[dict[Any, int], ...] = ()
    lost: tuple[tuple[Any, WindowRef], ...] = ()
    note: str = ""
    closed_end: bool = False


@dataclass(frozen=True, slots=True)
class EventMark:
    """Event ``seq`` at (``x_ms``, ``y``); ``drop`` is its drop reason or None if delivered."""

    seq: int
    x_ms: int | None
    y: float
    group: Any
    drop: str | None
    gid: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class WindowBar:
    """A window ``[start_ms, end_ms)`` of ``group`` in a lane at ``y``: emitted (``reason``,
    ``row`` text) at the bar's end, or never emitted (``reason`` None)."""

    group: Any
    start_ms: int
    end_ms: int
    y: float
    reason: str | None
    label: str
    gid: str
    partial: bool = False


@dataclass(frozen=True, slots=True)
class Panel:
    """Everything one panel draws."""

    name: str
    clock_name: str
    events: tuple[EventMark, ...]
    bars: tuple[WindowBar, ...]
    rings: tuple[EventMark, ...]
    clocks: tuple[tuple[Any, tuple[tuple[int, float], ...]], ...]
    note: str


@dataclass(frozen=True, slots=True)
class Row:
    """The row of one input item: its ``y``, its label, and whether it is an idle gap."""

    index: int
    y: float
    label: str
    idle: bool


@dataclass(frozen=True, slots=True)
class Timeline:
    """The whole picture: a title, the shared rows, the panels and the groups in order."""

    title: str
    unit_ms: int
    rows: tuple[Row, ...]
    panels: tuple[Panel, ...]
    groups: tuple[Any, ...]
    bottom: float
    x_is_seq: bool = False


def slug(value: Any) -> str:
    """A group as an id fragment: ``a``, ``alice_10.0.0.1``; empty when ungrouped."""
    if value is None:
        return ""
    text = "_".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


def group_label(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "/".join(map(str, value))
    return "(all)" if value is None else str(value)


def _row_label(arrival: Arrival, unit_ms: int, walls: bool) -> str:
    wall = time_text(arrival.wall_ms, unit_ms)
    if arrival.kind == "advance":
        return f"idle, wall -> {wall}"
    if arrival.kind == "watermark":
        return f"watermark -> {time_text(arrival.to_ms, unit_ms)}"
    if arrival.kind == "end":
        return "end of input"
    seqs = arrival.seqs
    name = f"#{seqs[0]}" if len(seqs) == 1 else f"#{seqs[0]}..#{seqs[-1]}"
    return f"{name} @ {wall}" if walls else name


def _bar_span(
    window: WindowRef, members: Sequence[int | None]
) -> tuple[int, int] | None:
    """A window's x extent: its times, or (count windows) its members' event times."""
    if window.start_ms is not None and window.end_ms is not None:
        return window.start_ms, window.end_ms
    times = [t for t in members if t is not None]
    return (min(times), max(times)) if times else None


def _row_text(emission: Emission) -> str:
    row = ", ".join(f"{k}={v}" for k, v in emission.row.items())
    row = row if len(row) <= 40 else row[:37] + "..."
    pane = pane_of(emission)  # beam: each pane of a window is a bar of its own
    return row if pane is None else f"{row} (pane {pane.index} {pane.timing})"


def _finite(span: tuple[int, int], times: Sequence[int]) -> tuple[int, int]:
    """A span whose ends lie beyond the ends of time (Beam's global window) cut to the
    stream's event times."""
    lo, hi = (min(times), max(times) + 1) if times else (0, 1)
    start = lo if span[0] in ENDS_OF_TIME else span[0]
    end = hi if span[1] in ENDS_OF_TIME else span[1]
    return start, max(end, start + 1)


def build(
    title: str, unit_ms: int, arrivals: Sequence[Arrival], sources: Sequence[PanelSource]
) -> Timeline:
    """Lay out ``sources`` (one panel each) against the shared ``arrivals``."""
    cut = len(arrivals) > MAX_ITEMS
    if cut:
        title += f" (first {MAX_ITEMS} of {len(arrivals)} input items)"
        arrivals = arrivals[:MAX_ITEMS]
    times = {t for a in arrivals for t in a.times_ms}
    timeless = all(
        e.window.start_ms is None for s in sources for row in s.emitted for e in row
    )
    x_is_seq = len(times - {None}) <= 1 and timeless and any(a.seqs for a in arrivals)
    if x_is_seq:
        title += " (x = event seq: every event has the same time)"
        arrivals = [replace(a, times_ms=a.seqs) for a in arrivals]
    walls = len({a.wall_ms for a in arrivals}) > 1
    lanes = [0] * len(arrivals)
    for source in sources:
        for i, _ in enumerate(arrivals):
            shown = [e for e in source.emitted[i] if e.reason != "event"] if i < len(source.emitted) else []
            extra = len(source.lost) if i == len(arrivals) - 1 and not cut else 0
            lanes[i] = max(lanes[i], min(MAX_LANES, len(shown) + extra))
    rows: list[Row] = []
    y = 0.0
    for arrival, n in zip(arrivals, lanes, strict=True):
        rows.append(
            Row(arrival.index, y, _row_label(arrival, unit_ms, walls), arrival.kind == "advance")
        )
        y += 1 + LANE * n
    groups: list[Any] = []
    for arrival in arrivals:
        for g in arrival.groups:
            if g not in groups:
                groups.append(g)
    panels = tuple(_panel(s, arrivals, rows, unit_ms) for s in sources)
    return Timeline(title, unit_ms, tuple(rows), panels, tuple(groups), y, x_is_seq)


def _panel(
    source: PanelSource, arrivals: Sequence[Arrival], rows: Sequence[Row], unit_ms: int
) -> Panel:
    prefix = slug(source.name)
    time_of: dict[int, int | None] = {}
    group_of: dict[int, Any] = {}
    row_of: dict[int, Row] = {}
    events = []
    for arrival, row in zip(arrivals, rows, strict=False):
        for seq, t, g in zip(arrival.seqs, arrival.times_ms, arrival.groups, strict=True):
            time_of[seq], group_of[seq], row_of[seq] = t, g, row
            drop = source.drops.get(seq)
            state = "delivered" if drop is None else "dropped"
            events.append(
                EventMark(seq, t, row.y, g, None if drop is None else drop.reason,
                          f"{prefix}-event-{seq}-{state}", "" if drop is None else drop.message)
            )
    members = _members(source, time_of, group_of)
    known = [t for t in time_of.values() if t is not None]
    bars: list[WindowBar] = []
    rings: list[EventMark] = []
    seen: dict[str, int] = {}
    notes = [source.note] if source.note else []
    hidden = 0

    def add(group: Any, window: WindowRef, y: float, reason: str | None, label: str,
            partial: bool) -> None:
        nonlocal hidden
        span = _bar_span(window, members.get((slug(group), window.start_offset), ()))
        if span is None:
            hidden += 1
            return
        span = _finite(span, known)
        base = "-".join(p for p in ("window", slug(group), str(span[0]), str(span[1])) if p)
        count = seen.get(base, 0)
        seen[base] = count + 1
        gid = f"{prefix}-{base}" + (f"-{count}" if count else "")
        bars.append(WindowBar(group, span[0], span[1], y, reason, label, gid, partial))

    for i, row in enumerate(rows):
        lane = 0
        emitted = source.emitted[i] if i < len(source.emitted) else ()
        for k, emission in enumerate(emitted):
            if emission.reason == "event":
                at = row_of.get(emission.after_seq) if emission.after_seq is not None else None
                if at is not None and emission.after_seq is not None:
                    rings.append(EventMark(emission.after_seq, time_of.get(emission.after_seq),
                                           at.y, emission.group, None, f"{prefix}-emit-{i}-{k}"))
                continue
            if lane >= MAX_LANES:
                hidden += 1
                continue
            lane += 1
            text = f"{_window(emission.window, unit_ms, source)} {_row_text(emission)}"
            add(emission.group, emission.window, row.y + LANE * lane, emission.reason, text,
                emission.partial)
        if i == len(rows) - 1 and len(rows) == len(arrivals) and arrivals[-1].kind == "end":
            for group, window in source.lost:
                if lane >= MAX_LANES:
                    hidden += 1
                    continue
                lane += 1
                add(group, window, row.y + LANE * lane, None,
                    f"{_window(window, unit_ms, source)} never emitted", False)
    if hidden:
        notes.append(f"{hidden} window bars not drawn")
    return Panel(source.name, source.clock_name, tuple(events), tuple(bars), tuple(rings),
                 _clock_lines(source, rows), "; ".join(notes))


def _window(window: WindowRef, unit_ms: int, source: PanelSource) -> str:
    return window_text(window, unit_ms, closed_end=source.closed_end)


def _members(
    source: PanelSource, time_of: dict[int, int | None], group_of: dict[int, Any]
) -> dict[tuple[str, int | None], list[int | None]]:
    """Count windows' member event times, by (group, start offset)."""
    members: dict[tuple[str, int | None], list[int | None]] = {}
    for seq, windows in source.delivered.items():
        for window in windows:
            if window.start_offset is not None:
                members.setdefault((slug(group_of.get(seq)), window.start_offset), []).append(
                    time_of.get(seq)
                )
    return members


def _clock_lines(
    source: PanelSource, rows: Sequence[Row]
) -> tuple[tuple[Any, tuple[tuple[int, float], ...]], ...]:
    """Per clock (None: the stream's), its step line: it moves within the row of the item
    that moved it and holds until the next row."""
    points: dict[Any, list[tuple[int, float]]] = {}
    order: list[Any] = []
    for row, clocks in zip(rows, source.clocks, strict=False):
        for key, value in clocks.items():
            if value in ENDS_OF_TIME:  # Beam's final watermark: off the picture
                continue
            line = points.setdefault(_hashable(key), [])
            if _hashable(key) not in order:
                order.append(_hashable(key))
            if line and line[-1][0] != value:
                line.append((line[-1][0], row.y))
            if not line or line[-1][0] != value:
                line.append((value, row.y))
    end = rows[-1].y + 0.5 if rows else 0.0
    out = []
    for key in order:
        line = points[key]
        line.append((line[-1][0], end))
        out.append((key, tuple(line)))
    return tuple(out)


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value
