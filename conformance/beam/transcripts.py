"""Beam's own trigger transcripts, read from the installed ``apache-beam`` and run on the
``beam`` profile step by step, as Beam's ``TriggerDriverTranscriptTest`` runs them.

The wheel ships ``apache_beam/testing/data/trigger_transcripts.yaml``: named cases of a
window function, a trigger, options and a transcript of steps (``input: [times]`` one bundle
of elements whose values are their timestamps, ``watermark: T``, ``expect: [panes]`` the
outputs of the steps since the last ``expect``, ``state:`` windows present, absent or
tombstoned). Numbers are "integral units of the finest granularity" (Beam's comment):
milliseconds here. A case with an ``error:`` key is one Beam's harness must reject.

:func:`load_cases` converts every case (:class:`Case`: its scenario data, steps and why it
is left out, if it is); :func:`run_case` runs one and returns what did not hold. The file is
located without importing ``apache_beam`` (:func:`transcripts_path`).
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from windtunnel.oracle.engine import operator_for
from windtunnel.oracle.model.errors import EngineUnavailable
from windtunnel.oracle.model.results import Emission, Output, pane_of
from windtunnel.oracle.model.stream import Item, checked
from windtunnel.oracle.profiles.beam.operator import BeamOperator
from windtunnel.oracle.scenario import Scenario, parse_scenario
from windtunnel.oracle.windows.driver import Driver

TRANSCRIPTS = "testing/data/trigger_transcripts.yaml"
"""The transcripts' path inside the ``apache_beam`` package."""

TEST_ONLY_FN = "CustomTimestampingFixedWindowsWindowFn"
"""The window function Beam's ``trigger_test.py`` defines for three cases: ``FixedWindows``
whose ``get_transformed_output_time`` adds 100, which only the
``OUTPUT_AT_EARLIEST_TRANSFORMED`` combiner calls."""

_COMBINERS = {"OUTPUT_AT_EOW": "end_of_window", "OUTPUT_AT_EARLIEST": "earliest",
              "OUTPUT_AT_LATEST": "latest"}
_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w.])")


@dataclass(frozen=True, slots=True)
class Case:
    """One transcript: ``name`` (``#2`` appended to a repeated name), the ``error`` Beam's
    harness must raise (None for a positive case), the scenario ``data`` (None when left
    out), its ``steps`` as ``(action, value)`` and ``left_out``: why it is not run."""

    name: str
    error: str | None
    data: Mapping[str, Any] | None
    steps: tuple[tuple[str, Any], ...]
    left_out: str = ""


def transcripts_path() -> Path:
    """The installed ``apache-beam``'s transcripts; EngineUnavailable without the package."""
    spec = importlib.util.find_spec("apache_beam")
    if spec is None or spec.origin is None:
        raise EngineUnavailable(
            "Beam's trigger transcripts come with apache-beam; install the beam extra: "
            'pip install "windtunnel[beam]"')
    return Path(spec.origin).parent / TRANSCRIPTS


def load_cases(path: Path | None = None) -> list[Case]:
    """Every case of the transcripts file, converted (see :func:`convert`)."""
    text = (path or transcripts_path()).read_text(encoding="utf-8")
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for case in yaml.load_all(text, Loader=yaml.SafeLoader):  # as Beam's trigger_test reads it
        if not case:
            continue
        name = case.get("name", "unnamed")
        seen[name] = seen.get(name, 0) + 1
        cases.append(convert(case, name if seen[name] == 1 else f"{name}#{seen[name]}"))
    return cases


def _ms(text: str) -> str:
    """Bare numbers (the transcripts' units) as milliseconds in Beam's spelling."""
    return _NUMBER.sub(r"\1ms", text)


def convert(case: Mapping[str, Any], name: str) -> Case:
    """One transcript as a ``beam`` scenario. Beam's harness reads ``window_fn`` (default
    ``GlobalWindows``), ``trigger_fn`` (default ``Default``), ``accumulation_mode`` (default
    ``ACCUMULATING``), ``timestamp_combiner`` (default ``OUTPUT_AT_EOW``) and
    ``allowed_lateness`` (default 0); so does this. The watermark moves only by the
    transcript's steps and nothing follows its last step (rules ``beam_watermark:
    injected``, ``end_of_input: discard``). The test-only window function runs as
    ``FixedWindows`` where its one difference is not called, and is left out where it is."""
    steps = tuple(next(iter(step.items())) for step in case.get("transcript", []))
    window_fn = str(case.get("window_fn", "GlobalWindows"))
    combiner = str(case.get("timestamp_combiner", "OUTPUT_AT_EOW")).upper()
    error = case.get("error")
    if window_fn.startswith(TEST_ONLY_FN):
        if combiner not in _COMBINERS:
            return Case(name, error, None, steps,
                        f"{TEST_ONLY_FN} is defined in Beam's trigger_test.py, and its "
                        f"{combiner} output times are the function's own (+100)")
        window_fn = "FixedWindows" + window_fn[len(TEST_ONLY_FN):]
    if combiner not in _COMBINERS:
        return Case(name, error, None, steps, f"timestamp_combiner {combiner} is not modelled")
    trigger = str(case.get("trigger_fn", "Default"))
    trigger = re.sub(r"AfterProcessingTime\(([^)]*)\)",
                     lambda m: f"AfterProcessingTime({_ms(m.group(1))})", trigger)
    items: list[dict[str, Any]] = []
    for action, value in steps:
        if action == "input":
            items.append({"batch": [{"ts": t} for t in value]})
        elif action == "watermark":
            items.append({"watermark": value})
    data = {
        "name": f"beam-transcript-{name}",
        "profile": "beam",
        "rules": {"beam_watermark": "injected", "end_of_input": "discard"},
        "window": {
            "kind": "beam",
            "window_fn": _ms(window_fn if "(" in window_fn else f"{window_fn}()"),
            "trigger": trigger,
            "accumulation": str(case.get("accumulation_mode", "ACCUMULATING")).lower(),
            "allowed_lateness": case.get("allowed_lateness", 0),
            "timestamp_combiner": _COMBINERS[combiner],
            "on": "ts",
        },
        "aggregate": {"values": "collect(ts)"},
        "input": items,
    }
    return Case(name, error, data, steps)


