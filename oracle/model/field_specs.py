"""Declared event fields: a spec's ``fields:`` block, how generated streams draw a field.

A :class:`FieldSpec` names a field (a dotted path), its type and how to draw its values:
``choices``, a ``min``/``max`` range, a Faker provider, a rate of nulls and a rate of
duplicates (an event reusing a value an earlier event of the stream drew). Generated
streams (``windtunnel check``) carry every declared field, and a Spark job sees it as a
column of that type (docs/scenarios.md, "fields").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from windtunnel.oracle.model.errors import InvalidScenario

FIELD_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "string": (str,),
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
}
"""Field types and the Python values each holds (booleans are not numbers)."""

DEFAULT_RANGE: Final[dict[str, tuple[int, int]]] = {"int": (0, 99), "float": (0, 100)}
"""The range of a number field declared without ``min``/``max``."""


def _holds(kind: str, value: Any) -> bool:
    if isinstance(value, bool):
        return kind == "bool"
    return isinstance(value, FIELD_TYPES[kind])


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """How to draw field ``path``: of ``type`` (string, int, float, bool), from ``choices``
    or ``faker`` (a Faker provider, strings) or the range ``[low, high]`` (numbers; both
    ends included), null with probability ``nulls`` and a repeat of an earlier event's
    value with probability ``duplicates``. Raises InvalidScenario naming
    ``fields.<path>.<key>`` for a value that does not fit."""

    path: str
    type: str
    choices: tuple[Any, ...] | None = None
    low: int | float | None = None
    high: int | float | None = None
    nulls: float = 0.0
    duplicates: float = 0.0
    faker: str | None = None

    def __post_init__(self) -> None:
        where = f"fields.{self.path}"
        if not isinstance(self.path, str) or not self.path or not all(self.path.split(".")):
            raise InvalidScenario("fields", self.path, "must name a field", "write fields: {x: int}")
        if self.type not in FIELD_TYPES:
            raise InvalidScenario(f"{where}.type", self.type, "not a field type",
                                  f"use one of {', '.join(FIELD_TYPES)}")
        for name in ("nulls", "duplicates"):
            rate = getattr(self, name)
            if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
                raise InvalidScenario(f"{where}.{name}", rate, "must be a rate from 0 to 1",
                                      f"write {name}: 0.1 (one event in ten)")
        ways = [k for k, v in (("choices", self.choices), ("faker", self.faker),
                               ("min", self.low), ("max", self.high)) if v is not None]
        if len(ways) > 1 and ("choices" in ways or "faker" in ways):
            raise InvalidScenario(where, ways, "draws in more than one way",
                                  "give choices, or faker, or min/max")
        if self.choices is not None:
            if not isinstance(self.choices, tuple) or not self.choices:
                raise InvalidScenario(f"{where}.choices", self.choices, "must be a non-empty list",
                                      "write choices: [a, b, c]")
            for value in self.choices:
                if not _holds(self.type, value):
                    raise InvalidScenario(f"{where}.choices", value, f"is not a {self.type}",
                                          f"give {self.type} values only (nulls: for nulls)")
        if self.faker is not None and (self.type != "string" or not isinstance(self.faker, str)
                                       or not self.faker.isidentifier()):
            raise InvalidScenario(f"{where}.faker", self.faker,
                                  "must name a Faker provider of a string field",
                                  "write type: string, faker: user_name")
        for key, bound in (("min", self.low), ("max", self.high)):
            if bound is not None and (self.type not in DEFAULT_RANGE or not _holds(self.type, bound)):
                raise InvalidScenario(f"{where}.{key}", bound, f"does not bound a {self.type} field",
                                      "give min/max numbers for int or float fields")
        low, high = self.bounds
        if low > high:
            raise InvalidScenario(f"{where}.min", low, f"must not exceed max={high}",
                                  "swap them")

    @property
    def bounds(self) -> tuple[int | float, int | float]:
        """The ``[low, high]`` range of a number field (its default when not declared)."""
        low, high = DEFAULT_RANGE.get(self.type, (0, 0))
        return (low if self.low is None else self.low, high if self.high is None else self.high)


__all__ = ["DEFAULT_RANGE", "FIELD_TYPES", "FieldSpec"]
