"""A user's Spark job checked: the per-scenario floor, lanes, job shapes, time to shrink.

Run through ``python benchmarks/check_rate.py --jobs`` (its docstring); every figure is
measured in this one process and session, the baselines (the scripted source, one lane) too.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from windtunnel.cli.check import load_spec
from windtunnel.conformance.check import DETECT, check
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


def _timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _batches(spec: Scenario, count: int) -> Scenario:
    """One scenario of ``count`` micro-batches of one event each (times 1 s apart)."""
    items = [Batch((Event(i, {"ts": 1000 * i, "key": "a", "value": 1}),)) for i in range(count)]
    return dataclasses.replace(spec, items=(*items, End()))


def floor(spark: Any, spec: Scenario) -> None:
    """A query's start (one micro-batch) and the cost of each further micro-batch."""
    print("per-scenario floor (the stock mapping as a job, one scenario per call, 3 calls):")
    for label, context in (("from memory", nullcontext()), ("scripted source", scripted_source())):
        with context:
            target = stock_target(spark, batched=False, lanes=1)
            one = min(_timed(lambda t=target: t.run_many([_batches(spec, 1)])) for _ in range(3))
            many = min(_timed(lambda t=target: t.run_many([_batches(spec, 21)])) for _ in range(3))
        print(f"  {label}: query with 1 micro-batch {one:.2f} s; "
              f"each further micro-batch {(many - one) / 20 * 1000:.0f} ms")


def lanes(spark: Any, scenarios: list[Scenario]) -> None:
    """The stock mapping as a job on ``scenarios``: lanes against the scripted source."""
    with scripted_source():
        base = _timed(lambda: stock_target(spark, lanes=1).run_many(scenarios))
    rate = 60 * len(scenarios) / base
    print(f"{len(scenarios)} scenarios, stock mapping as a job; baseline scripted source, "
          f"one lane: {rate:.0f} scenarios/min")
    for count in (1, 2, 4, 8):
        took = _timed(lambda count=count: stock_target(spark, lanes=count).run_many(scenarios))
        print(f"  from memory, {count} lane(s): {60 * len(scenarios) / took:.0f} scenarios/min "
              f"({base / took:.1f}x)")


def shapes(spark: Any, examples: int) -> None:
    """``windtunnel check`` (the function) on each job shape's spec, ``examples`` streams."""
    sys.path.insert(0, str(SHAPES))
    import spark_shapes

    print(f"check --examples {examples} on examples/spark_jobs:")
    for spec, job, compare in (("logins.yaml", "logins_per_user", "rows"),
                               ("logins.yaml", "logins_sql", "rows"),
                               ("payments.yaml", "merchant_stats", "rows"),
                               ("sessions.yaml", "device_sessions", "rows"),
                               ("clicks.yaml", "clicks_deduplicated", "rows"),
                               ("totals-update.yaml", "merchant_totals", "rows")):
        target = job_target(getattr(spark_shapes, job), spark)
        start = time.perf_counter()
        result = check(load_spec(str(SHAPES / spec)), target, examples=examples, seed=7,
                       compare=compare)
        took = time.perf_counter() - start
        verdict = "passes" if result.failure is None else "DIVERGES"
        print(f"  {job} ({spec}): {verdict}, {result.checked} in {took:.1f} s, "
              f"{60 * result.checked / took:.0f} scenarios/min")


def shrinking(spark: Any) -> None:
    """Time from a broken job's first divergence to its shrunk counterexample."""
    sys.path[:0] = [str(SHAPES), str(PROJECT)]
    import jobs_broken
    import spark_shapes

    for spec, job in ((SHAPES / "logins.yaml", spark_shapes.logins_known_users),
                      (PROJECT / "specs" / "failed_logins.yaml", jobs_broken.failed_logins)):
        for stand_in in (DETECT, None):
            start = time.perf_counter()
            result = check(load_spec(str(spec)), job_target(job, spark), examples=100, seed=7,
                           stand_in=stand_in, shrink_seconds=120)
            failure = result.failure
            assert failure is not None, f"{job.__name__} passed"
            events = len(list(events_of(failure.scenario.items)))
            print(f"  {job.__module__}.{job.__name__}, stand-in {stand_in or 'none'}: found "
                  f"after {result.checked} scenarios, shrunk to {events} event(s) in "
                  f"{failure.shrink_seconds:.1f} s on {failure.shrunk_on} "
                  f"({time.perf_counter() - start:.1f} s in all)")


def measure_jobs(spark: Any, scenarios: list[Scenario]) -> None:
    """Every measurement of the module docstring, in order."""
    stock_target(spark).run_many(scenarios[:2])  # warm-up
    floor(spark, scenarios[0])
    lanes(spark, scenarios)
    shapes(spark, 100)
    print("time to a shrunk counterexample (check --examples 100):")
    shrinking(spark)
