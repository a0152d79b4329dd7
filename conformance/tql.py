"""Scenarios as one TQL pipeline for Tenzir's ``window`` operator, and its input.

Many scenarios with one query share a pipeline: every event carries its scenario's
number (``__sid``), its seq (``__seq``), the index of its ``group_by`` value in that
scenario (``__gk``) and its event time (``__t``), and an outer ``group`` keyed by
``{s: __sid, g: __gk}`` gives each scenario and key its own event-time clock -- the
page: "Each key advances its own event-time clock".

``__t`` is the scenario's ``on`` value as the oracle reads it (a number in the
scenario's time unit, or an ISO-8601 string): given as integer epoch milliseconds
(``__tms``), turned into a timestamp by ``from_epoch(__tms * 1ms)`` (an ISO string
with a fraction would be parsed through a double and lose a nanosecond); a null stays
null and a value that is not a time (a boolean, a list, an unparsable string) stays as
it is, so Tenzir drops the event like the page says ("Events for which `on` evaluates to
null, or to a value that is not a timestamp, are dropped with a warning").

The window body is ``summarize`` over the query's aggregates plus
``__seqs=collect(__seq)``: the events each window received, in delivery order. For a
pass-through query the body keeps the events (``__w = $window``). Tenzir reports
late drops only as a count, so which events were dropped is read from these member
lists (:mod:`windtunnel.conformance.targets.tenzir`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.fields import getter, hashable
from windtunnel.oracle.model.spec import (
    NOW,
    CountWindows,
    FixedWindows,
    Query,
    SessionWindows,
    TrailingCountWindows,
    TrailingWindows,
)
from windtunnel.oracle.model.stages import refuse_stages
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item
from windtunnel.oracle.model.timeparse import NotATime, timestamp_ms
from windtunnel.oracle.scenario import Scenario

_FUNCTIONS = {
    "count": "count",
    "sum": "sum",
    "min": "min",
    "max": "max",
    "avg": "mean",
    "distinct": "distinct",
    "count_distinct": "count_distinct",
    "collect": "collect",
    "first": "first",
    "last": "last",
}
"""windtunnel's aggregate functions and TQL's (``window_start``/``window_end`` are the
window's bounds, filled in from ``$window``)."""

BOUNDS = ("window_start", "window_end")

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def iso_ms(ms: int) -> str:
    """Epoch milliseconds as an ISO-8601 UTC string with milliseconds."""
    moment = _EPOCH + timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def ms_of_iso(text: str) -> int:
    """Tenzir's ISO-8601 output (``1970-01-01T00:00:05.5Z``) as epoch milliseconds."""
    value = timestamp_ms(text)
    assert value is not None
    return value


def duration_tql(ms: int) -> str:
    """A duration literal in milliseconds (``1500ms``)."""
    return f"{ms}ms"


def window_options(query: Query) -> str:
    """The ``window`` operator's options for ``query``'s window spec.

    Raises InvalidSpec for what Tenzir's ``window`` cannot express: processing-time
    windows (their output depends on the wall clock of the run), gapped count windows.
    """
    spec = query.window
    on = getattr(spec, "on", None)
    if on == NOW and not isinstance(spec, CountWindows | TrailingCountWindows):
        raise InvalidSpec(
            "window.on",
            on,
            "the tenzir target runs event-time windows only (on: now() depends on the run's "
            "wall clock)",
            "give an event-time field, or check processing time with the oracle",
        )
    parts: list[str] = []
    if isinstance(spec, FixedWindows):
        parts.append(f"size={duration_tql(spec.size_ms)}")
        if spec.every_ms is not None:
            parts.append(f"every={duration_tql(spec.every_ms)}")
        parts.append("on=__t")
        parts.append(f"tolerance={duration_tql(spec.tolerance_ms)}")
        if spec.idle_timeout_ms is not None:
            parts.append(f"idle_timeout={duration_tql(spec.idle_timeout_ms)}")
    elif isinstance(spec, SessionWindows):
        parts.append(f"gap={duration_tql(spec.gap_ms)}")
        if spec.max_duration_ms is not None and spec.max_events is not None:
            raise InvalidSpec(
                "window.max_events",
                spec.max_events,
                "Tenzir caps a session by a duration or an event count, not both (size=)",
                "give max_duration or max_events",
            )
        if spec.max_duration_ms is not None:
            parts.append(f"size={duration_tql(spec.max_duration_ms)}")
        if spec.max_events is not None:
            parts.append(f"size={spec.max_events}")
        parts.append("on=__t")
        parts.append(f"tolerance={duration_tql(spec.tolerance_ms)}")
        if spec.idle_timeout_ms is not None:
            parts.append(f"idle_timeout={duration_tql(spec.idle_timeout_ms)}")
    elif isinstance(spec, CountWindows):
        if spec.hop > spec.count:
            raise InvalidSpec(
                "window.every", spec.every, "Tenzir rejects every greater than size",
                "lower every to at most count",
            )
        parts.append(f"size={spec.count}")
        if spec.every is not None:
            parts.append(f"every={spec.every}")
    elif isinstance(spec, TrailingWindows):
        parts.append(f"size={duration_tql(spec.size_ms)}")
        parts.append("trailing=true")
        if spec.every_ms is not None:
            parts.append(f"every={duration_tql(spec.every_ms)}")
        parts.append("on=__t")
        if spec.tolerance_ms:
            parts.append(f"tolerance={duration_tql(spec.tolerance_ms)}")
        if spec.trigger is not None:
            parts.append(f"trigger={condition_tql(spec.trigger.text)}")
    elif isinstance(spec, TrailingCountWindows):
        parts.append(f"size={spec.count}")
        parts.append("trailing=true")
        if spec.every is not None:
            parts.append(f"every={spec.every}")
        if spec.trigger is not None:
            parts.append(f"trigger={condition_tql(spec.trigger.text)}")
    else:
        raise InvalidSpec(
            "window.kind", spec.kind, "the tenzir target has no translation for this kind",
            "use fixed, session, count or trailing",
        )
    return ", ".join(parts)


_CONDITION_TOKEN = re.compile(
    r"\s*(?:(?P<num>-?\d+(?:\.\d+)?)|(?P<str>'[^']*'|\"[^\"]*\")|(?P<op><=|>=|<>|!=|==|=|<|>)"
    r"|(?P<paren>[()])|(?P<word>[A-Za-z_][\w.]*))"
)
_CONDITION_WORDS = {"and": "and", "or": "or", "not": "not", "true": "true", "false": "false",
                    "null": "null"}


def condition_tql(text: str) -> str:
    """A condition of the scenario grammar (``oracle/model/conditions.py``) as a TQL
    expression. A comparison with a missing or null field is false there (SQL's unknown);
    TQL's ``null != 4`` is true, so each field operand is guarded by ``!= null``.
    Comparisons between values of different types still differ (not translated)."""
    tokens = [(m.lastgroup, m.group(m.lastgroup)) for m in _CONDITION_TOKEN.finditer(text)
              if m.lastgroup is not None]
    out: list[str] = []
    index = 0
    while index < len(tokens):
        kind, value = tokens[index]
        if kind == "op" and index + 1 < len(tokens) and out:
            left = out.pop()
            right_kind, right = tokens[index + 1]
            right = _operand(right_kind, right)
            guards = [f"{operand} != null" for operand, is_field in
                      ((left, tokens[index - 1][0] == "word"), (right, right_kind == "word"))
                      if is_field and operand not in ("true", "false", "null")]
            op = {"=": "==", "<>": "!="}.get(value, value)
            out.append("(" + " and ".join([*guards, f"{left} {op} {right}"]) + ")")
            index += 2
            continue
        out.append(_operand(kind, value) if kind in ("num", "str", "word") else value)
        index += 1
    return " ".join(out).replace("( ", "(").replace(" )", ")")


def _operand(kind: str, value: str) -> str:
    if kind == "str":
        return json.dumps(value[1:-1])
    if kind == "word":
        word = _CONDITION_WORDS.get(value.lower())
        return word if word is not None else _path(value)
    return value


def body(query: Query) -> str:
    """The window's subpipeline: ``summarize`` with the members, or pass-through."""
    if query.aggregate is None:
        return "__w = $window"
    columns = [_quoted(name) for name in query.aggregate_by]
    for aggregation in query.aggregate:
        if aggregation.function in BOUNDS:
            continue
        function = _FUNCTIONS.get(aggregation.function)
        if function is None:
            raise InvalidSpec(
                f"aggregate.{aggregation.name}", aggregation.function,
                "has no TQL counterpart", f"use one of {', '.join(_FUNCTIONS)}",
            )
        argument = "" if aggregation.field is None else _path(aggregation.field)
        if aggregation.function == "avg":
            # Tenzir's mean() can differ from sum / count in the last bit of a double: the
            # target divides the sum by the count of the numbers itself, as the oracle does
            total, n = avg_columns(aggregation.name)
            columns.append(f"{total}=sum({argument}), {n}=count({argument})")
            continue
        columns.append(f"{_quoted(aggregation.name)}={function}({argument})")
    columns.append("__seqs=collect(__seq)")
    if paced(query):  # when the window's latest event arrived (see pipeline)
        columns.append("__arrived=max(__a)")
    return f"summarize {', '.join(columns)}\n    __w = $window"


def avg_columns(name: str) -> tuple[str, str]:
    """The hidden ``summarize`` columns (sum, count) an ``avg`` aggregate ``name`` is read from."""
    index = hashlib.sha1(name.encode()).hexdigest()[:10]
    return f"__avg_sum_{index}", f"__avg_n_{index}"


def paced(query: Query) -> bool:
    """Whether ``query``'s scenarios run paced in wall time (``idle_timeout``): each event
    is released by ``delay`` at its arrival time ``__wms`` (wall ms from the run's start)
    and stamped when it arrived (``__a``); each window records when its latest event
    arrived (``__arrived``) and when it was emitted (``__e``), so the emission's wall time
    is the latest member's arrival wall time plus the difference."""
    return getattr(query.window, "idle_timeout_ms", None) is not None


def pipeline(query: Query) -> str:
    """The whole pipeline: NDJSON from stdin, ``group`` per scenario and key, ``window``;
    paced (:func:`paced`) through ``delay`` when the window has an ``idle_timeout``.
    Raises InvalidSpec for stages before the window (not compiled to TQL yet)."""
    refuse_stages(query.stages, "the tenzir target")
    pace = "__wall = from_epoch(__wms * 1ms)\ndelay __wall\n__a = now()\n" if paced(query) else ""
    stamp = "    __e = now()\n" if paced(query) else ""
    return (
        "from_stdin { read_ndjson }\n"
        "__t = from_epoch(__tms * 1ms) if __tms != null else __t\n"
        f"{pace}"
        "group {s: __sid, g: __gk} {\n"
        f"  window {window_options(query)} {{\n"
        f"    {body(query)}\n"
        "    __g = $group\n"
        f"{stamp}"
        "  }\n"
        "}\n"
        "write_ndjson\n"
    )


def _quoted(name: str) -> str:
    return name if name.isidentifier() else json.dumps(name)


def _path(path: str) -> str:
    return ".".join(_quoted(part) for part in path.split("."))


# --- input -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EventInfo:
    """What the target needs about one event: its time (None when unusable), why it is
    unusable (``null_time`` / ``not_a_time``), its group index and payload."""

    seq: int
    t_ms: int | None
    unusable: str | None
    group_index: int
    payload: Any


@dataclass(frozen=True, slots=True)
class Prepared:
    """One scenario as input lines plus what reading the output needs."""

    lines: tuple[str, ...]
    events: tuple[EventInfo, ...]
    groups: tuple[Any, ...]
    grouped: bool
    walls: tuple[int, ...] = ()
    end_wall_ms: int = 0
    """The arrival wall time of each line, and of the scenario's end (its last item)."""


def group_value(query: Query, payload: Any) -> Any:
    """The contract's group of an event: None, one value, or a list for several fields."""
    if not query.group_by:
        return None
    values = [getter(path)(payload) for path in query.group_by]
    return values[0] if len(values) == 1 else values


def arrival_walls(items: Sequence[Item]) -> tuple[list[int], int]:
    """The wall time (ms) at which each event arrives, in stream order, and the wall time
    the scenario ends at (its last ``advance`` or event)."""
    wall = 0
    walls: list[int] = []
    for item in items:
        if isinstance(item, Advance):
            wall = max(wall, item.to_ms)
        elif isinstance(item, End):
            break
        else:
            for event in item.events if isinstance(item, Batch) else (item,):
                if isinstance(event, Event):
                    if event.at_ms is not None:
                        wall = max(wall, event.at_ms)
                    walls.append(wall)
    return walls, wall


def events_in_order(items: Sequence[Item]) -> list[Event]:
    """The scenario's events in stream order (batches flattened; advances skipped)."""
    out: list[Event] = []
    for item in items:
        if isinstance(item, Event):
            out.append(item)
        elif isinstance(item, Batch):
            out.extend(item.events)
        elif isinstance(item, End):
            break
        elif isinstance(item, Advance):
            continue
    return out


def prepare(scenario: Scenario, sid: int) -> Prepared:
    """The NDJSON lines of ``scenario`` as scenario ``sid``."""
    query = scenario.query
    on = getattr(query.window, "on", NOW)
    read_on = getter(on) if on != NOW else None
    groups: list[Any] = []
    index_of: dict[Any, int] = {}
    infos: list[EventInfo] = []
    lines: list[str] = []
    walls, end_wall = arrival_walls(scenario.items)
    pace = paced(query)
    for index, event in enumerate(events_in_order(scenario.items)):
        group = group_value(query, event.payload)
        key = hashable(group)
        if key not in index_of:
            index_of[key] = len(groups)
            groups.append(group)
        record: dict[str, Any] = dict(event.payload)
        t_ms: int | None = None
        unusable: str | None = None
        if read_on is not None:
            raw = read_on(event.payload)
            try:
                t_ms = timestamp_ms(raw, scenario.time_unit_ms)
            except NotATime:
                unusable = "not_a_time"
                record.update(__tms=None, __t=raw)
            else:
                if t_ms is None:
                    unusable = "null_time"
                record.update(__tms=t_ms, __t=None)
        record.update(__sid=sid, __seq=event.seq, __gk=index_of[key])
        if pace:
            record.update(__wms=walls[index])
        lines.append(json.dumps(record, default=str))
        infos.append(EventInfo(event.seq, t_ms, unusable, index_of[key], event.payload))
    return Prepared(
        tuple(lines), tuple(infos), tuple(groups), bool(query.group_by), tuple(walls), end_wall
    )


END_SID = -1
"""The scenario number of the paced run's end marker: one event at the last scenario's end
wall time keeps the input open until then (a window force-closed by ``idle_timeout`` is
emitted before it, one flushed at end of input after it)."""


def paced_lines(prepared: Sequence[Prepared]) -> list[str]:
    """The lines of several paced scenarios merged by arrival wall time (stable: each
    scenario keeps its stream order), then the end marker."""
    merged = sorted(
        ((wall, order, line) for order, p in enumerate(prepared)
         for wall, line in zip(p.walls, p.lines, strict=True)),
        key=lambda entry: (entry[0], entry[1]),
    )
    end_ms = max((p.end_wall_ms for p in prepared), default=0)
    marker = {"__sid": END_SID, "__seq": -1, "__gk": 0, "__tms": 0, "__t": None, "__wms": end_ms}
    return [line for _, _, line in merged] + [json.dumps(marker)]
