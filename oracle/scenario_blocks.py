"""The scenario blocks beside the window: the stages (``where``, ``deduplicate``) and the
declared event fields (``fields``). Both are documented in docs/scenarios.md.

Every problem raises InvalidScenario (or InvalidSpec) naming the field path
(``deduplicate.within``, ``fields.click_id.nulls``), echoing the value and saying how to
fix it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from windtunnel.oracle.model.conditions import parse_condition
from windtunnel.oracle.model.errors import InvalidScenario
from windtunnel.oracle.model.field_specs import FIELD_TYPES, FieldSpec
from windtunnel.oracle.model.stages import STAGE_KINDS, Deduplicate, Stage, Where
from windtunnel.oracle.model.timeparse import parse_duration_ms

DEDUPLICATE_KEYS = ("key", "within")
FIELD_KEYS = ("type", "choices", "min", "max", "nulls", "duplicates", "faker")


def parse_stages(data: Mapping[str, Any], time_unit: str) -> tuple[Stage, ...]:
    """The scenario's ``where`` and ``deduplicate`` keys as stages, in the order they appear."""
    stages: list[Stage] = []
    for key in data:
        if key not in STAGE_KINDS or data[key] is None:
            continue
        stages.append(_where(data[key]) if key == "where" else _deduplicate(data[key], time_unit))
    return tuple(stages)


def _where(text: Any) -> Where:
    return Where(parse_condition(text, "where"))


def _deduplicate(block: Any, time_unit: str) -> Deduplicate:
    if not isinstance(block, Mapping):
        raise InvalidScenario(
            "deduplicate", block, "must be a mapping",
            "write deduplicate: {key: [click_id], within: 10min}",
        )
    for key in block:
        if key not in DEDUPLICATE_KEYS:
            raise InvalidScenario(f"deduplicate.{key}", block[key], "unknown key",
                                  f"use one of {', '.join(DEDUPLICATE_KEYS)}")
    key = block.get("key")
    if isinstance(key, str):
        key = [key]
    if not isinstance(key, list) or not key or not all(isinstance(k, str) and k for k in key):
        raise InvalidScenario("deduplicate.key", key, "must be a field name or a list of them",
                              "write key: [click_id]")
    within = block.get("within")
    within_ms = None if within is None else parse_duration_ms(within, "deduplicate.within", time_unit)
    return Deduplicate(tuple(key), within_ms)


def parse_fields(value: Any, on: str | None = None) -> tuple[FieldSpec, ...]:
    """The ``fields`` block: a mapping of field name (a dotted path) to its declaration, a
    mapping of :data:`FIELD_KEYS` or just the type (``click_id: string``). ``on``, the
    window's event-time field, cannot be declared (generated streams draw it)."""
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise InvalidScenario("fields", value, "must be a mapping of field: declaration",
                              "write fields: {click_id: {type: string, duplicates: 0.2}}")
    out = []
    for name, raw in value.items():
        where = f"fields.{name}"
        if name == on:
            raise InvalidScenario(where, raw, "is the window's event-time field (window.on)",
                                  "leave it out: generated streams draw event times themselves")
        block: Any = {"type": raw} if isinstance(raw, str) else raw
        if not isinstance(block, Mapping):
            raise InvalidScenario(where, raw, "must be a type or a mapping",
                                  f"write {name}: {{type: string}}")
        for key in block:
            if key not in FIELD_KEYS:
                raise InvalidScenario(f"{where}.{key}", block[key], "unknown key",
                                      f"use one of {', '.join(FIELD_KEYS)}")
        choices = block.get("choices")
        if choices is not None and not isinstance(choices, list):
            raise InvalidScenario(f"{where}.choices", choices, "must be a list",
                                  "write choices: [a, b, c]")
        kind = block["type"] if "type" in block else _type_of(choices, where)
        out.append(FieldSpec(
            str(name), kind, None if choices is None else tuple(choices), block.get("min"),
            block.get("max"), block.get("nulls", 0.0), block.get("duplicates", 0.0),
            block.get("faker"),
        ))
    return tuple(out)


def _type_of(choices: list[Any] | None, where: str) -> str:
    """The type of a field declared by its choices alone."""
    kinds = {type_name(v) for v in choices or ()}
    if len(kinds) == 1 and None not in kinds:
        found = kinds.pop()
        assert found is not None
        return found
    raise InvalidScenario(f"{where}.type", None, "is required (choices alone do not give one type)",
                          f"add type: with one of {', '.join(FIELD_TYPES)}")


def type_name(value: Any) -> str | None:
    """The field type of one JSON value (None for null, lists and objects)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return None
