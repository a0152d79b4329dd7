"""Stages before the window on real Spark: the stock mapping (filter,
dropDuplicatesWithinWatermark, dropDuplicates after withWatermark) equals the oracle's
``spark`` profile micro-batch by micro-batch (docs/semantics.md D1-D4 were measured with
these streams), on written streams and on generated ones; a user job filtering on the
event time is held to the profile, and a job reading a field the spec does not know is
told which. The example's jobs (examples/clicks_jobs.py: one holds to
examples/clicks-dedup.yaml, the other, with its steps swapped, is caught) are checked by
docs/conformance.md's commands, which tests/test_docs_commands.py runs under the spark
marker."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from windtunnel.conformance.check import check
from windtunnel.conformance.targets.spark import job_target, stock_target
from windtunnel.oracle.engine import replay
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.stages import Deduplicate
from windtunnel.oracle.scenario import load_spec, load_yaml, parse_scenario
from windtunnel.spark_impl.stock import compare_stock, replay_stock

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CLICKS = EXAMPLES / "clicks-dedup.yaml"

# size 10 s, delay 5 s, group k; where v > 0, then deduplicate on id within 5 s.
# wm_N = max event time of micro-batches 0..N-1 - 5 (never below 0); the deduplicate stage
# drops rows at or behind wm_{N-1} and evicts keys whose first time + 5 s wm_N reaches at
# the end of micro-batch N.
#   mb  events                         what happens
#   0   q@0 a@1                        q@0 late (0 <= wm 0); a kept (key a until 6)
#   1   a@3 b@2 b@4                    a, b@4 duplicates (the first b in the batch wins)
#   2   c@12
#   3   a@6                            duplicate (a evicted only at this batch's end, wm 7)
#   4   a@13                           kept again
#   5   d@7                            late (7 <= wm 7)
#   6   x@40 v=-1                      filtered; v > 0 is pushed below withWatermark: the
#                                      watermark does not move to 35
#   7   a@14                           duplicate of a@13
#   8   e@30
#   9   z@null z@31                    the null time claims z for this batch: z@31 duplicate
#   10  a@26   11  z@33                kept (z evicted at the end of batch 9)
#   12  f@25 v=null                    filtered (unknown)
STAGES = """
profile: spark
time_unit: s
window: {size: 10, tolerance: 5}
group_by: k
aggregate: {n: count(), s: sum(v)}
where: v > 0
deduplicate: {key: id, within: 5s}
input:
  - batch: [{ts: 0, id: q, k: x, v: 1}, {ts: 1, id: a, k: x, v: 1}]
  - batch: [{ts: 3, id: a, k: x, v: 2}, {ts: 2, id: b, k: y, v: 3}, {ts: 4, id: b, k: y, v: 4}]
  - {event: {ts: 12, id: c, k: x, v: 5}}
  - {event: {ts: 6, id: a, k: x, v: 6}}
  - {event: {ts: 13, id: a, k: y, v: 7}}
  - {event: {ts: 7, id: d, k: x, v: 8}}
  - {event: {ts: 40, id: x, k: x, v: -1}}
  - {event: {ts: 14, id: a, k: x, v: 10}}
  - {event: {ts: 30, id: e, k: y, v: 9}}
  - batch: [{ts: null, id: z, k: x, v: 1}, {ts: 31, id: z, k: x, v: 2}]
  - {event: {ts: 26, id: a, k: x, v: 11}}
  - {event: {ts: 33, id: z, k: x, v: 3}}
  - {event: {ts: 25, id: f, k: x, v: null}}
  - {event: {ts: 60, id: g, k: y, v: 1}}
"""

# dropDuplicates([id, ts]) = within 0 s with the event time in the key (delay 5 s)
DROP_DUPLICATES = """
profile: spark
time_unit: s
window: {size: 10, tolerance: 5}
aggregate: {n: count()}
deduplicate: {key: [id, ts], within: 0s}
input:
  - {event: {ts: 1, id: a}}
  - {event: {ts: 1, id: a}}
  - {event: {ts: 20, id: b}}
  - {event: {ts: 1, id: a}}
  - {event: {ts: 16, id: b}}
  - {event: {ts: 20, id: b}}
  - {event: {ts: 40, id: c}}
