"""The ``tenzir`` target against the real engine: differential properties per window kind.

Each test runs generated streams for a spec on Tenzir (one engine process per spec) and
under the default profile, and requires every scenario to agree (emissions and drops).
The short run here is ~20 scenarios per spec; the long run is
``python benchmarks/tenzir_agreement.py --examples 1000``. Skipped when the ``[tenzir]``
extra is not installed.
"""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.conformance.check import compare_run, describe_output
from windtunnel.conformance.generate import generate
from windtunnel.conformance.paced import Pacing, paced_variant
from windtunnel.conformance.targets import oracle_outputs, target_named
from windtunnel.conformance.targets.tenzir import tenzir_binary
from windtunnel.oracle.model.results import Drop, Emission
from windtunnel.oracle.scenario import parse_scenario

pytestmark = [
    pytest.mark.tenzir,
    pytest.mark.skipif(
        tenzir_binary() is None,
        reason="the tenzir engine is not installed (pip install 'windtunnel[tenzir]')",
    ),
]

AGG = {"n": "count()", "s": "sum(x)", "xs": "collect(x)", "lo": "min(x)",
       "d": "count_distinct(x)", "first_x": "first(x)", "last_x": "last(x)",
       "start": "window_start()", "end": "window_end()", "mean": "avg(x)"}

SPECS: dict[str, dict[str, Any]] = {
    "tumbling": {"window": {"kind": "fixed", "size": "10s"}, "aggregate": AGG},
    "tumbling-tolerance-group": {
        "window": {"kind": "fixed", "size": "10s", "tolerance": "5s"}, "group_by": ["k"],
        "aggregate": AGG},
    "hopping-tolerance": {
        "window": {"kind": "fixed", "size": "10s", "every": "4s", "tolerance": "3s"},
        "group_by": ["k"], "aggregate": AGG},
    "hopping-pass-through": {"window": {"kind": "fixed", "size": "6s", "every": "3s"}},
    "nested-on": {"window": {"kind": "fixed", "size": "10s", "on": "meta.time"},
                  "aggregate": {"n": "count()"}},
    "session": {"window": {"kind": "session", "gap": "10s"}, "aggregate": AGG},
    "session-tolerance": {"window": {"kind": "session", "gap": "10s", "tolerance": "8s"},
                          "group_by": ["k"], "aggregate": AGG},
    "session-duration-cap": {"window": {"kind": "session", "gap": "10s", "max_duration": "15s",
                                        "tolerance": "4s"}, "aggregate": AGG},
    "session-event-cap": {"window": {"kind": "session", "gap": "10s", "max_events": 3},
                          "group_by": ["k"], "aggregate": AGG},
    "session-pass-through": {"window": {"kind": "session", "gap": "5s"}, "group_by": ["k"]},
    "count-tumbling": {"window": {"kind": "count", "count": 3}, "aggregate": AGG},
    "count-hopping": {"window": {"kind": "count", "count": 4, "every": 2}, "group_by": ["k"],
                      "aggregate": AGG},
    "count-pass-through": {"window": {"kind": "count", "count": 2}, "group_by": ["k"]},
    "trailing": {"window": {"kind": "trailing", "size": "10s"}, "aggregate": AGG},
    "trailing-every": {"window": {"kind": "trailing", "size": "10s", "every": "4s"},
                       "group_by": ["k"], "aggregate": AGG},
    "trailing-pass-through": {"window": {"kind": "trailing", "size": "5s"}},
    "trailing-tolerance": {"window": {"kind": "trailing", "size": "10s", "tolerance": "4s"},
                           "group_by": ["k"], "aggregate": AGG},
    "trailing-every-trigger": {
        "window": {"kind": "trailing", "size": "10s", "every": "3s", "trigger": "x >= 3"},
        "aggregate": AGG},
    "trailing-count": {"window": {"kind": "trailing", "count": 3}, "aggregate": AGG},
    "trailing-count-every-trigger": {
        "window": {"kind": "trailing", "count": 4, "every": 2, "trigger": "x != 4"},
        "group_by": ["k"], "aggregate": AGG},
    "trailing-count-pass-through": {"window": {"kind": "trailing", "count": 2,
                                               "trigger": "x > 2"}},
}


@pytest.fixture(scope="module")
def tenzir() -> Any:
    return target_named("tenzir")


