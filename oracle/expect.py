"""Expectations in scenario files, and checking a result against them.

An expected emission matches an actual one when its window and group are equal,
every column it names has that value (columns it omits are not checked), and any
of ``reason``, ``after_seq``, ``wall_ms``, ``partial`` it gives are equal, and so is every
field of a ``pane`` it gives (``{timing: early, index: 0}``; the beam profile's panes). Emissions
and drops are compared as multisets unless ``ordered: true``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from windtunnel.oracle.model.errors import InvalidScenario
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef, pane_of
from windtunnel.oracle.model.timeparse import parse_timestamp_ms

_NOT_GIVEN: Any = object()
EXPECT_KEYS = ("emissions", "drops", "ordered")
EMISSION_KEYS = ("window", "group", "row", "reason", "after_seq", "wall_ms", "partial", "pane")
DROP_KEYS = ("seq", "reason")
WINDOW_REF_KEYS = ("start_ms", "end_ms", "start_offset", "end_offset")
"""The keys an ``expect`` block, an expected emission, a drop and a window mapping accept."""
PANE_KEYS = ("timing", "index", "nonspeculative_index", "first", "last", "timestamp_ms")
"""The keys an expected emission's ``pane`` accepts (any subset is checked)."""


@dataclass(frozen=True, slots=True)
class ExpectedEmission:
    window: WindowRef
    group: Any
    row: Mapping[str, Any]
    reason: Any = _NOT_GIVEN
    after_seq: Any = _NOT_GIVEN
    wall_ms: Any = _NOT_GIVEN
    partial: Any = _NOT_GIVEN
    group_given: bool = True
    pane: Mapping[str, Any] | None = None

    def matches(self, actual: Emission) -> bool:
        if actual.window != self.window:
            return False
        if self.pane is not None:
            pane = pane_of(actual)
            have = {} if pane is None else pane.to_json()
            if any(key not in have or have[key] != value for key, value in self.pane.items()):
                return False
        if self.group_given and actual.group != self.group:
            return False
        for key, value in self.row.items():
            if key not in actual.row or actual.row[key] != value:
                return False
        return all(
            getattr(self, name) is _NOT_GIVEN or getattr(self, name) == getattr(actual, name)
            for name in ("reason", "after_seq", "wall_ms", "partial")
        )

    def describe(self) -> str:
        data: dict[str, Any] = {"window": self.window.to_json()}
        if self.group_given:
            data["group"] = self.group
        data["row"] = dict(self.row)
        for name in ("reason", "after_seq", "wall_ms", "partial"):
            if getattr(self, name) is not _NOT_GIVEN:
                data[name] = getattr(self, name)
        if self.pane is not None:
            data["pane"] = dict(self.pane)
        return json.dumps(data, default=str)


@dataclass(frozen=True, slots=True)
class Expectation:
    """``emissions``/``drops`` None means that part is not checked."""

    emissions: tuple[ExpectedEmission, ...] | None
    drops: tuple[tuple[int, str], ...] | None
    ordered: bool = False


def parse_expectation(data: Any, time_unit: str) -> Expectation:
    """The ``expect`` block; raises InvalidScenario naming ``expect.*`` fields."""
    if not isinstance(data, Mapping):
        raise InvalidScenario(
            "expect", data, "must be a mapping", "write expect: {emissions: [...], drops: [...]}"
        )
    for key in data:
        if key not in EXPECT_KEYS:
            raise InvalidScenario(
                f"expect.{key}", data[key], "unknown key", "use emissions, drops or ordered"
            )
    emissions = None
    if data.get("emissions") is not None:
        raw = data["emissions"]
        if not isinstance(raw, list):
            raise InvalidScenario(
                "expect.emissions", raw, "must be a list", "write emissions: [{window: [0, 10]}]"
            )
        emissions = tuple(
            _emission(e, f"expect.emissions[{i}]", time_unit) for i, e in enumerate(raw)
        )
    drops = None
    if data.get("drops") is not None:
        raw = data["drops"]
        if not isinstance(raw, list):
            raise InvalidScenario(
                "expect.drops", raw, "must be a list", "write drops: [{seq: 4, reason: late}]"
            )
        drops = tuple(_drop(d, f"expect.drops[{i}]") for i, d in enumerate(raw))
    ordered = data.get("ordered", False)
    if not isinstance(ordered, bool):
        raise InvalidScenario(
            "expect.ordered", ordered, "must be true or false", "write ordered: true"
        )
    return Expectation(emissions, drops, ordered)


