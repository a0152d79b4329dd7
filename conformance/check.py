"""Checking a target against the oracle: the spec's own input, then generated streams,
then the first divergence shrunk to a small counterexample.

Expected outputs are the oracle's under ``profile`` (default: the spec's). Emissions
are compared as multisets of the contract's records without ``wall_ms``, ``after_seq``
and ``message`` (:mod:`windtunnel.conformance.differential`), or with every field for a
target whose ``exact`` attribute is true (windtunnel's own operator); drops only when the
target reports them; the micro-batch each emission came out in only when the target
reports timing (expected: the micro-batch of the event it followed, ``after_seq``).

With ``compare="final"`` (a sink that keeps one row per window: update mode into a merge
or Delta table) each side's emissions are first reduced to the last row of every window,
group and ``aggregate_by`` value (:func:`final_rows`), compared without ``reason``,
``partial`` and timing.

Targets run ``batch_size`` scenarios per call (default :data:`DEFAULT_BATCH_SIZE`: the
Spark targets put many scenarios in one streaming query, so a call's cost is mostly the
query's, not the scenarios'). Shrinking (:mod:`.shrink`) asks the
target about a whole round of candidate reductions per call, or asks a stand-in: an
oracle profile that behaves like the target (``spark`` for stock Spark), or, with
``stand_in=DETECT`` (a user's job), the first variant of the spec the target matches on the
failing stream (:mod:`.stand_ins`: another tolerance, a null filter, another rule value). The
stand-in is used only when it produces the target's very outputs on the failing stream; the
shrunk stream is then confirmed on the target, and if the target does not fail it,
shrinking starts again on the target itself, for the time left.
"""

from __future__ import annotations

import itertools
import json
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from windtunnel.conformance.differential import DEFAULT_IGNORED, canonical
from windtunnel.conformance.generate import MAX_EVENTS, generate
from windtunnel.conformance.shrink import Shrunk, shrink
from windtunnel.conformance.stand_ins import variants
from windtunnel.conformance.targets import (
    OracleTarget,
    Target,
    TargetRun,
    oracle_micro_batches_of,
    oracle_outputs,
)
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.results import Drop, Emission, Output
from windtunnel.oracle.model.stream import End
from windtunnel.oracle.model.timefmt import window_text
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.scenario import Scenario

COMPARES = ("rows", "final")
"""What is compared: every emitted row, or the last row per window (:func:`final_rows`)."""

FINAL_IGNORED = (*DEFAULT_IGNORED, "reason", "partial")
"""Fields a final-value comparison leaves out: a merge sink keeps the values only."""

DETECT = "detect"
"""``stand_in`` value: find the stand-in among the spec's variants on the failing stream
(:mod:`windtunnel.conformance.stand_ins`), for a target without a registered one."""

DETECTED = 3
"""Matching variants tried in turn (one may match the failing stream by coincidence)."""

DEFAULT_BATCH_SIZE = 200
"""Scenarios per target call: ``--examples 200`` plus the spec's own input in two Spark
calls (the job runner puts up to 200 scenarios in a query, the general operator 400)."""


@dataclass(frozen=True, slots=True)
class Late:
    """An emission both sides produced, in different micro-batches."""

    output: Emission
    expected_batch: int
    actual_batch: int


@dataclass(frozen=True, slots=True)
class Mismatch:
    """What differs for one scenario: outputs the oracle has and the target lacks
    (``missing``), the reverse (``unexpected``), and emissions in another micro-batch."""

    missing: tuple[Output, ...] = ()
    unexpected: tuple[Output, ...] = ()
    timing: tuple[Late, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.missing or self.unexpected or self.timing)


def _compared(outputs: Sequence[Output], drops: bool) -> list[Output]:
    return [o for o in outputs if isinstance(o, Emission) or (drops and isinstance(o, Drop))]


def _minus(
    left: Sequence[Output], right: Sequence[Output], ignored: tuple[str, ...] = DEFAULT_IGNORED
) -> tuple[Output, ...]:
    """The outputs of ``left`` that ``right`` lacks, as multisets of canonical records
    (without the ``ignored`` fields)."""
    counts = Counter(canonical(o, ignored) for o in right)
    out = []
    for output in left:
        key = canonical(output, ignored)
        if counts[key]:
            counts[key] -= 1
        else:
            out.append(output)
    return tuple(out)


