"""How the production operator reads a micro-batch: the stream columns it leaves out, and
the two ways it gets the rows (the rows ``foreachBatch`` hands over, or the plan executed)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from windtunnel.oracle import Aggregation, FixedWindows, Query
from windtunnel.oracle.engine import DEFAULT_RULES, run
from windtunnel.oracle.model.stream import Event
from windtunnel.spark_impl.schema import OUTPUT_DDL, canonical_lines, outputs_in_order

pytestmark = pytest.mark.spark

QUERY = Query(
    FixedWindows(10_000, on="ts", every_ms=5_000),
    group_by=("user",),
    aggregate=(Aggregation("n", "count"), Aggregation("total", "sum", "amount")),
)
#   seq:      0     1     2     3     4     5
#   ts (s):   1     3     12    2     24    26     seq 3 is late for [0s,10s) once seq 4 is in
ROWS = [
    (0, 1_000, 1_000, "a", 5),
    (1, 3_000, 3_000, "b", 7),
    (2, 12_000, 12_000, "a", 1),
    (3, 13_000, 2_000, "a", 2),
    (4, 24_000, 24_000, "a", 3),
    (5, 26_000, 26_000, "b", 4),
]
DDL = "seq long, arrival_ms long, ts long, user string, amount long"


def _oracle() -> Counter[str]:
    events = [Event(s, {"ts": t, "user": u, "amount": a}, arr) for s, arr, t, u, a in ROWS]
    outputs = run(QUERY, events).outputs
    return Counter(canonical_lines([o for o in outputs if getattr(o, "reason", "") != "end_of_input"]))


def test_a_source_without_control_columns_is_read_without_them(spark: Any) -> None:
    from pyspark.sql import functions as F

    from windtunnel.spark_impl.jobs.sources import dataframe_source
    from windtunnel.spark_impl.production.run import prepared_input

    plain = dataframe_source(spark.createDataFrame(ROWS, DDL))
    selected, layout, _ = prepared_input(plain, QUERY)
    assert (layout["kind"], layout["after_seq"]) == (-1, -1)
    assert "kind" not in selected.columns and "after_seq" not in selected.columns
    # a tick source is added later: its rows need the kind column
    _, kept, _ = prepared_input(plain, QUERY, read_constants=True)
    assert kept["kind"] >= 0 and kept["after_seq"] >= 0
    # a kind column the job computes is read, whatever it is computed from
    computed = plain.withColumn("kind", F.when(F.col("seq") == 5, "end").otherwise(F.col("kind")))
    _, layout, _ = prepared_input(computed, QUERY)
    assert layout["kind"] >= 0


def _one_micro_batch(
    jvm: Any, spark: Any, plan: str, checkpoint: str, selected: Any, out: Path
) -> int:
    """Micro-batch 0 of ``selected`` on the production operator into JSON files in ``out``,
    committed: its rows in."""
    from windtunnel.spark_impl.production.run import open_run

    job = open_run(jvm, spark, plan, checkpoint)
    try:
        job.writeFiles(selected._jdf, 0, -(2**63), "json", str(out))
        rows_in, _, _ = (int(v) for v in job.commit(0))
    finally:
        job.close()
    return rows_in


@pytest.mark.parametrize("given_as", ["rows-of-an-rdd", "local-relation"])
def test_either_way_of_reading_the_micro_batch_gives_the_oracles_outputs(
    spark: Any, tmp_path: Path, given_as: str
) -> None:
    """``foreachBatch`` gives a plan over an RDD of rows, which is read directly; any other
    plan is executed first. Both give the oracle's outputs."""
    from windtunnel.spark_impl.job import JobSpec, choose_path
    from windtunnel.spark_impl.jobs.sources import dataframe_source
    from windtunnel.spark_impl.jvm.binding import load
    from windtunnel.spark_impl.jvm.engine_spec import engine_spec
    from windtunnel.spark_impl.production.plan import plan_json
    from windtunnel.spark_impl.production.run import prepared_input

    checkpoint = str(tmp_path / "ckpt")
    choice = choose_path(JobSpec(QUERY, DEFAULT_RULES), spark=spark, checkpoint=checkpoint, slices=2)
    assert (choice.path, choice.slices) == ("production", 2), choice.explain()
    selected, layout, time_is_ts = prepared_input(
        dataframe_source(spark.createDataFrame(ROWS, DDL)), QUERY
    )
    if given_as == "rows-of-an-rdd":  # as foreachBatch gives it
        selected = spark.createDataFrame(selected.rdd.repartition(2), selected.schema)
    plan_kind = selected._jdf.queryExecution().analyzed().getClass().getSimpleName()
    assert (plan_kind == "LogicalRDD") == (given_as == "rows-of-an-rdd")
    plan = plan_json(QUERY, engine_spec(QUERY, DEFAULT_RULES, 1, 0), 2, layout,
                     time_is_timestamp=time_is_ts)
    rows_in = _one_micro_batch(load(spark).jvm, spark, plan, checkpoint, selected, tmp_path / "out")
    assert rows_in == len(ROWS)
    got = [r.asDict() for r in spark.read.schema(OUTPUT_DDL).json(str(tmp_path / "out")).collect()]
    assert Counter(canonical_lines(outputs_in_order(got))) == _oracle()
