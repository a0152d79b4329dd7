"""Replaying a scenario on Spark as exact micro-batches, and comparing with the oracle.

Spark returns rows in no particular order: results are compared as multisets of the
contract's JSON lines, and printed sorted by :func:`windtunnel.spark_impl.schema.print_order`.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from windtunnel.oracle.engine import operator_for
from windtunnel.oracle.model.results import Emission, Output, Result
from windtunnel.oracle.model.stream import without_watermarks
from windtunnel.oracle.scenario import Scenario
from windtunnel.oracle.windows.driver import Driver
from windtunnel.spark_impl.errors import once_more_if_missed_start
from windtunnel.spark_impl.general.operator import apply_window, bucket_count, check_rules
from windtunnel.spark_impl.harness.feed import Feed, feed
from windtunnel.spark_impl.harness.progress import ProgressWatch
from windtunnel.spark_impl.harness.runs import SparkRun, comparable_line, divergences
from windtunnel.spark_impl.jobs.path import STOCK, PathChoice, choose_path
from windtunnel.spark_impl.jobs.scripted import scripted_stream
from windtunnel.spark_impl.jobs.spec import spec_of
from windtunnel.spark_impl.schema import output_of, print_order
from windtunnel.spark_impl.scratch import checkpoint_dir
from windtunnel.spark_impl.session import spark_session

_query_names = itertools.count()


def replay_on_spark(
    scenario: Scenario,
    spark: Any,
    *,
    micro_batch: int = 1,
    buckets: int = 4,
    clock: str = "exact",
    checkpoint: str | None = None,
) -> SparkRun:
    """Run ``scenario`` through the general operator as a stream of scripted micro-batches.

    Scenario batches become micro-batches; lone events go ``micro_batch`` per
    micro-batch. Raises InvalidSpec for profiles other than the default.
    """
    check_rules(scenario.rules, scenario.profile.name)
    used = bucket_count(scenario.query, scenario.rules, buckets)
    fed = feed(
        scenario.items,
        scenario.query.group_by,
        buckets=used,
        micro_batch=micro_batch,
        start_wall_ms=scenario.start_wall_ms,
        clock=clock,
    )
    out = scenario_window(scripted_stream(spark, fed.batches), scenario, used)
    records = sorted(collect_stream(spark, out, checkpoint), key=print_order)
    return SparkRun(
        Result(tuple(output_of(r) for r in records)), fed, tuple(r["step"] for r in records), clock
    )


def scenario_window(stream: Any, scenario: Scenario, buckets: int) -> Any:
    """The general operator over a stream of fed rows (see :func:`feed`) for ``scenario``."""
    return apply_window(
        stream,
        scenario.query,
        rules=scenario.rules,
        time_unit_ms=scenario.time_unit_ms,
        start_wall_ms=scenario.start_wall_ms,
        buckets=buckets,
        kind="kind",
        after_seq="after_seq",
        payload="payload",
    )


def collect_stream(spark: Any, out: Any, checkpoint: str | None = None) -> list[dict[str, Any]]:
    """Run a streaming DataFrame to its end (AvailableNow) into a memory table; its rows."""
    name = f"windtunnel_out_{next(_query_names)}"
    with checkpoint_dir(checkpoint, "ckpt") as location:
        query = (
            out.writeStream.format("memory")
            .queryName(name)
            .outputMode("append")
            .option("checkpointLocation", location)
            .trigger(availableNow=True)
            .start()
        )
        try:
            query.awaitTermination()
        finally:
            query.stop()
    rows = [r.asDict() for r in spark.table(name).collect()]
    spark.sql(f"DROP VIEW IF EXISTS {name}")
    return rows


def replay_scenario(
    scenario: Scenario,
    *,
    micro_batch: int = 1,
    master: str | None = None,
    remote: str | None = None,
    buckets: int = 4,
    clock: str = "exact",
    progress: Callable[[str], None] | None = None,
) -> SparkRun:
    """Start (or reuse) a session and replay ``scenario`` on it, on the path ``windtunnel run``
    would take (:func:`~windtunnel.spark_impl.jobs.path.choose_path`): the production
    operator (:func:`replay_production`), the general one (:func:`replay_on_spark`; also
    for ``clock="batch"``, its own granularity) or, for a scenario of profile ``spark``,
    stock Spark (:func:`windtunnel.spark_impl.harness.stock_replay.replay_stock`).
    ``progress`` receives lines while Spark starts and one per micro-batch
    (:class:`windtunnel.spark_impl.harness.progress.ProgressWatch`). Raises InvalidSpec (before
    Spark starts) for a scenario no path runs. A run whose query failed because Spark's
    Python process missed its start runs once more, from scratch
    (:func:`~windtunnel.spark_impl.errors.once_more_if_missed_start`).
    """
    job = spec_of(scenario)  # input errors before Spark starts
    for _ in without_watermarks(scenario.items, "Spark"):  # likewise
        pass
    if progress is not None:
        progress(f"starting Spark ({remote or master or 'local[2]'})...")
    began = time.perf_counter()
    spark = spark_session(master, remote)
    with contextlib.suppress(Exception):  # Connect sessions have no SparkContext
        spark.sparkContext.setLogLevel("ERROR")
    choice = choose_path(job, spark=spark, sink_kind="parquet")

    def run() -> SparkRun:
        return _run(scenario, spark, choice, micro_batch, buckets, clock)

    if progress is None:
        return once_more_if_missed_start(run)
    progress(f"Spark started in {time.perf_counter() - began:.1f} s")
    stock = choice.path == STOCK
    with ProgressWatch(spark, progress, _events_per_batch(scenario, stock, micro_batch, clock)):
        return once_more_if_missed_start(run, progress)


def micro_batch_count(scenario: Scenario, micro_batch: int = 1, clock: str = "exact") -> int:
    """The micro-batches :func:`replay_scenario` will report for ``scenario``."""
    stock = choose_path(spec_of(scenario), spark=None).path == STOCK
    return len(_events_per_batch(scenario, stock, micro_batch, clock))


def _events_per_batch(scenario: Scenario, stock: bool, micro_batch: int, clock: str) -> list[int]:
    """Events in each micro-batch the run will have (stock runs add a last empty one)."""
    if stock:
        from windtunnel.spark_impl.harness.stock_replay import plan_stock

        plan = plan_stock(scenario, micro_batch)
        events = [end - first for first, end in plan.feed.seq_ranges]
        return events + [0] * (len(plan.positions) - len(events))
    cut = feed(scenario.items, (), buckets=1, micro_batch=micro_batch,
               start_wall_ms=scenario.start_wall_ms, clock=clock)
    return [end - first for first, end in cut.seq_ranges]


def _run(
    scenario: Scenario, spark: Any, choice: PathChoice, micro_batch: int, buckets: int, clock: str
) -> SparkRun:
    if choice.path == STOCK:
        from windtunnel.spark_impl.harness.stock_replay import replay_stock

        return replay_stock(scenario, spark, micro_batch=micro_batch)
    if choice.production and clock == "exact":
        return replay_production(scenario, spark, micro_batch=micro_batch)
    return replay_on_spark(
        scenario, spark, micro_batch=micro_batch, buckets=buckets, clock=clock
    )


def replay_production(scenario: Scenario, spark: Any, *, micro_batch: int = 1) -> SparkRun:
    """``scenario`` through the production operator's streaming path (one lane; each
    micro-batch from one input file; the session's default key slices)."""
    from windtunnel.spark_impl.harness.production import run_lanes
    from windtunnel.spark_impl.production.plan import default_slices

    (lane,) = run_lanes(spark, [scenario], slices=default_slices(spark), partitions=1,
                        micro_batch=micro_batch)
    return SparkRun(Result(lane.outputs), lane.feed, lane.steps, "exact")


