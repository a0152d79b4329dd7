"""A divergence made small: the diverging stream shrunk, confirmed on the target, with its
cause read from the job's plan.

1. The job's plan is read where the target has one (``Target.plan``: a Spark job,
   :mod:`windtunnel.conformance.job_plan`): the fields it reads are kept in every shrunk
   event, and :func:`~windtunnel.conformance.cause.cause_lines` names what differs from
   the spec.
2. The failing stream runs alone on the target, in a query of its own where the target
   can (``Target.solo``: candidates never share a query, a query's watermark being
   global): its time is the cost of one candidate, its outputs what stand-ins must match.
3. Stand-ins (unless ``stand_in`` is None): the spec as the plan reads it
   (:func:`~windtunnel.conformance.cause.plan_reading`), then the registered stand-in
   profile (``stand_in``) or, with :data:`DETECT`, the spec's
   variants (:mod:`windtunnel.conformance.stand_ins`) whose outputs equal the target's on
   the failing stream. Shrinking runs on the first such stand-in (the oracle: milliseconds a
   call) and the small stream is confirmed on the target; the next stand-in is tried if the
   target does not fail it.
4. Otherwise shrinking runs on the target itself, its chunks sized to the measured cost
   (:mod:`windtunnel.conformance.shrink`), the events behind the divergence cut first
   (:mod:`windtunnel.conformance.focus`).

Every call is made within ``seconds``; the failure reported is a stream the target was seen
to fail, with the run and mismatch of that very call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from windtunnel.conformance.cause import cause_lines, plan_reading
from windtunnel.conformance.focus import focus_cuts
from windtunnel.conformance.judge import Judge, Verdict
from windtunnel.conformance.mismatch import Mismatch, compare_run
from windtunnel.conformance.shrink import Shrunk, shrink
from windtunnel.conformance.stand_ins import VariantTarget, variants
from windtunnel.conformance.targets import OracleTarget, Target, TargetRun
from windtunnel.oracle.model.errors import WindtunnelError
from windtunnel.oracle.model.results import Output
from windtunnel.oracle.model.stream import events_of
from windtunnel.oracle.scenario import Scenario

DETECT = "detect"
"""``stand_in`` value: find the stand-in among the spec's variants on the failing stream
(:mod:`windtunnel.conformance.stand_ins`), for a target without a registered one."""

DETECTED = 3
"""Matching variants tried in turn (one may match the failing stream by coincidence)."""


@dataclass(frozen=True, slots=True)
class Failure:
    """The shrunk counterexample, what the oracle and the target did on it, how shrinking
    went (``shrunk_on``: the target's name or ``stand-in <profile>``) and the cause read
    from the target's plan (``cause``: lines, empty without a plan)."""

    original: Scenario
    scenario: Scenario
    expected: tuple[Output, ...]
    run: TargetRun
    mismatch: Mismatch
    shrunk_on: str
    shrink_rounds: int
    shrink_calls: int
    shrink_seconds: float
    cause: tuple[str, ...] = ()


def read_plan(target: Target, scenario: Scenario) -> Any:
    """The target's plan for ``scenario`` (``Target.plan``), or None: none, or unreadable
    (a plan only names the cause; the check goes on without it)."""
    plan = getattr(target, "plan", None)
    if not callable(plan):
        return None
    try:
        return plan(scenario)
    except (WindtunnelError, ValueError, AttributeError):
        return None


def kept_fields(target: Target, plan: Any, scenario: Scenario) -> frozenset[str]:
    """Fields no shrunk event loses: those the plan reads; every field of the stream for a
    target with a plan that could not be read; none for a target without plans."""
    if plan is not None:
        return frozenset(plan.reads)
    if callable(getattr(target, "plan", None)):
        return frozenset(k for e in events_of(scenario.items) for k in e.payload)
    return frozenset()


def _solo(judge: Judge) -> Judge:
    solo = getattr(judge.target, "solo", None)
    return Judge(solo(), judge.profile, judge.compare) if callable(solo) else judge


def shrunk_failure(
    failing: Scenario,
    judge: Judge,
    *,
    stand_in: str | None,
    seconds: float,
    max_chunk: int | None = None,
    found_alone: bool = False,
    alone_s: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Failure:
    """``failing`` (a stream ``judge`` found diverging) shrunk within ``seconds`` as the
    module docstring says; ``max_chunk`` caps the candidates per target call;
    ``found_alone``: ``failing`` was found in a call of its own (it is not run alone again),
    which took ``alone_s`` (None: unknown, e.g. the call started the engine too)."""
    started = clock()
    plan = read_plan(judge.target, failing)
    keep = kept_fields(judge.target, plan, failing)
    target = _solo(judge)
    found = judge.known(failing)
    cost: float | None
    if found_alone and found is not None:
        (mismatch, theirs), cost = found, alone_s
        target.remember(failing, found)
    else:
        before = clock()
        ((mismatch, theirs),) = target.judge([failing])
        cost = clock() - before
    if not mismatch:  # it diverges only beside other scenarios: shrink as it was found
        target = judge
        known = judge.known(failing)
        if known is not None:
            mismatch, theirs = known
    result: Shrunk | None = None
    shrunk_on = judge.target.name
    for proxy in _stand_ins(failing, plan, judge, stand_in, theirs):
        stand = Judge(proxy, judge.profile, judge.compare)
        left = seconds - (clock() - started)
        candidate = shrink(failing, stand.fails, max_seconds=max(left - (cost or 0.0), 0.0),
                           clock=clock, keep_fields=keep, focus=_focus(stand))
        if candidate.scenario is failing:
            continue  # nothing smaller fails on this stand-in
        if clock() - started + (cost or 0.0) > seconds:
            break  # no time left to confirm it on the target
        if target.fails_or_not_run([candidate.scenario])[0]:
            result, shrunk_on = candidate, f"stand-in {proxy.name}"
            break
    if result is None:
        left = seconds - (clock() - started)
        result = shrink(failing, target.fails_or_not_run, max_seconds=left, clock=clock,
                        first_cost_s=cost, max_chunk=max_chunk, keep_fields=keep,
                        focus=_focus(target))
    scenario = result.scenario
    verdict: Verdict | None = target.known(scenario)
    if verdict is None or not verdict[0]:
        verdict = (mismatch, theirs) if scenario is failing else target.judge([scenario])[0]
    return Failure(
        failing, scenario, judge.expected(scenario), verdict[1], verdict[0], shrunk_on,
        result.rounds, result.calls, clock() - started,
        tuple(cause_lines(plan, failing)) if plan is not None else (),
    )


def _focus(judge: Judge) -> Callable[[Scenario], list[Scenario]]:
    return lambda scenario: focus_cuts(scenario, judge.mismatch_of(scenario))


def _stand_ins(failing: Scenario, plan: Any, judge: Judge, stand_in: str | None,
               theirs: TargetRun) -> list[Target]:
    """The stand-ins to shrink on, in order (module docstring), each producing the
    target's outputs ``theirs`` on ``failing``."""
    found: list[Target] = []
    if plan is not None and stand_in is not None:
        reading = plan_reading(plan, failing)
        if reading is not None:
            label, change = reading
            proxy = VariantTarget(label, change, judge.profile,
                                  reports_drops=judge.target.reports_drops,
                                  reports_timing=judge.target.reports_timing)
            if _matches(proxy, failing, judge, theirs):
                found.append(proxy)
    if stand_in == DETECT:
        detected = 0
        for variant in variants(failing, judge.profile):
            proxy = replace(variant, reports_drops=judge.target.reports_drops,
                            reports_timing=judge.target.reports_timing)
            if _matches(proxy, failing, judge, theirs):
                found.append(proxy)
                detected += 1
                if detected == DETECTED:
                    break
    elif stand_in is not None:
        registered = OracleTarget(stand_in, name=f"oracle:{stand_in}",
                                  reports_drops=judge.target.reports_drops,
                                  reports_timing=judge.target.reports_timing)
        if _matches(registered, failing, judge, theirs, timing=False):
            found.append(registered)
    return found


def _matches(proxy: Target, failing: Scenario, judge: Judge, theirs: TargetRun,
             timing: bool | None = None) -> bool:
    """Whether ``proxy``'s outputs on ``failing`` equal the target's ``theirs`` (as
    compared: micro-batches too where the target reports them, unless ``timing`` is False)."""
    try:
        (ours,) = proxy.run_many([failing])
    except WindtunnelError:
        return False
    final_by = failing.query.aggregate_by if judge.compare == "final" else None
    return not compare_run(
        ours.outputs, ours.micro_batches or (), theirs, drops=judge.target.reports_drops,
        timing=judge.target.reports_timing if timing is None else timing, final_by=final_by)
