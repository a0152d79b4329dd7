"""Many scenarios per Spark query equal one query per scenario: the general operator (one
bucket per scenario, aligned micro-batches) and stock Spark / user jobs (scenarios one
after another, shifted in time). Several scenarios share each query here too."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from windtunnel.conformance.targets import oracle_target
from windtunnel.conformance.targets.spark import general_target, job_target, stock_target
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.results import Emission
from windtunnel.oracle.model.stream import Advance, Batch, Event, Item
from windtunnel.oracle.scenario import Scenario, load_yaml, parse_scenario
from windtunnel.spark_impl.harness.general import run_general_many
from windtunnel.spark_impl.harness.replay import compare_with_oracle, replay_on_spark
from windtunnel.spark_impl.harness.runs import divergences
from windtunnel.spark_impl.harness.stock_replay import compare_stock, replay_stock

pytestmark = pytest.mark.spark


def random_streams(seed: int, count: int, *, events: int = 8, nulls: bool = True,
                   advances: bool = True) -> list[tuple[Item, ...]]:
    """``count`` seeded streams: disordered times (some before the epoch), three keys,
    batches, advances and null times."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        items: list[Item] = []
        seq, base, wall = 0, 0, 0
        while seq < events:
            if advances and rng.random() < 0.2:
                wall += rng.randint(1000, 9000)
                items.append(Advance(wall))
            size = rng.choice((1, 1, 2, 3))
            batch = []
            for _ in range(size):
                base += rng.randint(0, 6000)
                wall += rng.randint(0, 3000)
                ts = None if nulls and rng.random() < 0.1 else base - rng.randint(0, 12000)
                payload = {"ts": ts, "key": rng.choice("abc"), "value": rng.randint(0, 9)}
                batch.append(Event(seq, payload, wall))
                seq += 1
            items.append(batch[0] if size == 1 else Batch(tuple(batch)))
        out.append(tuple(items))
    return out


def _spec(text: str) -> Scenario:
    return parse_scenario(load_yaml(text + "\ninput: []\n"))


def _with_streams(spec: Scenario, items: list[tuple[Item, ...]]) -> list[Scenario]:
    return [dataclasses.replace(spec, items=i, name=f"s{n}") for n, i in enumerate(items)]


GROUPED = _spec("""
window: {size: 10s, every: 5s, tolerance: 2s, idle_timeout: 7s}
group_by: key
aggregate: {n: count(), total: sum(value)}
""")
UNGROUPED = _spec("window: {size: 8s, on: ts}\naggregate: {n: count(), hi: max(value)}")


def test_exact_batched_equals_solo_replays_and_the_oracle(spark: Any) -> None:
    grouped, ungrouped = random_streams(1, 5, events=6), random_streams(2, 3, events=6)
    scenarios = _with_streams(GROUPED, grouped) + _with_streams(UNGROUPED, ungrouped)
    runs = run_general_many(spark, scenarios)  # two queries: one per spec
    for scenario, run in zip(scenarios, runs, strict=True):
        assert compare_with_oracle(scenario, run.run) == [], scenario.items
        assert len(run.micro_batches) == len(run.run.result.outputs)
    assert any(r.run.result.outputs for r in runs)
    assert any(o.reason == "idle_timeout" for r in runs for o in r.run.result.outputs)
    for index in (0, 5):  # one grouped, one ungrouped scenario alone in its own query
        solo = replay_on_spark(scenarios[index], spark, buckets=1)
        assert divergences(solo.result.outputs, runs[index].run.result.outputs) == []
        assert sorted(solo.steps) == sorted(runs[index].run.steps)


def test_general_target_reports_drops_and_micro_batches(spark: Any) -> None:
    scenario = parse_scenario(load_yaml("""
window: {size: 10, on: ts}
group_by: k
aggregate: {n: count()}
input:
  - {ts: 1, k: a}
  - {batch: [{ts: 12, k: a}, {ts: 3, k: a}, {ts: 2, k: b}]}
  - {ts: 25, k: a}
"""))
    (run,) = general_target(spark).run_many([scenario])
    (want,) = oracle_target("tenzir").run_many([scenario])
    def timed(outputs: Any, batches: Any) -> list[str]:
        return sorted(str(p) for p in zip(outputs, batches, strict=True) if p[0].type == "emit")

    assert timed(run.outputs, run.micro_batches) == timed(want.outputs, want.micro_batches)
    assert len(timed(run.outputs, run.micro_batches)) == 4
    assert [o for o in run.outputs if o.type == "drop"] == [
        o for o in want.outputs if o.type == "drop"
    ]


STOCK = _spec("""
profile: spark
window: {size: 10s, every: 5s, tolerance: 2s}
group_by: key
aggregate: {n: count(), total: sum(value), from: window_start()}
""")


def test_stock_batched_equals_solo_runs_and_the_spark_profile(spark: Any) -> None:
    scenarios = _with_streams(STOCK, random_streams(3, 4, events=6, nulls=False))
    runs = stock_target(spark).run_many(scenarios)
    assert any(r.outputs for r in runs)
    for scenario, run in zip(scenarios, runs, strict=True):
        solo = replay_stock(scenario, spark)
        assert compare_stock(scenario, solo) == []
        assert divergences(solo.result.outputs, run.outputs) == [], scenario.items
        assert run.micro_batches is not None and None not in run.micro_batches


