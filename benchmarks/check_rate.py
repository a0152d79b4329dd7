"""Scenarios checked per minute on Spark: one query per scenario against many per query.

For the production operator (``spark``) and the stock mapping (``spark-stock``), on the same
generated scenarios (one spec, streams from ``simulator.strategies.streams``), in one
session: (a) one query per scenario (``replay_on_spark`` / ``replay_stock``) on the first
``--solo`` scenarios, (b) the batched targets (``conformance.spark_targets``) on all of
them. Prints scenarios/min for each and the ratio. A warm-up query runs first. A rate is
printed only when every run it timed agrees with the oracle (the solo runs as ``windtunnel
replay --engine both`` compares them, the batched ones as ``windtunnel check`` does; an
AssertionError otherwise).

    python benchmarks/check_rate.py --scenarios 200 --solo 6

``--jobs`` measures a user's job instead (docs/conformance.md, "The per-scenario floor"):
the floor (a query's start and a micro-batch, fed from memory against the scripted
source), the stock mapping as a job in 1, 2, 4 and 8 lanes against the scripted source in
one lane (the baseline), ``windtunnel check`` on examples/spark_jobs's shapes, and the
time to a shrunk counterexample of two broken jobs:

    python benchmarks/check_rate.py --jobs --scenarios 200 [--examples 100] [--repeat 3]
        [--floor-batches 21] [--lanes 1,2,4,8] [--shapes logins_per_user,...] [--broken logins_known_users,failed_logins]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from job_rates import check_runs, measure_jobs  # beside this script

from windtunnel.conformance.targets import Target
from windtunnel.conformance.targets.spark import general_target, stock_target
from windtunnel.oracle.model.stream import Item
from windtunnel.oracle.scenario import Scenario, load_yaml, parse_scenario
from windtunnel.simulator.strategies import streams
from windtunnel.spark_impl.harness.replay import compare_with_oracle, replay_on_spark
from windtunnel.spark_impl.harness.runs import SparkRun
from windtunnel.spark_impl.harness.stock_replay import replay_stock
from windtunnel.spark_impl.session import spark_session

SPEC = """
window: {size: 10s, every: 5s, tolerance: 2s}
group_by: key
aggregate: {n: count(), total: sum(value)}
input: []
"""


def generated(count: int, events: int) -> list[tuple[Item, ...]]:
    """``count`` streams drawn by Hypothesis (batches, disorder, up to ``events`` events)."""
    found: list[tuple[Item, ...]] = []
    strategy = st.lists(
        streams(min_events=1, max_events=events, keys=3, max_step_ms=5000,
                max_disorder_ms=8000, with_batches=True),
        min_size=count, max_size=count,
    )

    @settings(max_examples=3, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def draw(value: list[tuple[Item, ...]]) -> None:
        found[:] = value

    draw()
    return found


def rate(count: int, seconds: float) -> float:
    return 60.0 * count / seconds


def measure(
    name: str, scenarios: list[Scenario], solo_count: int,
    solo_run: Callable[[Scenario], SparkRun], target: Target,
) -> None:
    start = time.perf_counter()
    solo_runs = [solo_run(scenario) for scenario in scenarios[:solo_count]]
    solo = rate(solo_count, time.perf_counter() - start)
    start = time.perf_counter()
    runs = target.run_many(scenarios)
    batched = rate(len(scenarios), time.perf_counter() - start)
    for scenario, run in zip(scenarios, solo_runs, strict=False):
        problems = compare_with_oracle(scenario, run)
        assert not problems, f"{name}, one query per scenario: {scenario.name}: {problems[:3]}"
    check_runs(target, scenarios, runs)
    print(f"check: {name}: {solo_count} solo and {len(scenarios)} batched runs agree with the "
          "oracle", flush=True)
    print(f"{name}: one query per scenario {solo:.1f} scenarios/min; batched "
          f"{batched:.1f} scenarios/min ({len(scenarios)} scenarios); ratio {batched / solo:.1f}x")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=200)
    parser.add_argument("--solo", type=int, default=6)
    parser.add_argument("--events", type=int, default=8)
    parser.add_argument("--stock-scenarios", type=int, default=40)
    parser.add_argument("--jobs", action="store_true", help="a user's job (see above)")
    parser.add_argument("--examples", type=int, default=100,
                        help="with --jobs: streams per check of a job shape or broken job")
    parser.add_argument("--repeat", type=int, default=3,
                        help="with --jobs: the floor's calls per size (the best is printed)")
    parser.add_argument("--floor-batches", type=int, default=21,
                        help="with --jobs: micro-batches of the floor's longer query (at least 2)")
    parser.add_argument("--lanes", default="1,2,4,8", help="with --jobs: lane counts timed")
    parser.add_argument("--shapes", default=None,
                        help="with --jobs: job shapes checked (default all of examples/spark_jobs)")
    parser.add_argument("--broken", default="logins_known_users,failed_logins",
                        help="with --jobs: broken jobs shrunk")
    args = parser.parse_args(argv)
    spark = spark_session()
    spark.sparkContext.setLogLevel("ERROR")
    if args.jobs:
        stock_spec = parse_scenario(load_yaml("profile: spark\n" + SPEC))
        measure_jobs(spark, [dataclasses.replace(stock_spec, items=i, name=f"stream-{n}")
                             for n, i in enumerate(generated(args.scenarios, args.events))],
                     examples=args.examples, repeat=args.repeat, floor_batches=args.floor_batches,
                     lanes=[int(x) for x in args.lanes.split(",")],
                     shapes=None if args.shapes is None else args.shapes.split(","),
                     broken=[x for x in args.broken.split(",") if x])
        return
    spec = parse_scenario(load_yaml(SPEC))
    items = generated(args.scenarios, args.events)
    exact = [dataclasses.replace(spec, items=i, name=f"stream-{n}") for n, i in enumerate(items)]
    stock_spec = parse_scenario(load_yaml("profile: spark\n" + SPEC))
    stock = [dataclasses.replace(stock_spec, items=i, name=f"stream-{n}") for n, i in enumerate(items)]
    general_target(spark).run_many(exact[:2])  # warm-up: session, first query
    measure("spark (production operator)", exact, args.solo,
            lambda s: replay_on_spark(s, spark), general_target(spark))
    measure("spark-stock", stock[: args.stock_scenarios], args.solo,
            lambda s: replay_stock(s, spark), stock_target(spark))


if __name__ == "__main__":
    main()