def compare_with_oracle(scenario: Scenario, run: SparkRun) -> list[str]:
    """Divergences between a Spark replay and the oracle's replay of ``scenario``
    (a stock run: emissions against the ``spark`` profile, see ``stock.compare_stock``)."""
    if run.clock == "stock":
        from windtunnel.spark_impl.harness.stock_replay import compare_stock

        return compare_stock(scenario, run)
    tagged = oracle_by_batch(scenario, run.feed)
    problems = divergences([o for o, _ in tagged], run.result.outputs, clock=run.clock)
    if run.clock == "batch" and not problems:
        problems = _batch_rule(tagged, run)
    return problems


def oracle_by_batch(scenario: Scenario, fed: Feed) -> list[tuple[Output, int]]:
    """The oracle's outputs, each with the index of the micro-batch whose items produced it."""
    profile = scenario.profile.name
    driver = Driver(
        scenario.query,
        lambda q, ctx: operator_for(q, ctx, profile),
        scenario.rules,
        time_unit_ms=scenario.time_unit_ms,
        start_wall_ms=scenario.start_wall_ms,
    )
    tagged: list[tuple[Output, int]] = []
    out: list[Output] = []
    for index, items in enumerate(fed.items):
        for item in items:
            driver.feed(item, out)
            tagged += [(o, index) for o in out]
            out.clear()
    return tagged


def spark_batch_of_step(step: int, fed: Feed) -> int | None:
    """The micro-batch of a Spark output's ``step`` (batch clock: control rows end a batch)."""
    if step % 2 == 1:
        return fed.batch_of_seq((step - 1) // 2)
    last = step // 2 - 1
    return 0 if last < 0 else fed.batch_of_seq(last)


def _batch_rule(oracle: Sequence[tuple[Output, int]], run: SparkRun) -> list[str]:
    """Granularity rule of the batch clock: every idle_timeout emission comes out in the
    same micro-batch as the oracle's (equal apart from after_seq and wall_ms)."""
    want: Counter[tuple[str, int | None]] = Counter(
        (comparable_line(o, True), i) for o, i in oracle if isinstance(o, Emission) and o.reason == "idle_timeout"
    )
    got: Counter[tuple[str, int | None]] = Counter(
        (comparable_line(o, True), spark_batch_of_step(step, run.feed))
        for o, step in zip(run.result.outputs, run.steps, strict=True)
        if isinstance(o, Emission) and o.reason == "idle_timeout"
    )
    return [
        f"! idle_timeout emitted in micro-batch {i} by the oracle only: {line}"
        for (line, i), _ in sorted((want - got).items(), key=str)
    ] + [
        f"! idle_timeout emitted in micro-batch {i} by spark only: {line}"
        for (line, i), _ in sorted((got - want).items(), key=str)
    ]
