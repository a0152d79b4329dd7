"""Replaying a scenario on Spark as exact micro-batches, and comparing with the oracle.

Spark returns rows in no particular order: results are compared as multisets of the
contract's JSON lines, and printed sorted by :func:`windtunnel.spark_impl.schema.print_order`.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from windtunnel.oracle.results import Emission, Output, Result, to_jsonl_line
from windtunnel.oracle.scenario import Scenario
from windtunnel.spark_impl.feed import Feed, feed
from windtunnel.spark_impl.operator import apply_window, bucket_count, check_rules
from windtunnel.spark_impl.schema import outputs_in_order
from windtunnel.spark_impl.scripted import scripted_stream

_query_names = itertools.count()


@dataclass(frozen=True, slots=True)
class SparkRun:
    """What a Spark replay produced: outputs in print order, and the micro-batches fed."""

    result: Result
    feed: Feed


def replay_on_spark(
    scenario: Scenario,
    spark: Any,
    *,
    micro_batch: int = 1,
    buckets: int = 4,
    clock: str = "exact",
    checkpoint: str | None = None,
) -> SparkRun:
    """Run ``scenario`` through the exact operator as a stream of scripted micro-batches.

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
    stream = scripted_stream(spark, fed.batches)
    out = apply_window(
        stream,
        scenario.query,
        rules=scenario.rules,
        time_unit_ms=scenario.time_unit_ms,
        start_wall_ms=scenario.start_wall_ms,
        buckets=used,
        kind="kind",
        after_seq="after_seq",
        payload="payload",
    )
    records = collect_stream(spark, out, checkpoint)
    return SparkRun(Result(tuple(outputs_in_order(records))), fed)


def collect_stream(spark: Any, out: Any, checkpoint: str | None = None) -> list[dict[str, Any]]:
    """Run a streaming DataFrame to its end (AvailableNow) into a memory table; its rows."""
    name = f"windtunnel_out_{next(_query_names)}"
    location = checkpoint or tempfile.mkdtemp(prefix="windtunnel-ckpt-")
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


def _line(output: Output, relax: bool) -> str:
    data = json.loads(to_jsonl_line(output))
    if relax and isinstance(output, Emission) and output.reason == "idle_timeout":
        data["after_seq"] = data["wall_ms"] = None
    return json.dumps(data, sort_keys=True)


def divergences(
    expected: Sequence[Output],
    actual: Sequence[Output],
    *,
    fed: Feed | None = None,
    clock: str = "exact",
) -> list[str]:
    """Readable differences between two runs compared as multisets of JSON lines.

    With ``clock="batch"`` an ``idle_timeout`` emission's ``after_seq`` and ``wall_ms``
    may differ, but its ``after_seq`` must fall in the same micro-batch as the oracle's
    (the granularity rule of docs/spark.md); ``fed`` gives the micro-batches.
    """
    relax = clock == "batch"
    want = Counter(_line(o, relax) for o in expected)
    got = Counter(_line(o, relax) for o in actual)
    problems = []
    for line, n in sorted((want - got).items()):
        problems.append(f"- oracle only{'' if n == 1 else f' (x{n})'}: {line}")
    for line, n in sorted((got - want).items()):
        problems.append(f"+ spark only{'' if n == 1 else f' (x{n})'}: {line}")
    if relax and fed is not None and not problems:
        problems += _batch_rule(expected, actual, fed)
    return problems


def _batch_rule(expected: Sequence[Output], actual: Sequence[Output], fed: Feed) -> list[str]:
    def idle(outputs: Sequence[Output]) -> dict[str, list[int | None]]:
        by: dict[str, list[int | None]] = {}
        for o in outputs:
            if isinstance(o, Emission) and o.reason == "idle_timeout":
                by.setdefault(_line(o, True), []).append(fed.batch_of_seq(o.after_seq))
        return by

    want, got = idle(expected), idle(actual)
    problems = []
    for line, batches in want.items():
        if sorted(batches, key=str) != sorted(got.get(line, []), key=str):
            problems.append(
                f"! idle_timeout in micro-batch {got.get(line)} instead of {batches}: {line}"
            )
    return problems
