"""Comparing profiles: one scenario's stream through several profiles, window by window.

Each profile runs the scenario with its own rules plus the scenario's ``rules:``
overrides (the ``expect`` block is ignored: it belongs to the scenario's own profile).
Outputs are lined up by key: an emission by (window bounds, group), a drop by the
event's seq. A cell is what one profile did for a key: the emitted rows with reason
and ``after_seq`` (or only the rows with ``timing=False``), or a drop reason
(``delivered`` when the event was not dropped).

Causes: for a key where a profile differs from the first (the baseline), among the
rules whose values differ between the two: (1) each rule whose value, set alone in
the baseline, gives the other profile's cell (how: ``rule``); else (2) the rules the
other profile needs (setting one back to the baseline's value changes its cell),
when together in the baseline they give its cell (``rules``); else those needed
rules, or all differing ones, as an ``interaction`` -- or, when the two profiles run the
window kind with different operators (kdb, timeplus and ekuiper have their own), as
``operator`` with the needed rules. Profiles with equal rules that still differ use
different operators (``operator``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from windtunnel.oracle.engine import operator_factory, replay
from windtunnel.oracle.model.errors import InvalidInput, InvalidScenario
from windtunnel.oracle.model.results import Drop, Emission, Output
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.scenario import parse_scenario

Key = tuple[str, str, str]
"""("emit", window json, group json) or ("drop", seq, "")."""
Cell = tuple[str, ...]
"""What a profile did for a key: sorted descriptions; () = nothing."""
NOT_RUN: Cell = ("n/a",)
"""The cell of a profile that could not run the scenario (never counted as a difference)."""


@dataclass(frozen=True, slots=True)
class ProfileRun:
    """One profile's run: its rule values, cells by key, or the error that stopped it."""

    profile: str
    rules: Mapping[str, str]
    cells: Mapping[Key, Cell] = field(default_factory=dict)
    error: str | None = None
    operator: str = ""


@dataclass(frozen=True, slots=True)
class Line:
    """One key across profiles: ``cells`` by profile, ``causes`` by differing profile."""

    key: Key
    cells: Mapping[str, Cell]
    causes: Mapping[str, tuple[str, ...]]
    cause_kind: Mapping[str, str]

    @property
    def differs(self) -> bool:
        """Whether the profiles that ran disagree (profiles not run are not compared)."""
        return len({c for c in self.cells.values() if c != NOT_RUN}) > 1

    def to_json(self) -> dict[str, Any]:
        kind, first, second = self.key
        data: dict[str, Any] = {"type": kind}
        if kind == "emit":
            data["window"] = json.loads(first)
            data["group"] = json.loads(second)
        else:
            data["seq"] = int(first)
        data["cells"] = {p: list(c) for p, c in self.cells.items()}
        data["differs"] = self.differs
        data["causes"] = {
            p: {"rules": list(r), "how": self.cause_kind[p]} for p, r in self.causes.items()
        }
        return data


@dataclass(frozen=True, slots=True)
class Comparison:
    """Every key of every profile's run, baseline first."""

    scenario: str
    runs: tuple[ProfileRun, ...]
    lines: tuple[Line, ...]

    @property
    def differences(self) -> list[Line]:
        """The lines where the profiles that ran disagree."""
        return [line for line in self.lines if line.differs]

    @property
    def ran(self) -> list[str]:
        """The profiles that ran, in order."""
        return [r.profile for r in self.runs if r.error is None]

    @property
    def not_run(self) -> list[ProfileRun]:
        """The profiles that could not run the scenario (each with its error)."""
        return [r for r in self.runs if r.error is not None]

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "profiles": [
                {"name": r.profile, "rules": dict(r.rules), "error": r.error} for r in self.runs
            ],
            "lines": [line.to_json() for line in self.lines],
            "differences": len(self.differences),
            "not_run": [r.profile for r in self.not_run],
        }


def cells_of(outputs: Sequence[Output], timing: bool = True) -> dict[Key, Cell]:
    """Outputs grouped by key; every seq dropped anywhere is looked up as ``delivered``."""
    grouped: dict[Key, list[str]] = {}
    for output in outputs:
        if isinstance(output, Emission):
            key: Key = (
                "emit",
                json.dumps(output.window.to_json(), sort_keys=True),
                json.dumps(output.group, sort_keys=True, default=str),
            )
            text = " ".join(f"{k}={json.dumps(v, default=str)}" for k, v in output.row.items())
            if timing:
                text += f" ({output.reason} after #{output.after_seq})"
            grouped.setdefault(key, []).append(text)
        elif isinstance(output, Drop):
            grouped.setdefault(("drop", str(output.seq), ""), []).append(output.reason)
    return {k: tuple(sorted(v)) for k, v in grouped.items()}


