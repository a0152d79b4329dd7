"""A user's Spark job checked: the per-scenario floor, lanes, job shapes, time to shrink.

Run through ``python benchmarks/check_rate.py --jobs`` (its docstring); every figure is
measured in this one process and session, the baselines (the scripted source, one lane) too.
Every run timed must agree with the oracle, every job shape pass its check and every broken
job be caught (an AssertionError otherwise).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, TypeVar

from windtunnel.cli.check import load_spec
from windtunnel.conformance.check import DETECT, check
from windtunnel.conformance.judge import Judge
from windtunnel.conformance.targets import Target, TargetRun
from windtunnel.conformance.targets.spark import job_target, stock_target
from windtunnel.oracle.model.stream import Batch, End, Event, events_of
from windtunnel.oracle.scenario import Scenario
from windtunnel.spark_impl.harness import user_job

ROOT = Path(__file__).resolve().parents[1]
SHAPES = ROOT / "examples" / "spark_jobs"
PROJECT = ROOT / "examples" / "user_project"


@contextmanager
def scripted_source() -> Iterator[None]:
    """Queries fed by the scripted source (a Python process per query), not from memory."""
    feed = user_job.memory_feed
    user_job.memory_feed = lambda *_a, **_k: None  # type: ignore[assignment]
    try:
        yield
    finally:
        user_job.memory_feed = feed  # type: ignore[assignment]


T = TypeVar("T")


def _timed(run: Callable[[], T]) -> tuple[float, T]:
    """Seconds ``run()`` took and what it returned."""
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


class Replayed:
    """``target`` answering with runs already made, so a :class:`Judge` compares them."""

    def __init__(self, target: Target, runs: list[TargetRun]) -> None:
        self.target, self.runs = target, runs

    def __getattr__(self, name: str) -> object:
        return getattr(self.target, name)

    def run_many(self, scenarios: object) -> list[TargetRun]:
        return self.runs


def check_runs(target: Target, scenarios: Sequence[Scenario], runs: list[TargetRun]) -> None:
    """Raise AssertionError unless each of ``target``'s ``runs`` of ``scenarios`` agrees with
    the oracle (as ``windtunnel check`` compares)."""
    judge = Judge(Replayed(target, runs), scenarios[0].profile.name)  # type: ignore[arg-type]
    differing = [s.name for s, (mismatch, _) in zip(scenarios, judge.judge(scenarios), strict=True)
                 if mismatch]
    assert not differing, f"{target.name}: {len(differing)} run(s) differ from the oracle: {differing[:5]}"


def best(repeat: int, target: Target, scenarios: Sequence[Scenario]) -> float:
    """Best seconds of ``repeat`` calls of ``target.run_many(scenarios)``; each call's runs
    must agree with the oracle (checked outside the clock)."""
    times = []
    for _ in range(repeat):
        seconds, runs = _timed(lambda: target.run_many(scenarios))
        check_runs(target, scenarios, runs)
        times.append(seconds)
    return min(times)


def _batches(spec: Scenario, count: int) -> Scenario:
    """One scenario of ``count`` micro-batches of one event each (times 1 s apart)."""
    items = [Batch((Event(i, {"ts": 1000 * i, "key": "a", "value": 1}),)) for i in range(count)]
    return dataclasses.replace(spec, items=(*items, End()))


def floor(spark: Any, spec: Scenario, repeat: int = 3, batches: int = 21) -> None:
    """A query's start (one micro-batch) and the cost of each further micro-batch (from a
    query of ``batches`` micro-batches)."""
    print(f"per-scenario floor (the stock mapping as a job, one scenario per call, {repeat} calls):")
    for label, context in (("from memory", nullcontext()), ("scripted source", scripted_source())):
        with context:
            target = stock_target(spark, batched=False, lanes=1)
            one = best(repeat, target, [_batches(spec, 1)])
            many = best(repeat, target, [_batches(spec, batches)])
        print(f"  {label}: query with 1 micro-batch {one:.2f} s; "
              f"each further micro-batch {(many - one) / (batches - 1) * 1000:.0f} ms")


def lanes_rates(spark: Any, scenarios: list[Scenario], counts: Sequence[int] = (1, 2, 4, 8)) -> None:
    """The stock mapping as a job on ``scenarios``: lanes against the scripted source."""
    with scripted_source():
        base = best(1, stock_target(spark, lanes=1), scenarios)
    rate = 60 * len(scenarios) / base
    print(f"{len(scenarios)} scenarios, stock mapping as a job; baseline scripted source, "
          f"one lane: {rate:.0f} scenarios/min")
    for count in counts:
        took = best(1, stock_target(spark, lanes=count), scenarios)
        print(f"  from memory, {count} lane(s): {60 * len(scenarios) / took:.0f} scenarios/min "
              f"({base / took:.1f}x)")


SHAPE_SPECS = {
    "logins_per_user": "logins.yaml",
    "logins_sql": "logins.yaml",
    "merchant_stats": "payments.yaml",
    "device_sessions": "sessions.yaml",
    "clicks_deduplicated": "clicks.yaml",
    "merchant_totals": "totals-update.yaml",
}
"""examples/spark_jobs's job shapes and their specs."""


