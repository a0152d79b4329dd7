"""Scenario files (YAML or JSON): one stream, one query, a profile, optional expectations.

The format is documented in docs/scenarios.md. Every problem raises InvalidScenario (or
InvalidSpec) naming the field path (``window.size``, ``input[3].at``), echoing the
value and saying how to fix it. The ``window`` block is read by :mod:`.scenario_windows`,
the ``where``, ``deduplicate`` and ``fields`` blocks by :mod:`.scenario_blocks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from windtunnel.oracle.expect import Expectation, parse_expectation
from windtunnel.oracle.loading import read_scenario_data
from windtunnel.oracle.model.errors import InvalidScenario, InvalidSpec
from windtunnel.oracle.model.field_specs import FieldSpec
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Aggregation, Query
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item, Watermark
from windtunnel.oracle.model.timeparse import parse_duration_ms, parse_timestamp_ms, unit_ms
from windtunnel.oracle.model.yaml_safe import load_yaml
from windtunnel.oracle.profiles import Profile, check_supported, profile_named
from windtunnel.oracle.scenario_blocks import parse_fields, parse_stages
from windtunnel.oracle.scenario_windows import parse_window

TOP_LEVEL_KEYS = (
    "name",
    "description",
    "profile",
    "rules",
    "time_unit",
    "start_wall",
    "window",
    "query",
    "group_by",
    "aggregate",
    "aggregate_by",
    "output_mode",
    "where",
    "deduplicate",
    "fields",
    "input",
    "expect",
)
RESERVED_ITEM_KEYS = ("event", "at", "advance", "batch", "watermark", "end")


@dataclass(frozen=True, slots=True)
class Scenario:
    """A parsed scenario: everything an engine needs to replay it. ``fields`` are the
    declared event fields (``fields:``), what generated streams draw beside the ones the
    query reads."""

    name: str
    query: Query
    items: tuple[Item, ...]
    profile: Profile
    rules: Rules
    time_unit: str = "ms"
    start_wall_ms: int = 0
    expect: Expectation | None = None
    description: str = ""
    rule_overrides: Mapping[str, str] = field(default_factory=dict)
    fields: tuple[FieldSpec, ...] = ()

    @property
    def time_unit_ms(self) -> int:
        return unit_ms(self.time_unit)


def load_scenario(path: str | Path) -> Scenario:
    """Read and parse a scenario file; raises InvalidScenario for unreadable or bad files
    (not UTF-8, bad syntax, repeated keys, alias bombs: see ``oracle.loading``)."""
    path = Path(path)
    return parse_scenario(read_scenario_data(path), default_name=path.stem)


def load_spec(path: str | Path) -> Scenario:
    """Read a spec: a scenario file whose ``input`` may be left out (``windtunnel check``
    generates the streams); raises InvalidScenario as :func:`load_scenario` does."""
    path = Path(path)
    return parse_scenario(read_scenario_data(path), default_name=path.stem, require_input=False)


def parse_scenario(
    data: Any, default_name: str = "scenario", *, require_input: bool = True
) -> Scenario:
    """Build a Scenario from already-decoded YAML/JSON data; ``require_input`` False reads a
    spec (no ``input`` means no items)."""
    if not isinstance(data, Mapping):
        raise InvalidScenario(
            "scenario", data, "must be a mapping", "start the file with name:, window:, input:"
        )
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            raise InvalidScenario(
                key, data[key], "unknown key", f"use one of {', '.join(TOP_LEVEL_KEYS)}"
            )
    time_unit = data.get("time_unit", "ms")
    unit_ms(time_unit, "time_unit")
    profile = profile_named(data.get("profile", "tenzir"))
    overrides = data.get("rules") or {}
    if not isinstance(overrides, Mapping):
        raise InvalidScenario(
            "rules", overrides, "must be a mapping", "write rules: {close_at: passes}"
        )
    rules = profile.rules.with_overrides(dict(overrides))
    if data.get("query") is not None:  # the system's own window clause (oracle/clauses)
        from windtunnel.oracle.clauses import query_from_scenario

        query = query_from_scenario(
            data, profile.name, time_unit, _names(data.get("group_by"), "group_by"),
            _aggregate(data.get("aggregate")), _names(data.get("aggregate_by"), "aggregate_by"),
        )
    else:
        if "window" not in data:
            raise InvalidScenario(
                "window", None, "is required", "add window: {kind: fixed, size: 10s, on: ts}"
            )
        window = parse_window(data["window"], time_unit, rules)
        query = Query(
            window=window,
            group_by=_names(data.get("group_by"), "group_by"),
            aggregate=_aggregate(data.get("aggregate")),
            aggregate_by=_names(data.get("aggregate_by"), "aggregate_by"),
        )
    stages = parse_stages(data, time_unit)
    if stages:
        query = replace(query, stages=stages)
    if data.get("output_mode", "append") != "append":  # Spark's update and complete modes
        query = replace(query, output_mode=data["output_mode"])
        check_supported(profile, query)
    fields = parse_fields(data.get("fields"), query.window.on)
    start_wall = data.get("start_wall", 0)
    start_wall_ms = parse_timestamp_ms(start_wall, "start_wall", time_unit)
    if "input" not in data and require_input:
        raise InvalidScenario(
            "input", None, "is required",
            "add input: with a list of events (windtunnel check reads a spec without one)",
        )
    items = parse_items(data.get("input", []), time_unit, start_wall_ms)
    expect = (
        parse_expectation(data["expect"], time_unit) if data.get("expect") is not None else None
    )
    name = data.get("name", default_name)
    if not isinstance(name, str):
        raise InvalidScenario("name", name, "must be a string", "quote it")
    return Scenario(
        name=name,
        query=query,
        items=items,
        profile=profile,
        rules=rules,
        time_unit=time_unit,
        start_wall_ms=start_wall_ms,
        expect=expect,
        description=str(data.get("description", "")),
        rule_overrides=dict(overrides),
        fields=fields,
    )


def _names(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise InvalidScenario(
        where, value, "must be a field name or a list of them", f"write {where}: [user, src_ip]"
    )


def _aggregate(value: Any) -> tuple[Aggregation, ...] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not value:
        raise InvalidScenario(
            "aggregate",
            value,
            "must be a mapping of column: function()",
            "write aggregate: {n: count()}",
        )
    return tuple(Aggregation.parse(str(name), text) for name, text in value.items())


# --- input items ---------------------------------------------------------------------------


def parse_items(value: Any, time_unit: str, start_wall_ms: int = 0) -> tuple[Item, ...]:
    """The ``input`` list as stream items, numbering events and resolving wall times."""
    if not isinstance(value, list):
        raise InvalidScenario("input", value, "must be a list", "write input: [{ts: 0}, {ts: 5}]")
    parser = _ItemParser(time_unit, start_wall_ms)
    items: list[Item] = []
    for index, raw in enumerate(value):
        item = parser.item(raw, f"input[{index}]")
        if items and isinstance(items[-1], End):
            raise InvalidScenario(
                f"input[{index}]", raw, "comes after end: true", "remove it or move the end"
            )
        items.append(item)
    return tuple(items)


class _ItemParser:
    def __init__(self, time_unit: str, start_wall_ms: int) -> None:
        self.time_unit = time_unit
        self.wall_ms = start_wall_ms
        self.seq = 0

    def item(self, raw: Any, where: str) -> Item:
        if not isinstance(raw, Mapping):
            raise InvalidScenario(
                where, raw, "must be a mapping", "write an event such as {ts: 0, user: a}"
            )
        reserved = [k for k in RESERVED_ITEM_KEYS if k in raw]
        if not reserved:
            return self._event(raw, None, where)
        if "batch" in reserved:
            self._only(raw, ("batch", "at"), where)
            self._move(raw.get("at"), f"{where}.at")
            members = raw["batch"]
            if not isinstance(members, list):
                raise InvalidScenario(
                    f"{where}.batch", members, "must be a list", "write batch: [{ts: 1}, {ts: 2}]"
                )
            events = []
            for i, member in enumerate(members):
                sub = f"{where}.batch[{i}]"
                if isinstance(member, Mapping) and "event" in member:
                    self._only(member, ("event", "at"), sub)
                    events.append(self._event(member["event"], member.get("at"), sub))
                elif isinstance(member, Mapping) and not any(
                    k in member for k in RESERVED_ITEM_KEYS
                ):
                    # the batch's `at` is its first member's arrival (the driver moves the wall)
                    events.append(self._event(member, raw.get("at") if i == 0 else None, sub))
                else:
                    raise InvalidScenario(
                        sub, member, "not an event", "write {ts: 1} or {event: {ts: 1}, at: 5}"
                    )
            return Batch(tuple(events))
        if "event" in reserved:
            self._only(raw, ("event", "at"), where)
            return self._event(raw["event"], raw.get("at"), where)
        if "advance" in reserved:
            self._only(raw, ("advance",), where)
            step = parse_duration_ms(raw["advance"], f"{where}.advance", self.time_unit)
            if step < 0:
                raise InvalidScenario(
                    f"{where}.advance",
                    raw["advance"],
                    "the wall clock cannot go back",
                    "give a positive duration",
                )
            self.wall_ms += step
            return Advance(self.wall_ms)
        if "watermark" in reserved:  # a harness-injected watermark (docs/semantics.md, W1)
            self._only(raw, ("watermark",), where)
            return Watermark(
                parse_timestamp_ms(raw["watermark"], f"{where}.watermark", self.time_unit)
            )
        if "end" in reserved:
            self._only(raw, ("end",), where)
            if raw["end"] is not True:
                raise InvalidScenario(
                    f"{where}.end", raw["end"], "must be true", "write {end: true}"
                )
            return End()
        self._only(raw, ("at",), where)
        self._move(raw["at"], f"{where}.at")
        return Advance(self.wall_ms)

    def _only(self, raw: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
        for key in raw:
            if key not in allowed:
                first = next(k for k in raw if k in RESERVED_ITEM_KEYS)
                raise InvalidScenario(
                    f"{where}.{key}",
                    raw[key],
                    f"cannot stand beside {first!r} in one input item",
                    "put event fields under event: {...} or split the item",
                )

    def _move(self, at: Any, where: str) -> None:
        if at is None:
            return
        at_ms = parse_timestamp_ms(at, where, self.time_unit)
        if at_ms < self.wall_ms:
            raise InvalidScenario(
                where,
                at,
                f"the wall clock cannot go back (it is at {self.wall_ms})",
                "give a later time or reorder the input",
            )
        self.wall_ms = at_ms

    def _event(self, payload: Any, at: Any, where: str) -> Event:
        if not isinstance(payload, Mapping):
            raise InvalidScenario(
                f"{where}.event", payload, "must be a mapping of fields", "write event: {ts: 0}"
            )
        self._move(at, f"{where}.at")
        event = Event(self.seq, dict(payload), None if at is None else self.wall_ms)
        self.seq += 1
        return event


__all__ = [
    "InvalidScenario",
    "InvalidSpec",
    "Scenario",
    "load_scenario",
    "load_spec",
    "load_yaml",
    "parse_scenario",
]