def _cell(cells: Mapping[Key, Cell], key: Key) -> Cell:
    if key in cells:
        return cells[key]
    return ("delivered",) if key[0] == "drop" else ()


def _run(data: Mapping[str, Any], profile: str, rules: Mapping[str, Any], timing: bool) -> ProfileRun:
    scenario_data = {k: v for k, v in data.items() if k != "expect"}
    scenario_data["profile"] = profile
    scenario_data["rules"] = dict(rules)
    try:
        scenario = parse_scenario(scenario_data)
        outputs = replay(scenario).outputs
    except InvalidInput as exc:
        try:
            effective = profile_named(profile).rules.with_overrides(dict(rules)).as_dict()
        except InvalidInput:
            effective = {}
        return ProfileRun(profile, effective, error=str(exc))
    factory = operator_factory(type(scenario.query.window), profile)
    operator = getattr(factory, "__qualname__", "")
    return ProfileRun(profile, scenario.rules.as_dict(), cells_of(outputs, timing), None, operator)


def compare(data: Mapping[str, Any], profiles: Sequence[str], *, timing: bool = True) -> Comparison:
    """Run scenario ``data`` (the decoded file) under each of ``profiles`` and line up
    the outputs. Raises InvalidScenario for fewer than two profiles, InvalidSpec for an
    unknown profile, and the scenario's own errors when it is invalid under all of them."""
    if not isinstance(data, Mapping):
        raise InvalidScenario("scenario", data, "must be a mapping", "give a scenario file")
    names = list(dict.fromkeys(profiles))
    if len(names) < 2:
        raise InvalidScenario(
            "--profiles", ",".join(profiles), "needs at least two profiles", "write tenzir,flink"
        )
    for name in names:
        profile_named(name)
    overrides = data.get("rules") or {}
    if not isinstance(overrides, Mapping):
        raise InvalidScenario("rules", overrides, "must be a mapping", "write rules: {close_at: passes}")
    runs = tuple(_run(data, name, overrides, timing) for name in names)
    if all(r.error is not None for r in runs):
        replay(parse_scenario({**data, "profile": names[0]}))  # raises the scenario's own error
    base = runs[0]
    keys = sorted({k for r in runs for k in r.cells}, key=_order)
    cache: dict[tuple[str, frozenset[tuple[str, str]]], ProfileRun] = {}

    def variant(profile: str, rules: Mapping[str, str]) -> ProfileRun:
        ident = (profile, frozenset(rules.items()))
        if ident not in cache:
            cache[ident] = _run(data, profile, {**overrides, **rules}, timing)
        return cache[ident]

    lines = []
    for key in keys:
        cells = {r.profile: (NOT_RUN if r.error else _cell(r.cells, key)) for r in runs}
        causes: dict[str, tuple[str, ...]] = {}
        kinds: dict[str, str] = {}
        for run in runs[1:]:
            if base.error or run.error or cells[run.profile] == cells[base.profile]:
                continue
            causes[run.profile], kinds[run.profile] = _causes(key, base, run, variant)
        lines.append(Line(key, cells, causes, kinds))
    return Comparison(str(data.get("name", "scenario")), runs, tuple(lines))


def _causes(
    key: Key, base: ProfileRun, other: ProfileRun, variant: Any
) -> tuple[tuple[str, ...], str]:
    """The rules that make ``other``'s cell for ``key`` differ from ``base``'s."""
    want = _cell(other.cells, key)
    differing = [r for r in base.rules if base.rules[r] != other.rules.get(r)]
    if not differing:
        return (), "operator"

    def cell(run: ProfileRun) -> Cell | None:
        return None if run.error else _cell(run.cells, key)

    # 1. a single rule of the other profile, set in the baseline, gives the other's cell
    single = tuple(
        r for r in differing if cell(variant(base.profile, {r: other.rules[r]})) == want
    )
    if single:
        return single, "rule"
    # 2. the rules the other profile needs: setting one back to the baseline's value
    #    changes the other's cell; together, set in the baseline, they give it
    def reset(rule: str) -> Cell | None:
        return cell(variant(other.profile, {rule: base.rules[rule]}))

    # (a rule the other profile cannot take back, an input error there, is not counted)
    needed = tuple(r for r in differing if reset(r) not in (want, None))
    if needed and cell(variant(base.profile, {r: other.rules[r] for r in needed})) == want:
        return needed, "rules"
    if base.operator != other.operator:
        return needed, "operator"
    return needed or tuple(differing), "interaction"


def _order(key: Key) -> tuple[int, int, int, str]:
    kind, first, second = key
    if kind == "drop":
        return (1, int(first), 0, "")
    window = json.loads(first)
    start = window.get("start_ms", window.get("start_offset", 0))
    end = window.get("end_ms", window.get("end_offset", 0))
    return (0, start, end, second)