"""

# delay 0: the duplicate a@25 moves the watermark, so c@3 is late and [0,10) is emitted
MOVES = """
profile: spark
time_unit: s
window: {size: 10}
aggregate: {n: count()}
deduplicate: {key: id}
input: [{ts: 1, id: a}, {ts: 25, id: a}, {ts: 2, id: b}, {ts: 3, id: c}]
"""


def scenario_of(text: str) -> Any:
    return parse_scenario(load_yaml(text))


@pytest.mark.spark
@pytest.mark.parametrize("text", [STAGES, DROP_DUPLICATES, MOVES], ids=["stages", "dropDuplicates", "moves"])
def test_stock_stages_equal_the_spark_profile(spark: Any, text: str) -> None:
    scenario = scenario_of(text)
    run = replay_stock(scenario, spark)
    assert run.result.emissions, "the stream must emit something to compare"
    assert compare_stock(scenario, run) == []


def test_the_written_streams_show_what_the_comments_say() -> None:
    drops = [(d.seq, d.reason) for d in replay(scenario_of(STAGES)).drops]
    assert drops == [(0, "late"), (2, "duplicate"), (4, "duplicate"), (6, "duplicate"),
                     (8, "late"), (9, "filtered"), (10, "duplicate"), (12, "null_time"),
                     (13, "duplicate"), (16, "filtered")]
    assert [(d.seq, d.reason) for d in replay(scenario_of(MOVES)).drops] == [
        (1, "duplicate"), (3, "late")]


@pytest.mark.spark
def test_stock_spark_equals_the_spark_profile_on_generated_streams(spark: Any) -> None:
    """The example's spec, with the event time in the key too (dropDuplicatesWithinWatermark
    on [click_id, ts]): generated streams with repeated keys, redeliveries, test clicks."""
    spec = load_spec(CLICKS)
    stages = (spec.query.stages[0], Deduplicate(("click_id", "ts"), 30_000))
    query = dataclasses.replace(spec.query, stages=stages)
    result = check(dataclasses.replace(spec, query=query), stock_target(spark), examples=5, seed=5,
                   shrink_seconds=0)
    assert result.failure is None, result.failure
    assert result.checked == 6


# Two scenarios with the same click_id: run in one shared query, the second one's c1 would
# be a duplicate of the first's (the deduplication's state is the query's), so a spec with
# a deduplicate stage runs one query per scenario.
SHARED = """
profile: spark
time_unit: s
window: {size: 60, tolerance: 30}
group_by: campaign
aggregate: {clicks: count()}
deduplicate: {key: [click_id]}
input: [{ts: FIRST, click_id: c1, campaign: x}, {ts: 200, click_id: OTHER, campaign: x}]
"""


@pytest.mark.spark
def test_scenarios_of_a_deduplicating_spec_do_not_share_keys(spark: Any) -> None:
    first = scenario_of(SHARED.replace("FIRST", "50").replace("OTHER", "c2"))
    second = scenario_of(SHARED.replace("FIRST", "5").replace("OTHER", "c3"))
    runs = stock_target(spark).run_many([first, second])
    assert [[dict(e.row) for e in run.outputs] for run in runs] == [[{"clicks": 1}]] * 2


# A filter that reads the event-time column stays above withWatermark: the row it removes
# (x@25: ts < 20 is false, v > 0 true) still moves the watermark, so c@3 is late.
PUSHED = """
profile: spark
time_unit: s
window: {size: 10}
aggregate: {n: count()}
where: ts < 20 AND v > 0
input: [{ts: 1, v: 1}, {ts: 25, v: 1}, {ts: 2, v: 1}, {ts: 3, v: 1}, {ts: 40, v: 1}]
"""


def filter_on_time(events: DataFrame) -> DataFrame:
    return (
        events.withWatermark("ts", "0 seconds")
        .filter((F.col("ts") < F.timestamp_seconds(F.lit(20))) & (F.col("v") > 0))
        .groupBy(F.window("ts", "10 seconds")).agg(F.count(F.lit(1)).alias("n"))
    )


@pytest.mark.spark
def test_a_filter_reading_the_event_time_moves_the_watermark_as_the_profile_says(spark: Any) -> None:
    scenario = scenario_of(PUSHED)
    assert (3, "late") in [(d.seq, d.reason) for d in replay(scenario).drops]
    result = check(scenario, job_target(filter_on_time, spark), examples=0, shrink_seconds=0)
    assert result.failure is None, result.failure


def reads_country(events: DataFrame) -> DataFrame:
    return (events.withWatermark("ts", "30 seconds")
            .groupBy(F.window("ts", "1 minute"), "campaign", "country").count())


@pytest.mark.spark
def test_a_job_reading_a_field_the_spec_lacks_is_told_which_and_how(spark: Any) -> None:
    spec = load_spec(CLICKS)
    with pytest.raises(InvalidSpec) as error:
        check(spec, job_target(reads_country, spark), examples=0)
    text = str(error.value)
    assert "the job reads column country, which the spec's events do not have" in text
    assert "declare it under fields:" in text and "\n" not in text