def shapes_rates(spark: Any, examples: int, names: Sequence[str] | None = None) -> None:
    """``windtunnel check`` (the function) on each job shape's spec, ``examples`` streams;
    every shape must pass."""
    sys.path.insert(0, str(SHAPES))
    import spark_shapes

    print(f"check --examples {examples} on examples/spark_jobs:")
    for job in names or SHAPE_SPECS:
        spec, compare = SHAPE_SPECS[job], "rows"
        target = job_target(getattr(spark_shapes, job), spark)
        start = time.perf_counter()
        result = check(load_spec(str(SHAPES / spec)), target, examples=examples, seed=7,
                       compare=compare)
        took = time.perf_counter() - start
        assert result.failure is None, f"{job} diverges from its spec {spec}"
        verdict = "passes"
        print(f"  {job} ({spec}): {verdict}, {result.checked} in {took:.1f} s, "
              f"{60 * result.checked / took:.0f} scenarios/min")


def shrinking(spark: Any, examples: int = 100, broken: Sequence[str] = ("logins_known_users", "failed_logins")) -> None:
    """Time from a broken job's first divergence to its shrunk counterexample (``broken``:
    ``logins_known_users`` of examples/spark_jobs, ``failed_logins`` of examples/user_project)."""
    sys.path[:0] = [str(SHAPES), str(PROJECT)]
    import jobs_broken
    import spark_shapes

    jobs = {"logins_known_users": (SHAPES / "logins.yaml", spark_shapes.logins_known_users),
            "failed_logins": (PROJECT / "specs" / "failed_logins.yaml", jobs_broken.failed_logins)}
    for spec, job in (jobs[name] for name in broken):
        for stand_in in (DETECT, None):
            start = time.perf_counter()
            result = check(load_spec(str(spec)), job_target(job, spark), examples=examples, seed=7,
                           stand_in=stand_in, shrink_seconds=120)
            failure = result.failure
            assert failure is not None, f"{job.__name__} passed"
            events = len(list(events_of(failure.scenario.items)))
            print(f"  {job.__module__}.{job.__name__}, stand-in {stand_in or 'none'}: found "
                  f"after {result.checked} scenarios, shrunk to {events} event(s) in "
                  f"{failure.shrink_seconds:.1f} s on {failure.shrunk_on} "
                  f"({time.perf_counter() - start:.1f} s in all)")


def measure_jobs(spark: Any, scenarios: list[Scenario], *, examples: int = 100, repeat: int = 3,
                 floor_batches: int = 21, lanes: Sequence[int] = (1, 2, 4, 8),
                 shapes: Sequence[str] | None = None,
                 broken: Sequence[str] = ("logins_known_users", "failed_logins")) -> None:
    """Every measurement of the module docstring, in order."""
    stock_target(spark).run_many(scenarios[:2])  # warm-up
    floor(spark, scenarios[0], repeat, floor_batches)
    lanes_rates(spark, scenarios, lanes)
    shapes_rates(spark, examples, shapes)
    if broken:
        print(f"time to a shrunk counterexample (check --examples {examples}):")
        shrinking(spark, examples, broken)