def final_rows(
    outputs: Sequence[Output], by: Sequence[str] = (), batches: Sequence[int | None] | None = None
) -> list[Output]:
    """``outputs`` with each window's emissions reduced to its last row per group and
    ``aggregate_by`` value (fields ``by`` of the row): what a sink keeping one row per key
    holds at the end. Emissions count in micro-batch order where ``batches`` gives it (else
    in output order); drops stay as they are."""
    order: Sequence[int] = range(len(outputs))
    if batches is not None:
        order = sorted(order, key=lambda i: (batches[i] is None, batches[i] or 0, i))
    last: dict[str, Output] = {}
    rest: list[Output] = []
    for index in order:
        output = outputs[index]
        if not isinstance(output, Emission):
            rest.append(output)
            continue
        key = json.dumps([output.window.to_json(), output.group, [output.row.get(b) for b in by]],
                         sort_keys=True, default=str)
        last.pop(key, None)
        last[key] = output
    return [*last.values(), *rest]


def compare_run(
    expected: Sequence[Output],
    expected_batches: Sequence[int | None],
    run: TargetRun,
    *,
    drops: bool,
    timing: bool,
    exact: bool = False,
    final_by: Sequence[str] | None = None,
    ignored: Sequence[str] = (),
) -> Mismatch:
    """How ``run`` differs from the oracle's ``expected`` outputs (empty: it agrees);
    ``exact``: every field compared, ``after_seq``, ``wall_ms`` and drop messages too; with
    ``final_by`` (the ``aggregate_by`` fields) the final rows per window only; ``ignored``:
    fields the target cannot know, left out as well (a DirectRunner's ``reason``)."""
    if final_by is not None:
        want = final_rows(_compared(expected, drops), final_by)
        got = final_rows(_compared(run.outputs, drops), final_by,
                         None if run.micro_batches is None else
                         [b for o, b in zip(run.outputs, run.micro_batches, strict=True)
                          if isinstance(o, Emission) or drops])
        return Mismatch(_minus(want, got, FINAL_IGNORED), _minus(got, want, FINAL_IGNORED))
    want = _compared(expected, drops)
    got = _compared(run.outputs, drops)
    left_out = (*(() if exact else DEFAULT_IGNORED), *ignored)
    missing, unexpected = _minus(want, got, left_out), _minus(got, want, left_out)
    if missing or unexpected or not timing or run.micro_batches is None:
        return Mismatch(missing, unexpected)
    return Mismatch(timing=_late(expected, expected_batches, run))


def _late(
    expected: Sequence[Output], batches: Sequence[int | None], run: TargetRun
) -> tuple[Late, ...]:
    """Emissions equal as records whose micro-batches differ (unknown ones not compared)."""
    assert run.micro_batches is not None
    want: dict[str, list[int]] = defaultdict(list)
    got: dict[str, list[int]] = defaultdict(list)
    first: dict[str, Emission] = {}
    for outputs, where, into in ((expected, batches, want), (run.outputs, run.micro_batches, got)):
        for output, batch in zip(outputs, where, strict=True):
            if isinstance(output, Emission) and batch is not None:
                key = canonical(output, DEFAULT_IGNORED)
                into[key].append(batch)
                first.setdefault(key, output)
    late = []
    for key, got_batches in got.items():
        for expected_batch, actual_batch in zip(sorted(want[key]), sorted(got_batches), strict=False):
            if expected_batch != actual_batch:
                late.append(Late(first[key], expected_batch, actual_batch))
    return tuple(late)


@dataclass(frozen=True, slots=True)
class Failure:
    """The shrunk counterexample, what the oracle and the target did on it, and how
    shrinking went (``shrunk_on``: the target's name or ``stand-in <profile>``)."""

    original: Scenario
    scenario: Scenario
    expected: tuple[Output, ...]
    run: TargetRun
    mismatch: Mismatch
    shrunk_on: str
    shrink_rounds: int
    shrink_calls: int
    shrink_seconds: float