def pane_info(emission: Emission) -> dict[str, Any]:
    """An emission as Beam's harness describes a pane (``_windowed_value_info``): window
    ``[start, max_timestamp]``, sorted values, timestamp, index, nonspeculative_index,
    early, late, final."""
    pane = pane_of(emission)
    assert pane is not None
    start, end = emission.window.start_ms, emission.window.end_ms
    assert start is not None and end is not None
    return {
        "window": [start, end - 1],
        "values": sorted(emission.row["values"]),
        "timestamp": pane.timestamp_ms,
        "index": pane.index,
        "nonspeculative_index": pane.nonspeculative_index,
        "early": pane.timing == "early",
        "late": pane.timing == "late",
        "final": pane.last,
    }


def _state_of(operator: BeamOperator) -> dict[str, set[tuple[int, int]]]:
    """The windows of every key: ``present`` (known, trigger not finished), ``tombstone``
    (known, trigger finished); any other window is ``absent``. Windows as ``[start, max]``."""
    found: dict[str, set[tuple[int, int]]] = {"present": set(), "tombstone": set()}
    for key in operator.keys.values():
        for ws in key.windows.values():
            found["tombstone" if ws.finished else "present"].add((ws.start_ms, ws.end_ms - 1))
    return found


def run_case(case: Case) -> list[str]:
    """Run a converted case as Beam's ``TriggerDriverTranscriptTest`` does; the problems
    found, each starting ``Unexpected output``, ``Unmatched output`` or ``State``, in step
    order (empty: the case passed)."""
    assert case.data is not None
    scenario = parse_scenario(case.data)
    driver = _driver(scenario)
    items = iter(checked(scenario.items, scenario.start_wall_ms))
    pending: list[dict[str, Any]] = []
    problems: list[str] = []
    for index, (action, value) in enumerate(case.steps):
        where = f"step {index} ({action})"
        if action != "expect" and pending:
            problems.append(f"Unexpected output before {where}: {pending}")
            pending = []
        if action in ("input", "watermark"):
            out: list[Output] = []
            driver.feed(next(items), out)
            pending += [pane_info(o) for o in out if isinstance(o, Emission)]
        elif action == "expect":
            for expected in value:
                match = next((c for c in pending if all(
                    c[k] == expected[k] for k in c if k in expected)), None)
                if match is None:
                    problems.append(f"Unmatched output at {where}: {expected} not in {pending}")
                else:
                    pending.remove(match)
        elif action == "state":
            assert isinstance(driver.operator, BeamOperator)
            problems += _state_problems(_state_of(driver.operator), value, where)
    if pending:
        problems.append(f"Unexpected output at the end: {pending}")
    return problems


def _state_problems(found: Mapping[str, set[tuple[int, int]]], want: Mapping[str, Any],
                    where: str) -> list[str]:
    known = found["present"] | found["tombstone"]
    problems = []
    for kind, windows in want.items():
        for window in map(tuple, windows):
            held = window not in known if kind == "absent" else window in found[kind]
            if not held:
                now = next((k for k, ws in found.items() if window in ws), "absent")
                problems.append(f"State at {where}: window {list(window)} expected {kind}, "
                                f"the profile holds it {now}")
    return problems


def _driver(scenario: Scenario) -> Driver:
    return Driver(
        scenario.query,
        lambda q, ctx: operator_for(q, ctx, scenario.profile.name),
        scenario.rules,
        time_unit_ms=scenario.time_unit_ms,
        start_wall_ms=scenario.start_wall_ms,
        profile=scenario.profile.name,
    )


def scenario_items(case: Case) -> Sequence[Item]:
    """The converted case's stream items (for tools that write it as a scenario file)."""
    assert case.data is not None
    return parse_scenario(case.data).items
