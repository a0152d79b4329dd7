"""Spark targets for ``windtunnel check``: windtunnel's operators, the stock mapping, a user's job.

- :func:`production_target` (``spark``; ``spark-fast`` is its old name): the production
  operator (what ``windtunnel run`` and ``run_job`` pick), through its real streaming path:
  many scenarios per query as lanes, each micro-batch from several input partitions, key
  slices in parallel (:mod:`windtunnel.spark_impl.harness.production`); reports drops, and
  every field is compared (``after_seq``, ``wall_ms``, messages);
- :func:`general_target` (``spark-general``): the general operator (``apply_window``,
  transformWithStateInPandas), many scenarios per query, one bucket each
  (:mod:`windtunnel.spark_impl.harness.general`); reports drops and timing.
- :func:`stock_target` (``spark-stock``): the stock mapping
  (:func:`windtunnel.spark_impl.stock.mapping.stock_window`) run as a user job.
- :func:`job_target` (``module:function``): a user's ``job(events) -> DataFrame``
  (the job contract: docs/conformance.md), many scenarios per query, one after another
  (:mod:`windtunnel.spark_impl.harness.user_job`). Stock and user jobs share that code path and
  report neither drops (stock Spark drops silently) nor anything finer than micro-batches.

Timing: ``TargetRun.micro_batches`` numbers micro-batches as
:func:`windtunnel.conformance.targets.base.micro_batch_of_seq` does; a job's final no-data
micro-batch and the general operator's trailing end-of-input micro-batch count as the last.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from windtunnel.conformance.job_plan import JobPlan, plan_text, read_plan
from windtunnel.conformance.targets.base import (
    TargetEntry,
    TargetRun,
    load_function,
    micro_batch_of_seq,
)
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.scenario import Scenario


def check_session(spark: Any) -> Any:
    """``spark``, or windtunnel's own session for checks when None: started once with
    :data:`~windtunnel.spark_impl.session.CHECK_CONF`, in-process local file permissions
    (``local_files``) and lambda classes checked once by Spark's closure cleaner
    (``closure_checks``), Spark's log at errors only."""
    if spark is not None:
        return spark
    from windtunnel.spark_impl.session import CHECK_CONF, spark_session

    session = spark_session(conf=CHECK_CONF, local_files=True, closure_checks=True)
    session.sparkContext.setLogLevel("ERROR")
    return session


def check_indexes(scenario: Scenario, seq_ranges: Sequence[tuple[int, int]]) -> list[int | None]:
    """For each of a run's micro-batches (``[first_seq, end_seq)`` of its events), its index
    in :func:`micro_batch_of_seq`'s numbering; one more entry for what follows the last
    (a no-data micro-batch): the last micro-batch's index."""
    where = micro_batch_of_seq(scenario.items)
    out: list[int | None] = []
    previous = -1
    for first, end in seq_ranges:
        if end > first:
            index = where.get(first)
        elif first in where or not where:  # events follow: a micro-batch of advances only
            index = previous + 1
        else:  # after the last event: end of input rides in the last micro-batch
            index = max(where.values())
        out.append(index)
        previous = index if index is not None else previous
    out.append(max(where.values()) if where else None)
    return out


@dataclass(frozen=True, slots=True)
class GeneralTarget:
    """windtunnel's general operator on Spark (default profile semantics)."""

    spark: Any = None
    name: str = "spark-general"
    reports_drops: bool = True
    reports_timing: bool = True

    def run_many(self, scenarios: Sequence[Scenario]) -> list[TargetRun]:
        from windtunnel.spark_impl.harness.general import general_rules, run_general_many

        for scenario in scenarios:
            general_rules(scenario)  # input errors before Spark starts
        runs = run_general_many(check_session(self.spark), scenarios)
        out = []
        for scenario, run in zip(scenarios, runs, strict=True):
            indexes = check_indexes(scenario, run.run.feed.seq_ranges)
            batches = tuple(indexes[min(b, len(indexes) - 1)] for b in run.micro_batches)
            out.append(TargetRun(run.run.result.outputs, batches))
        return out


@dataclass(frozen=True, slots=True)
class ProductionTarget:
    """windtunnel's production operator through its streaming path: the scenarios of one
    query as lanes of one Spark query (``slices`` key slices, ``partitions`` input files per
    micro-batch). Its outputs carry ``after_seq`` and ``wall_ms``, compared exactly, so
    timing needs no micro-batch numbers."""

    spark: Any = None
    name: str = "spark"
    slices: int = 3
    partitions: int = 2
    reports_drops: bool = True
    reports_timing: bool = False
    exact: bool = True

    def run_many(self, scenarios: Sequence[Scenario]) -> list[TargetRun]:
        from windtunnel.spark_impl.harness.production import run_lanes
        from windtunnel.spark_impl.jobs.path import STOCK, choose_path
        from windtunnel.spark_impl.jobs.spec import spec_of
        from windtunnel.spark_impl.jvm.engine_spec import engine_spec

        groups: dict[str, list[int]] = {}
        for index, scenario in enumerate(scenarios):
            job = spec_of(scenario)  # input errors before Spark starts
            choice = choose_path(job, spark=None)
            if not choice.production:
                other = "spark-stock" if choice.path == STOCK else "spark-general"
                raise InvalidSpec(
                    "--target", self.name,
                    f"the production operator cannot run it: {choice.reasons[0]}",
                    f"use --target {other} (what runs it)",
                )
            key = engine_spec(job.query, job.rules, job.time_unit_ms, job.start_wall_ms)
            groups.setdefault(key, []).append(index)
        spark = check_session(self.spark)
        found: dict[int, TargetRun] = {}
        for members in groups.values():
            chosen = [scenarios[i] for i in members]
            runs = run_lanes(spark, chosen, slices=self.slices, partitions=self.partitions)
            for index, lane in zip(members, runs, strict=True):
                found[index] = TargetRun(lane.outputs)
        return [found[i] for i in range(len(scenarios))]