@pytest.mark.parametrize("name", list(SPECS))
def test_engine_and_default_profile_agree(tenzir: Any, name: str) -> None:
    spec = parse_scenario({"name": name, **SPECS[name], "input": []})
    scenarios = list(generate(spec, 20, seed=7))
    runs = tenzir.run_many(scenarios)
    for scenario, got in zip(scenarios, runs, strict=True):
        want = oracle_outputs(scenario)
        mismatch = compare_run(want, [None] * len(want), got, drops=True, timing=False)
        lines = [f"oracle only: {describe_output(o)}" for o in mismatch.missing]
        lines += [f"tenzir only: {describe_output(o)}" for o in mismatch.unexpected]
        assert not mismatch, f"{scenario.name}:\n" + "\n".join(lines)


IDLE_SPECS: dict[str, dict[str, Any]] = {
    "fixed-idle": {"window": {"kind": "fixed", "size": "10s", "every": "5s", "tolerance": "2s",
                              "idle_timeout": "300ms"}, "group_by": ["k"], "aggregate": AGG},
    "session-idle": {"window": {"kind": "session", "gap": "5s", "tolerance": "3s",
                                "idle_timeout": "300ms"}, "group_by": ["k"], "aggregate": AGG},
}


@pytest.mark.parametrize("name", list(IDLE_SPECS))
def test_idle_timeout_paced_in_wall_time_agrees(tenzir: Any, name: str) -> None:
    """Stable paced scenarios (conformance/paced.py): gaps well short of or well past the
    idle timeout, so Tenzir's late-firing timer cannot change the outcome (~10 s)."""
    spec = parse_scenario({"name": name, **IDLE_SPECS[name], "input": []})
    pacing = Pacing(300)
    scenarios = [p for s in generate(spec, 8, seed=3) if (p := paced_variant(s, pacing))]
    assert len(scenarios) >= 5
    assert any(o.reason == "idle_timeout" for s in scenarios for o in oracle_outputs(s)
               if isinstance(o, Emission))
    runs = tenzir.run_many(scenarios)
    for scenario, got in zip(scenarios, runs, strict=True):
        want = oracle_outputs(scenario)
        mismatch = compare_run(want, [None] * len(want), got, drops=True, timing=False)
        lines = [f"oracle only: {describe_output(o)}" for o in mismatch.missing]
        lines += [f"tenzir only: {describe_output(o)}" for o in mismatch.unexpected]
        assert not mismatch, f"{scenario.name} {scenario.items}:\n" + "\n".join(lines)


def _run(tenzir: Any, block: dict[str, Any]) -> list[Any]:
    (got,) = tenzir.run_many([parse_scenario({"name": "one", **block})])
    return list(got.outputs)


def test_a_duration_capped_session_closes_and_the_next_event_opens_one(tenzir: Any) -> None:
    """gap 10 s, max_duration 2 s, events 0, 3000, 4000: 4000 joins the session of 3000."""
    block = {"window": {"kind": "session", "gap": "10s", "max_duration": "2s"},
             "aggregate": {"n": "count()"}, "input": [{"ts": 0}, {"ts": 3000}, {"ts": 4000}]}
    windows = sorted((o.window.start_ms, o.window.end_ms, o.row["n"]) for o in _run(tenzir, block))
    assert windows == [(0, 0, 1), (3000, 4000, 2)]
    scenario = parse_scenario({"name": "one", **block})
    assert sorted((o.window.start_ms, o.window.end_ms, o.row["n"])
                  for o in oracle_outputs(scenario) if isinstance(o, Emission)) == windows


def test_a_partial_count_window_reports_its_nominal_range(tenzir: Any) -> None:
    block = {"window": {"kind": "count", "count": 2}, "aggregate": {"n": "count()"},
             "input": [{"i": i} for i in range(5)]}
    last = max(_run(tenzir, block), key=lambda o: o.window.start_offset)
    assert (last.window.start_offset, last.window.end_offset, last.row["n"]) == (4, 6, 1)


def test_late_and_null_events_are_reported_as_drops(tenzir: Any) -> None:
    block = {"window": {"kind": "fixed", "size": "10s"}, "aggregate": {"n": "count()"},
             "input": [{"ts": 0}, {"ts": 12000}, {"ts": 1000}, {"ts": None}, {"ts": True}]}
    drops = sorted((o.seq, o.reason) for o in _run(tenzir, block) if isinstance(o, Drop))
    assert drops == [(2, "late"), (3, "null_time"), (4, "not_a_time")]


def test_processing_time_windows_are_refused() -> None:
    from windtunnel.conformance.tql import window_options
    from windtunnel.oracle.model.errors import InvalidSpec

    spec = parse_scenario({"window": {"kind": "fixed", "size": "1s", "on": "now()"}, "input": []})
    with pytest.raises(InvalidSpec, match="event-time windows only"):
        window_options(spec.query)
