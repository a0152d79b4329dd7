"""The event shape of a spec: every field a generated stream carries beside the ones the
window reads (its ``on``, ``group_by``, ``aggregate_by`` and aggregated fields).

In order of precedence: the fields the spec declares (``fields:``), the fields of its own
``input`` events (types inferred from their values), and the fields its stages read but
nothing else draws (a ``where`` field drawn around the literals it is compared with, a
``deduplicate`` key from a few values, so that keys repeat). docs/scenarios.md, "fields".
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from windtunnel.oracle.model.conditions import Compare, FieldRef, Literal, Node
from windtunnel.oracle.model.field_specs import FieldSpec
from windtunnel.oracle.model.stages import Deduplicate, Where
from windtunnel.oracle.model.stream import events_of
from windtunnel.oracle.scenario import Scenario
from windtunnel.oracle.scenario_blocks import type_name

MAX_CHOICES = 16
"""At most this many of a string field's seen values are drawn from."""
KEY_VALUES = ("k1", "k2", "k3")
"""The values of a deduplicate key field nothing else draws: few, so that keys repeat."""


def _leaves(payload: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for name, value in payload.items():
        path = f"{prefix}{name}"
        if isinstance(value, Mapping):
            yield from _leaves(value, f"{path}.")
        else:
            yield path, value


def inferred_fields(payloads: Iterable[Mapping[str, Any]]) -> list[FieldSpec]:
    """A field per leaf path of ``payloads`` whose non-null values have one type: strings
    drawn from the values seen, numbers from their range, with nulls as often as seen.
    Paths with values of several types, lists or only nulls are left out."""
    seen: dict[str, list[Any]] = {}
    for payload in payloads:
        for path, value in _leaves(payload):
            seen.setdefault(path, []).append(value)
    out = []
    for path, values in seen.items():
        present = [v for v in values if v is not None]
        kinds = {type_name(v) for v in present}
        if kinds == {"int", "float"}:
            kinds = {"float"}
        if len(kinds) != 1 or None in kinds:
            continue
        kind = kinds.pop()
        assert kind is not None
        nulls = round((len(values) - len(present)) / len(values), 3)
        if kind == "string":
            choices = tuple(dict.fromkeys(present))[:MAX_CHOICES]
            out.append(FieldSpec(path, kind, choices, nulls=nulls))
        elif kind in ("int", "float"):
            out.append(FieldSpec(path, kind, low=min(present), high=max(present), nulls=nulls))
        else:
            out.append(FieldSpec(path, kind, nulls=nulls))
    return out


def _comparisons(node: Node) -> Iterator[Compare]:
    if isinstance(node, Compare):
        yield node
    elif hasattr(node, "inner"):
        yield from _comparisons(node.inner)
    else:
        for part in node.parts:
            yield from _comparisons(part)


def _around(value: Any) -> list[Any]:
    """Values on both sides of a literal: so that a comparison with it goes both ways."""
    if isinstance(value, bool):
        return [True, False]
    if isinstance(value, int):
        return [value - 1, value, value + 1]
    if isinstance(value, float):
        return [value - 0.5, value, value + 0.5]
    return [value, f"not {value}"]


def stage_fields(spec: Scenario) -> list[FieldSpec]:
    """The fields the spec's stages read: a ``where`` field compared with literals drawn
    around them (and sometimes null), a ``deduplicate`` key field from :data:`KEY_VALUES`."""
    literals: dict[str, list[Any]] = {}
    keys: list[str] = []
    for stage in spec.query.stages:
        if isinstance(stage, Where):
            for compare in _comparisons(stage.condition.tree):
                pair = (compare.left, compare.right)
                for field, other in (pair, pair[::-1]):
                    if isinstance(field, FieldRef) and isinstance(other, Literal):
                        if other.value_ is not None:
                            literals.setdefault(field.path, []).extend(_around(other.value_))
                    elif isinstance(field, FieldRef):
                        literals.setdefault(field.path, [])
        elif isinstance(stage, Deduplicate):
            keys.extend(stage.key)
    out = []
    for path, values in literals.items():
        kinds = {type_name(v) for v in values}
        if kinds == {"int", "float"}:
            values, kinds = [float(v) for v in values], {"float"}
        if len(kinds) == 1:
            kind = kinds.pop()
            assert kind is not None
            out.append(FieldSpec(path, kind, tuple(dict.fromkeys(values)), nulls=0.1))
        elif not values:
            out.append(FieldSpec(path, "int", low=0, high=9, nulls=0.1))
    out += [FieldSpec(path, "string", KEY_VALUES) for path in keys if path not in literals]
    return out


def _widened(seen: FieldSpec, read: FieldSpec) -> FieldSpec:
    """A field seen in the input that a stage reads: its values widened by the stage's
    (the range stretched over the literals, the literals added to the choices), and null
    at least as often as the stage's field, so that the condition goes every way."""
    nulls = max(seen.nulls, read.nulls)
    if seen.type == read.type and seen.choices is not None and read.choices is not None:
        choices = tuple(dict.fromkeys((*seen.choices, *read.choices)))[: 2 * MAX_CHOICES]
        return replace(seen, choices=choices, nulls=nulls)
    if seen.type in ("int", "float") and read.choices is not None and all(
        type_name(v) in ("int", "float") for v in read.choices
    ):
        low, high = seen.bounds
        kind = "float" if "float" in (seen.type, read.type) else "int"
        return FieldSpec(seen.path, kind, low=min(low, *read.choices),
                         high=max(high, *read.choices), nulls=nulls)
    return replace(seen, nulls=nulls)


def extra_fields(spec: Scenario, drawn: Iterable[str]) -> tuple[FieldSpec, ...]:
    """The fields a generated stream for ``spec`` draws beside ``drawn`` (the paths the
    window's shape draws itself) and the ``on`` field: declared, then inferred from the
    spec's input (widened where a stage reads them), then read by its stages only; a
    declaration wins."""
    taken = {*drawn, spec.query.window.on}

    def free(path: str) -> bool:
        return path not in taken and not any(
            path.startswith(f"{t}.") or t.startswith(f"{path}.") for t in taken)

    out: dict[str, FieldSpec] = {}
    for field in spec.fields:
        if free(field.path):
            out.setdefault(field.path, field)
    declared = set(out)
    payloads = [e.payload for e in events_of(spec.items)]
    for field in inferred_fields(payloads):
        if free(field.path) and field.path not in declared:
            out[field.path] = field
    for field in stage_fields(spec):
        if not free(field.path) or field.path in declared:
            continue
        seen = out.get(field.path)
        out[field.path] = field if seen is None else _widened(seen, field)
    return tuple(out.values())
