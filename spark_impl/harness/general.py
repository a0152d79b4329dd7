"""Many scenarios in one Spark query of the general operator, each exactly as if run alone.

The general operator keeps one oracle driver per bucket (``processor.BucketStep``), and a
bucket's wall clock, event clocks, idle timers and ``after_seq`` come only from the rows
sent to it. So scenarios that share a query *by bucket* cannot influence each other:
scenario ``j`` of a query gets bucket ``j`` for all of its rows (events and its own
``clock``/``end`` control rows, never copied to other buckets), and that bucket sees
exactly the rows a one-bucket solo replay (:func:`windtunnel.spark_impl.harness.replay.replay_on_spark`
with one bucket) sees, in the same micro-batches. Every output (``after_seq``, ``wall_ms``
and ``idle_timeout`` closes included) is therefore the solo run's. This is stronger than a
scenario id in the group key: the wall clock is per bucket, not per key, so scenarios with
different ``at``/``advance`` items and ``idle_timeout`` share a query too.

Micro-batches are aligned: Spark's micro-batch ``i`` holds micro-batch ``i`` of every
scenario (:func:`windtunnel.spark_impl.harness.feed.feed`, one micro-batch per ``batch`` item and
per lone event). Scenarios share a query when they share the window spec, rules, time unit
and start wall clock (one operator step serves them all); others go to further queries.
The processor tags each output with its bucket, which names the scenario.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from windtunnel.oracle.engine import DEFAULT_RULES
from windtunnel.oracle.model.results import Result
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.stages import refuse_stages
from windtunnel.oracle.scenario import Scenario
from windtunnel.spark_impl.general.operator import check_rules, chunked, spread_labels
from windtunnel.spark_impl.general.processor import make_steps
from windtunnel.spark_impl.general.stateful import WindowProcessor
from windtunnel.spark_impl.harness.feed import Feed, Row, feed
from windtunnel.spark_impl.harness.runs import SparkRun
from windtunnel.spark_impl.jobs.scripted import scripted_stream
from windtunnel.spark_impl.schema import OUTPUT_DDL, output_of, print_order
from windtunnel.spark_impl.scratch import checkpoint_dir

MAX_PER_QUERY = 400
"""Scenarios per query at most (their rows travel in the scripted source's options)."""

TAG = "wt_bucket"
TAGGED_DDL = f"{OUTPUT_DDL}, {TAG} int"
"""The operator's output rows plus the state key (bucket label) they came from."""


class TaggedProcessor(WindowProcessor):
    """The general operator's processor, each output row tagged with its bucket's label."""

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Any]:
        for out in super().handleInputRows(key, rows, timerValues):
            yield out.assign(**{TAG: int(key[0])})


@dataclass(frozen=True, slots=True)
class GeneralRun:
    """One scenario's share of a batched query: its outputs as a solo replay reports them,
    and the Spark micro-batch each output came out in."""

    run: SparkRun
    micro_batches: tuple[int, ...]


def general_rules(scenario: Scenario) -> Rules:
    """The rules the general operator runs ``scenario`` under: its own for a ``tenzir``
    scenario (InvalidSpec for rules it cannot run), else the default profile's."""
    refuse_stages(scenario.query.stages, "windtunnel's general Spark operator")
    if scenario.profile.name == "tenzir":
        check_rules(scenario.rules)
        return scenario.rules
    return DEFAULT_RULES


def _spec_key(scenario: Scenario) -> tuple[Any, ...]:
    return (scenario.query, general_rules(scenario), scenario.time_unit_ms, scenario.start_wall_ms)


def query_groups(scenarios: Sequence[Scenario], limit: int = MAX_PER_QUERY) -> list[list[int]]:
    """Indexes of ``scenarios`` that share one query: same spec, rules, time unit and
    start wall clock, at most ``limit`` each, in first-seen order."""
    groups: dict[tuple[Any, ...], list[list[int]]] = {}
    order: list[list[int]] = []
    for index, scenario in enumerate(scenarios):
        chunks = groups.setdefault(_spec_key(scenario), [])
        if not chunks or len(chunks[-1]) >= limit:
            chunks.append([])
            order.append(chunks[-1])
        chunks[-1].append(index)
    return order


def run_general_many(spark: Any, scenarios: Sequence[Scenario]) -> list[GeneralRun]:
    """Every scenario through the general operator, many per query; one GeneralRun each, in
    order. Raises InvalidSpec/InvalidStream (before Spark runs) for what cannot run."""
    results: dict[int, GeneralRun] = {}
    for group in query_groups(scenarios):
        runs = _run_group(spark, [scenarios[i] for i in group])
        results.update(zip(group, runs, strict=True))
    return [results[i] for i in range(len(scenarios))]


def _tagged(rows: Sequence[Row], bucket: int) -> list[Row]:
    return [(bucket, *row[1:]) for row in rows]


def _run_group(spark: Any, scenarios: Sequence[Scenario]) -> list[GeneralRun]:
    first = scenarios[0]
    rules = general_rules(first)
    feeds: list[Feed] = [
        feed(s.items, s.query.group_by, buckets=1, start_wall_ms=s.start_wall_ms)
        for s in scenarios
    ]
    length = max(len(f.batches) for f in feeds)
    batches = [
        [row for j, f in enumerate(feeds) if i < len(f.batches) for row in _tagged(f.batches[i], j)]
        for i in range(length)
    ]
    steps = make_steps(
        first.query, rules, time_unit_ms=first.time_unit_ms, start_wall_ms=first.start_wall_ms
    )
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions") or "2")
    labels = spread_labels(len(scenarios), partitions)
    out = (
        chunked(scripted_stream(spark, batches), labels)
        .groupBy("bucket")
        .transformWithStateInPandas(
            statefulProcessor=TaggedProcessor(steps),
            outputStructType=TAGGED_DDL,
            outputMode="Append",
            timeMode="None",
        )
    )
    collected = collect_by_batch(out)
    owner = {label: j for j, label in enumerate(labels)}
    records: list[list[tuple[dict[str, Any], int]]] = [[] for _ in scenarios]
    for batch_id, record in collected:
        records[owner[record.pop(TAG)]].append((record, batch_id))
    runs = []
    for fed, mine in zip(feeds, records, strict=True):
        mine.sort(key=lambda pair: print_order(pair[0]))
        outputs = tuple(output_of(r) for r, _ in mine)
        steps_of = tuple(r["step"] for r, _ in mine)
        runs.append(
            GeneralRun(SparkRun(Result(outputs), fed, steps_of, "exact"), tuple(b for _, b in mine))
        )
    return runs


def collect_by_batch(
    out: Any, checkpoint: str | None = None, *, output_mode: str = "append", what: str = "multi"
) -> list[tuple[int, dict[str, Any]]]:
    """Run a streaming DataFrame to its end (AvailableNow, ``output_mode``, ``foreachBatch``);
    its rows as dicts, each with the id of the micro-batch that produced it. Without
    ``checkpoint`` a temporary ``windtunnel-<what>-*`` one is used and removed."""
    collected: list[tuple[int, dict[str, Any]]] = []

    def keep(batch: Any, batch_id: int) -> None:
        collected.extend((batch_id, r.asDict(recursive=True)) for r in batch.collect())

    with checkpoint_dir(checkpoint, what) as location:
        query = (
            out.writeStream.outputMode(output_mode)
            .foreachBatch(keep)
            .option("checkpointLocation", location)
            .trigger(availableNow=True)
            .start()
        )
        try:
            query.awaitTermination()
        finally:
            query.stop()
    return collected
