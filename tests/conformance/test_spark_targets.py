"""Spark targets without Spark: job specs, micro-batch numbering, how scenarios are placed
in a shared query, and the events' column types."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from pyspark.sql import types as T

from windtunnel.conformance.targets import target_named
from windtunnel.conformance.targets.spark import check_indexes, check_session, job_target
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.scenario import Scenario, load_yaml, parse_scenario
from windtunnel.spark_impl.harness.feed import feed
from windtunnel.spark_impl.harness.general import query_groups
from windtunnel.spark_impl.harness.job_columns import event_schema
from windtunnel.spark_impl.harness.job_placement import separation_ms, shift_unit_ms, shifted_plans
from windtunnel.spark_impl.harness.stock_replay import plan_stock


def _scenario(text: str) -> Scenario:
    return parse_scenario(load_yaml(text))


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("no_colon", "must be module:function"),
        ("windtunnel_no_such_module:job", "cannot be imported"),
        ("os.path:no_such_function", "has no attribute"),
    ],
)
def test_bad_job_specs_are_one_line(spec: str, words: str) -> None:
    with pytest.raises(InvalidSpec) as caught:
        job_target(spec)
    assert words in str(caught.value) and "\n" not in str(caught.value)
    assert str(caught.value).startswith(f"--job={spec!r}")


def test_a_job_that_is_not_callable_is_refused() -> None:
    with pytest.raises(InvalidSpec, match="must be a function or module:function"):
        job_target(42)  # type: ignore[arg-type]


def test_target_named_builds_spark_targets_lazily() -> None:
    assert target_named("spark").name == "spark"
    stock = target_named("spark-stock")
    assert (stock.name, stock.reports_drops, stock.reports_timing) == ("spark-stock", False, True)
    job = target_named("os.path:join")
    assert job.name.endswith(":join") and not job.reports_drops


def test_a_job_spec_needs_an_event_time_and_an_aggregate() -> None:
    now = _scenario("window: {size: 10, on: now()}\naggregate: {n: count()}\ninput: [{x: 1}]")
    with pytest.raises(InvalidSpec, match=r"window.on='now\(\)'"):
        job_target(lambda e: e).run_many([now])
    bare = _scenario("window: {size: 10}\ninput: [{ts: 1}]")
    with pytest.raises(InvalidSpec, match="aggregate=None"):
        job_target(lambda e: e).run_many([bare])


STREAM = """
window: {size: 10}
aggregate: {n: count()}
input:
  - {ts: 1}
  - {advance: 5}
  - {batch: [{ts: 2}, {ts: 3}]}
  - {ts: 4}
  - {advance: 9}
"""


def test_check_indexes_number_micro_batches_as_the_check_does() -> None:
    scenario = _scenario(STREAM)
    fed = feed(scenario.items, (), buckets=1)
    # exact feed: [e0] [advance] [e1 e2] [e3] [advance, end]; the trailing one is the last
    assert check_indexes(scenario, fed.seq_ranges) == [0, 1, 2, 3, 3, 3]
    plan = plan_stock(scenario)
    # stock: the advance joins the batch; the no-data micro-batch counts as the last
    assert check_indexes(scenario, plan.feed.seq_ranges) == [0, 2, 3, 3]


def _fixed(times: list[int], kind: str = "{size: 10s, every: 4s, tolerance: 1s}") -> Scenario:
    events = "".join(f"\n  - {{ts: {t}, k: a}}" for t in times)
    return _scenario(f"profile: spark\nwindow: {kind}\ngroup_by: k\n"
                     f"aggregate: {{n: count()}}\ninput:{events}")


def test_scenarios_are_placed_far_apart_on_the_window_grid() -> None:
    scenarios = [_fixed([5000, 1000]), _fixed([-3000, 20000]), _fixed([7])]
    query = scenarios[0].query
    (placed,) = shifted_plans([plan_stock(s) for s in scenarios], query)
    unit = shift_unit_ms(query)
    assert unit % 4000 == 0 and unit % 86_400_000 == 0
    assert [p.offset_ms % unit for p in placed] == [0, 0, 0]
    assert placed[0].offset_ms == 0
    for before, after in itertools.pairwise(placed):
        assert before.high_ms <= after.low_ms  # windows of two scenarios never mix
        assert after.first_batch == before.last_batch  # its first is the no-data micro-batch
        assert after.offset_ms - before.offset_ms >= separation_ms(query)


def test_a_session_scenario_before_the_epoch_starts_its_own_query() -> None:
    kind = "{kind: session, gap: 5s}"
    scenarios = [_fixed([1], kind), _fixed([-2000, 4000], kind), _fixed([3], kind)]
    placed = shifted_plans([plan_stock(s) for s in scenarios], scenarios[0].query)
    assert [[p.offset_ms > 0 for p in q] for q in placed] == [[False], [False, True]]


def test_the_general_operator_shares_a_query_per_spec() -> None:
    a, b = _scenario(STREAM), _fixed([1])
    b = dataclasses.replace(b, profile=a.profile, rules=a.rules)
    assert query_groups([a, b, a, a], limit=2) == [[0, 2], [1], [3]]


def test_events_are_typed_from_their_values() -> None:
    scenario = _scenario("""
profile: spark
window: {size: 10, on: meta.ts}
group_by: k
aggregate: {total: sum(v)}
input:
  - {meta: {ts: 1, src: x}, k: a, v: 1, tags: [1], f: 1.5, flag: true}
  - {meta: {ts: 2}, k: b, v: 2.5, tags: null, f: 2, flag: false}
""")
    payloads = [e.payload for e in scenario.items if hasattr(e, "payload")]
    schema = event_schema(scenario.query, payloads)
    kinds = {f.name: f.dataType for f in schema.fields}
    assert kinds["k"] == T.StringType() and kinds["v"] == T.DoubleType()
    assert kinds["tags"] == T.StringType() and kinds["f"] == T.DoubleType()
    assert kinds["flag"] == T.BooleanType()
    meta = kinds["meta"]
    assert isinstance(meta, T.StructType)
    assert {f.name: f.dataType for f in meta.fields} == {
        "src": T.StringType(), "ts": T.TimestampType()
    }


def test_a_check_starts_its_own_session_with_the_check_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without a session, the Spark targets start one with CHECK_CONF (the JIT settings for
    many small micro-batches), in-process local file permissions and the closure checks agent;
    a session given is used as it is."""
    from windtunnel.spark_impl import session

    started: list[tuple[dict[str, str] | None, bool, bool]] = []

    class Context:
        def setLogLevel(self, level: str) -> None:
            assert level == "ERROR"

    class Session:
        sparkContext = Context()

    def fake_session(
        *_args: object, conf: dict[str, str] | None = None, local_files: bool = False,
        closure_checks: bool = False,
    ) -> Session:
        started.append((conf, local_files, closure_checks))
        return Session()

    monkeypatch.setattr(session, "spark_session", fake_session)
    assert isinstance(check_session(None), Session)
    assert started == [(session.CHECK_CONF, True, True)]
    assert "-XX:TieredStopAtLevel=1" in session.CHECK_CONF["spark.driver.extraJavaOptions"]
    given = object()
    assert check_session(given) is given
    assert len(started) == 1