def _emission(raw: Any, where: str, time_unit: str) -> ExpectedEmission:
    if not isinstance(raw, Mapping):
        raise InvalidScenario(
            where, raw, "must be a mapping", "write {window: [0, 600000], row: {n: 3}}"
        )
    for key in raw:
        if key not in EMISSION_KEYS:
            raise InvalidScenario(
                f"{where}.{key}", raw[key], "unknown key", f"use one of {', '.join(EMISSION_KEYS)}"
            )
    window = window_ref(raw.get("window"), f"{where}.window", time_unit)
    row = raw.get("row", {})
    if not isinstance(row, Mapping):
        raise InvalidScenario(f"{where}.row", row, "must be a mapping", "write row: {failures: 3}")
    pane = raw.get("pane")
    if pane is not None and (not isinstance(pane, Mapping) or set(pane) - set(PANE_KEYS)):
        raise InvalidScenario(f"{where}.pane", pane, "not a pane",
                              f"write pane: {{timing: early, index: 0}} (keys: {', '.join(PANE_KEYS)})")
    return ExpectedEmission(
        window=window,
        group=raw.get("group"),
        row=dict(row),
        reason=raw.get("reason", _NOT_GIVEN),
        after_seq=raw.get("after_seq", _NOT_GIVEN),
        wall_ms=raw.get("wall_ms", _NOT_GIVEN),
        partial=raw.get("partial", _NOT_GIVEN),
        group_given="group" in raw,
        pane=None if pane is None else dict(pane),
    )


def window_ref(raw: Any, where: str, time_unit: str) -> WindowRef:
    """``[start, end]`` (times in ``time_unit`` or ISO), or a mapping of start_ms/end_ms/offsets."""
    if isinstance(raw, list) and len(raw) == 2:
        return WindowRef(
            parse_timestamp_ms(raw[0], f"{where}[0]", time_unit),
            parse_timestamp_ms(raw[1], f"{where}[1]", time_unit),
        )
    if (
        isinstance(raw, Mapping)
        and raw
        and set(raw) <= set(WINDOW_REF_KEYS)
    ) and all(isinstance(v, int) and not isinstance(v, bool) for v in raw.values()):
        return WindowRef(**raw)
    raise InvalidScenario(
        where, raw, "not a window", "write [start, end] or {start_offset: 0, end_offset: 3}"
    )


def _drop(raw: Any, where: str) -> tuple[int, str]:
    if not isinstance(raw, Mapping) or set(raw) - set(DROP_KEYS) or "seq" not in raw:
        raise InvalidScenario(where, raw, "not a drop", "write {seq: 4, reason: late}")
    seq, reason = raw["seq"], raw.get("reason", "late")
    if isinstance(seq, bool) or not isinstance(seq, int):
        raise InvalidScenario(f"{where}.seq", seq, "must be an integer", "give the event's seq")
    if not isinstance(reason, str):
        raise InvalidScenario(f"{where}.reason", reason, "must be a string", "write reason: late")
    return (seq, reason)


def check(expectation: Expectation, outputs: Sequence[Output]) -> list[str]:
    """Human-readable differences between ``outputs`` and ``expectation`` (empty: it held)."""
    problems: list[str] = []
    if expectation.emissions is not None:
        actual = [o for o in outputs if isinstance(o, Emission)]
        problems += _match_emissions(list(expectation.emissions), actual, expectation.ordered)
    if expectation.drops is not None:
        got = [(o.seq, o.reason) for o in outputs if isinstance(o, Drop)]
        want = list(expectation.drops)
        if (got if expectation.ordered else sorted(got)) != (
            want if expectation.ordered else sorted(want)
        ):
            for seq, reason in want:
                if (seq, reason) not in got:
                    problems.append(f"missing drop: seq {seq} ({reason})")
            for seq, reason in got:
                if (seq, reason) not in want:
                    problems.append(f"unexpected drop: seq {seq} ({reason})")
            if not problems:
                problems.append(f"drops differ in order or count: expected {want}, got {got}")
    return problems


def _match_emissions(want: list[ExpectedEmission], got: list[Emission], ordered: bool) -> list[str]:
    from windtunnel.oracle.model.results import to_jsonl_line

    problems = []
    if ordered:
        for i in range(max(len(want), len(got))):
            if i >= len(got):
                problems.append(f"missing emission #{i}: {want[i].describe()}")
            elif i >= len(want):
                problems.append(f"unexpected emission #{i}: {to_jsonl_line(got[i])}")
            elif not want[i].matches(got[i]):
                problems.append(
                    f"emission #{i} differs:\n  expected {want[i].describe()}\n  actual   {to_jsonl_line(got[i])}"
                )
        return problems
    unmatched = list(got)
    for expected in want:
        for index, actual in enumerate(unmatched):
            if expected.matches(actual):
                del unmatched[index]
                break
        else:
            problems.append(f"missing emission: {expected.describe()}")
    problems += [f"unexpected emission: {to_jsonl_line(a)}" for a in unmatched]
    return problems