@dataclass(frozen=True, slots=True)
class CheckResult:
    """``checked`` scenarios in ``seconds``; ``failure`` None when all agreed."""

    target: str
    profile: str
    checked: int
    seconds: float
    failure: Failure | None = None

    @property
    def rate_per_min(self) -> float:
        return self.checked * 60.0 / self.seconds if self.seconds > 0 else 0.0


Progress = Callable[[int], None]
"""Told how many more scenarios were checked."""


class _Judge:
    """Runs scenarios on a target and says which diverge from the oracle under a profile."""

    def __init__(self, target: Target, profile: str, compare: str = "rows") -> None:
        self.target = target
        self.profile = profile
        self.compare = compare

    def expected(self, scenario: Scenario) -> tuple[Output, ...]:
        return oracle_outputs(scenario, self.profile)

    def judge(self, scenarios: Sequence[Scenario]) -> list[tuple[Mismatch, TargetRun]]:
        runs = self.target.run_many(scenarios)
        if len(runs) != len(scenarios):
            raise InvalidSpec(
                "target",
                self.target.name,
                f"returned {len(runs)} runs for {len(scenarios)} scenarios",
                "return one TargetRun per scenario from run_many",
            )
        out = []
        for scenario, got in zip(scenarios, runs, strict=True):
            want = self.expected(scenario)
            timing = self.target.reports_timing
            final = self.compare == "final"
            mismatch = compare_run(
                want,
                oracle_micro_batches_of(scenario, want, self.profile) if timing and not final
                else (),
                got,
                drops=self.target.reports_drops,
                timing=self.target.reports_timing,
                exact=bool(getattr(self.target, "exact", False)),
                final_by=scenario.query.aggregate_by if final else None,
                ignored=tuple(getattr(self.target, "ignored", ())),
            )
            out.append((mismatch, got))
        return out

    def fails(self, scenarios: Sequence[Scenario]) -> list[bool]:
        return [bool(m) for m, _ in self.judge(scenarios)]


def check(
    spec: Scenario,
    target: Target,
    *,
    profile: str | None = None,
    examples: int = 100,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    stand_in: str | None = None,
    shrink_seconds: float = 60.0,
    max_events: int = MAX_EVENTS,
    progress: Progress | None = None,
    on_shrinking: Callable[[Scenario], None] | None = None,
    compare: str = "rows",
) -> CheckResult:
    """Check ``target`` on ``spec``'s own input (if it has events) and ``examples``
    generated streams, ``batch_size`` per target call; stop at the first divergence and
    shrink it (``on_shrinking`` is told the diverging scenario first). ``compare``: one of
    :data:`COMPARES`. Raises InvalidSpec for bad options or a spec the profile cannot run."""
    chosen = profile or spec.profile.name
    profile_named(chosen)
    if compare not in COMPARES:
        raise InvalidSpec("--compare", compare, "unknown comparison",
                          f"use one of {', '.join(COMPARES)}")
    if isinstance(batch_size, bool) or batch_size < 1:
        raise InvalidSpec("--batch-size", batch_size, "must be 1 or more", "give e.g. 200")
    if stand_in is not None and stand_in != DETECT:
        profile_named(stand_in)
    started = time.monotonic()
    judge = _Judge(target, chosen, compare)
    judge.expected(spec)  # the profile can run the spec (else InvalidSpec before any target run)
    own = [spec] if any(not isinstance(i, End) for i in spec.items) else []
    generated = generate(spec, examples, seed, max_events=max_events)
    # the spec's own input runs alone first: a failure there is reported without waiting
    # for a whole batch of generated streams
    chunks = itertools.chain(
        [own] if own else [], iter(lambda: list(itertools.islice(generated, batch_size)), [])
    )
    checked = 0
    for chunk in chunks:
        verdicts = judge.judge(chunk)
        bad = next((i for i, (mismatch, _) in enumerate(verdicts) if mismatch), None)
        done = len(chunk) if bad is None else bad + 1
        checked += done
        if progress is not None:
            progress(done)
        if bad is not None:
            if on_shrinking is not None:
                on_shrinking(chunk[bad])
            failure = _shrunk(chunk[bad], judge, stand_in, batch_size, shrink_seconds)
            return CheckResult(target.name, chosen, checked, time.monotonic() - started, failure)
    return CheckResult(target.name, chosen, checked, time.monotonic() - started)