WRONG_DELAY = _spec("""
profile: spark
window: {size: 10, tolerance: 5}
group_by: k
aggregate: {n: count(), total: sum(v)}
""")
# seq 2 (ts 3, its own micro-batch) sees wm = 25 - 5 = 20 >= 10: late in [0,10). With a
# delay of 30 the watermark stays at 0: it counts, and [0,10) closes only at 40.
LATE_ISH = parse_scenario(load_yaml("""
profile: spark
window: {size: 10, tolerance: 5}
group_by: k
aggregate: {n: count(), total: sum(v)}
input:
  - {ts: 2, k: a, v: 1}
  - {ts: 25, k: a, v: 2}
  - {ts: 3, k: a, v: 4}
  - {ts: 50, k: b, v: 8}
"""))


def stock_by_hand(events: Any) -> Any:
    """The stock mapping of WRONG_DELAY's spec, written as a user would."""
    from pyspark.sql import functions as F

    return (
        events.withWatermark("ts", "5 milliseconds")
        .groupBy(F.window("ts", "10 milliseconds"), "k")
        .agg(F.count(F.lit(1)).alias("n"), F.sum("v").alias("total"))
    )


def wrong_delay(events: Any) -> Any:
    from pyspark.sql import functions as F

    return (
        events.withWatermark("ts", "30 milliseconds")
        .groupBy(F.window("ts", "10 milliseconds"), "k")
        .agg(F.count(F.lit(1)).alias("n"), F.sum("v").alias("total"))
    )


def test_a_user_job_agrees_with_stock_and_a_wrong_one_diverges(spark: Any) -> None:
    scenarios = [LATE_ISH, dataclasses.replace(LATE_ISH, items=LATE_ISH.items[:2])]
    stock = stock_target(spark).run_many(scenarios)
    mine = job_target(stock_by_hand, spark).run_many(scenarios)
    assert [sorted(map(str, r.outputs)) for r in mine] == [sorted(map(str, r.outputs)) for r in stock]
    assert [sorted(r.micro_batches or ()) for r in mine] == [
        sorted(r.micro_batches or ()) for r in stock
    ]
    oracle = [o for o in oracle_target("spark").run_many([LATE_ISH])[0].outputs
              if isinstance(o, Emission)]
    assert divergences(oracle, mine[0].outputs) == []
    wrong = job_target(wrong_delay, spark).run_many([LATE_ISH])[0]
    assert divergences(oracle, wrong.outputs) != []


def no_watermark(events: Any) -> Any:
    from pyspark.sql import functions as F

    return events.groupBy(F.window("ts", "10 milliseconds"), "k").agg(
        F.count(F.lit(1)).alias("n"), F.sum("v").alias("total"))


def no_total(events: Any) -> Any:
    from pyspark.sql import functions as F

    return events.withWatermark("ts", "5 milliseconds").groupBy(
        F.window("ts", "10 milliseconds"), "k").agg(F.count(F.lit(1)).alias("n"))


@pytest.mark.parametrize(
    ("job", "words"),
    [
        (no_watermark, "Spark rejects the job"),
        (no_total, "aggregate column 'total'"),
        (lambda events: 42, "must return a streaming DataFrame (got int)"),
        (lambda events: events.sparkSession.range(3), "got a batch DataFrame"),
        (lambda events: 1 / 0, "raised ZeroDivisionError"),
    ],
)
def test_a_job_breaking_the_contract_is_one_line(spark: Any, job: Any, words: str) -> None:
    with pytest.raises(InvalidSpec) as caught:
        job_target(job, spark).run_many([LATE_ISH])
    message = str(caught.value)
    assert words in message and "\n" not in message
    assert message.startswith("--job=")


SESSIONS = _spec("""
profile: spark
window: {kind: session, gap: 4s, tolerance: 3s}
group_by: key
aggregate: {n: count(), hi: max(value)}
""")


@pytest.mark.parametrize("spec", [STOCK, SESSIONS], ids=["hopping", "session"])
def test_the_interpreted_feeding_session_equals_generated_code(
    spark: Any, spec: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Jobs run in a feeding session without Spark's code generation (cheaper for micro-
    batches of a few rows); the rows are those of the same queries with it."""
    from windtunnel.spark_impl.harness import memory_feed

    scenarios = _with_streams(spec, random_streams(5, 3, events=6, nulls=False))
    assert memory_feed.FEEDING_CONF["spark.sql.codegen.factoryMode"] == "NO_CODEGEN"
    interpreted = stock_target(spark, lanes=1).run_many(scenarios)
    generating = {k: v for k, v in memory_feed.FEEDING_CONF.items() if "codegen" not in k}
    monkeypatch.setattr(memory_feed, "FEEDING_CONF", generating)
    monkeypatch.setattr(memory_feed, "_sessions", {})  # sessions built with the new settings
    generated = stock_target(spark, lanes=1).run_many(scenarios)
    assert any(r.outputs for r in generated)
    for one, other in zip(interpreted, generated, strict=True):
        assert divergences(one.outputs, other.outputs) == []
        assert one.micro_batches == other.micro_batches