JobFactory = Callable[[Query], Callable[[Any], Any]]
"""Builds the job for one spec (a user's job ignores it; the stock mapping needs it)."""


@dataclass(frozen=True, slots=True)
class JobTarget:
    """A Spark job held to the job contract; emissions only, micro-batch timing. ``lanes``
    queries run side by side (:mod:`windtunnel.spark_impl.harness.job_lanes`)."""

    factory: JobFactory
    name: str
    spark: Any = None
    batched: bool = True
    reports_drops: bool = False
    reports_timing: bool = True
    lanes: int | None = None

    def run_many(self, scenarios: Sequence[Scenario]) -> list[TargetRun]:
        from windtunnel.spark_impl.harness.job_lanes import DEFAULT_LANES
        from windtunnel.spark_impl.harness.user_job import check_job_spec, run_job_many

        by_query: dict[Query, list[int]] = {}
        for index, scenario in enumerate(scenarios):
            check_job_spec(scenario.query)  # input errors before Spark starts
            by_query.setdefault(scenario.query, []).append(index)
        spark = check_session(self.spark)
        found: dict[int, TargetRun] = {}
        for query, members in by_query.items():
            chosen = [scenarios[i] for i in members]
            # a deduplication remembers keys from one scenario into the next when they
            # share a query (Spark's state is the query's): one query per scenario then
            batched = self.batched and not any(s.kind == "deduplicate" for s in query.stages)
            runs = run_job_many(spark, self.factory(query), chosen, self.name, batched,
                                self.lanes or DEFAULT_LANES)
            for index, scenario, run in zip(members, chosen, runs, strict=True):
                indexes = check_indexes(scenario, run.plan.feed.seq_ranges)
                found[index] = TargetRun(
                    run.emissions, tuple(indexes[b] for b in run.micro_batches)
                )
        return [found[i] for i in range(len(scenarios))]

    def solo(self) -> JobTarget:
        """This target with each scenario in a query of its own (queries side by side)."""
        return replace(self, batched=False)

    def plan(self, scenario: Scenario) -> JobPlan:
        """What the job's analyzed plan says it does over ``scenario``'s events
        (:mod:`windtunnel.conformance.job_plan`); nothing runs."""
        from windtunnel.spark_impl.harness.user_job import job_frames

        events, result = job_frames(check_session(self.spark), self.factory(scenario.query),
                                    scenario, self.name)
        return read_plan(plan_text(result), plan_text(events))


def production_target(spark: Any = None) -> ProductionTarget:
    """``spark``: the production operator (``spark=None``: windtunnel's own session, reused)."""
    return ProductionTarget(spark)


def fast_target(spark: Any = None) -> ProductionTarget:
    """``spark-fast``: the production operator under its old name."""
    return ProductionTarget(spark, name="spark-fast")


def general_target(spark: Any = None) -> GeneralTarget:
    """``spark-general``: the general operator (``spark=None``: windtunnel's own session)."""
    return GeneralTarget(spark)


def stock_target(spark: Any = None, *, batched: bool = True,
                 lanes: int | None = None) -> JobTarget:
    """``spark-stock``: the stock mapping, run through the job contract's machinery."""

    def factory(query: Query) -> Callable[[Any], Any]:
        from windtunnel.spark_impl.stock.mapping import check_stock, stock_window

        check_stock(query)
        return lambda events: stock_window(events, query)

    return JobTarget(factory, "spark-stock", spark, batched, lanes=lanes)


def job_target(
    job: Callable[[Any], Any] | str,
    spark: Any = None,
    *,
    name: str | None = None,
    batched: bool = True,
    lanes: int | None = None,
) -> JobTarget:
    """A user's Spark job ``job(events) -> DataFrame``, given as a callable or as
    ``module:function``. ``batched=False`` runs one query per scenario (for a job whose
    result depends on absolute times); ``lanes`` queries run side by side (default
    ``job_lanes.DEFAULT_LANES``). Raises InvalidSpec for a bad ``module:function`` or a
    non-callable; a job breaking the contract fails when run, with InvalidSpec."""
    if isinstance(job, str):
        label = name or job
        function = load_function(job)
    elif callable(job):
        function = job
        label = name or f"{getattr(job, '__module__', '?')}:{getattr(job, '__qualname__', job)}"
    else:
        raise InvalidSpec("--job", job, "must be a function or module:function",
                          "give e.g. my_jobs:windowed")
    return JobTarget(lambda _query: function, label, spark, batched, lanes=lanes)


EXACT = TargetEntry(
    production_target,
    "windtunnel's production operator on Spark Structured Streaming (what windtunnel run runs)",
)
FAST = TargetEntry(fast_target, "the production operator (spark), under its former name")
GENERAL = TargetEntry(
    general_target,
    "windtunnel's general operator (apply_window: transformWithStateInPandas, every query)",
)
STOCK = TargetEntry(
    stock_target,
    "stock Spark windows (window/session_window + withWatermark)",
    stand_in="spark",
)


def spark_divergences(scenario: Scenario) -> list[str]:
    """What the pytest plugin reports for ``--windtunnel-engine spark|both``: divergences
    between Spark and the oracle (a ``spark``-profile scenario: stock Spark, emissions
    only; else windtunnel's operators, every output), as ``replay --engine both`` reports."""
    from windtunnel.spark_impl.harness.replay import compare_with_oracle, replay_scenario

    return compare_with_oracle(scenario, replay_scenario(scenario))