def _shrunk(
    failing: Scenario, judge: _Judge, stand_in: str | None, batch_size: int, seconds: float
) -> Failure:
    started = time.monotonic()
    result: Shrunk | None = None
    shrunk_on = judge.target.name
    proxies: list[Target] = []
    if stand_in == DETECT:
        proxies = _detected(failing, judge)
    elif stand_in is not None and _stands_in(failing, judge, stand_in):
        proxies = [_stand_in_target(judge.target, stand_in)]
    for proxy_target in proxies:  # the first whose shrunk stream the target fails too
        proxy = _Judge(proxy_target, judge.profile, judge.compare)
        left = seconds - (time.monotonic() - started)
        candidate = shrink(failing, proxy.fails, batch_size=max(batch_size, 200), max_seconds=left)
        if judge.fails([candidate.scenario])[0]:
            result, shrunk_on = candidate, f"stand-in {proxy_target.name}"
            break
    if result is None:
        left = max(seconds - (time.monotonic() - started), min(seconds, 10.0))
        result = shrink(failing, judge.fails, batch_size=batch_size, max_seconds=left)
    scenario = result.scenario
    ((mismatch, run),) = judge.judge([scenario])
    return Failure(
        failing,
        scenario,
        judge.expected(scenario),
        run,
        mismatch,
        shrunk_on,
        result.rounds,
        result.calls,
        time.monotonic() - started,
    )


def _detected(failing: Scenario, judge: _Judge) -> list[Target]:
    """The first :data:`DETECTED` of :func:`~windtunnel.conformance.stand_ins.variants` whose
    outputs equal the target's on ``failing`` (as compared, micro-batches too)."""
    (theirs,) = judge.target.run_many([failing])
    final_by = failing.query.aggregate_by if judge.compare == "final" else None
    found: list[Target] = []
    for variant in variants(failing, judge.profile):
        (ours,) = variant.run_many([failing])
        if not compare_run(ours.outputs, ours.micro_batches or (), theirs,
                           drops=judge.target.reports_drops,
                           timing=judge.target.reports_timing, final_by=final_by):
            found.append(replace(variant, reports_drops=judge.target.reports_drops,
                                 reports_timing=judge.target.reports_timing))
            if len(found) == DETECTED:
                break
    return found


def _stand_in_target(target: Target, profile: str) -> OracleTarget:
    return OracleTarget(
        profile,
        name=f"oracle:{profile}",
        reports_drops=target.reports_drops,
        reports_timing=target.reports_timing,
    )


def _stands_in(failing: Scenario, judge: _Judge, profile: str) -> bool:
    """Whether the stand-in produces the target's outputs on ``failing`` (as compared)."""
    proxy = _stand_in_target(judge.target, profile)
    (theirs,) = judge.target.run_many([failing])
    (ours,) = proxy.run_many([failing])
    drops = judge.target.reports_drops
    return not compare_run(
        ours.outputs, ours.micro_batches or (), theirs, drops=drops, timing=False
    )


def describe_output(output: Output, unit_ms: int = 1) -> str:
    """One short line for an output: window, group, row and reason, or a drop. Times read
    in the unit of ``unit_ms`` (the scenario's), ISO-8601 when epoch-scale
    (:mod:`windtunnel.oracle.model.timefmt`)."""
    if isinstance(output, Drop):
        return f"drop seq {output.seq} ({output.reason})"
    bounds = window_text(output.window, unit_ms)
    group = "" if output.group is None else f" {json.dumps(output.group, default=str)}"
    row = " ".join(f"{k}={json.dumps(v, default=str)}" for k, v in output.row.items())
    partial = " partial" if output.partial else ""
    return f"{bounds}{group} {row} ({output.reason}{partial})".replace("  ", " ")
