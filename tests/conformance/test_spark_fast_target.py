"""``--target spark-fast``: the fast path's micro-batch function held to the oracle.

The conformance check generates streams from each spec (disorder, batches, advances, the
end of input) and compares every output, drops included. Typed tumbling counts run on the
JVM step; other covered queries and streams that need ``clock`` rows on the Python steps.
"""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.conformance.check import check
from windtunnel.conformance.targets import target_named
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.scenario import Scenario, load_yaml, parse_scenario


def scenario(text: str) -> Scenario:
    return parse_scenario(load_yaml(text))


# key 1, windows of 10, tolerance 3 (a window [s, s+10) closes when the key's clock reaches s+13):
#   seq 0 ts 1, seq 1 ts 12 (clock 12 < 13: [0,10) stays open), seq 2 ts 4 -> [0,10)
#   batch: seq 4 ts 14 closes [0,10) (n=2); seq 5 ts 2 is late (the clock is at 14)
#   end of input: [10,20) of key 1 and [20,30) of key 2 flush at wall clock 43
TUMBLING = """
window: {size: 10, on: ts, tolerance: 3}
group_by: [k]
aggregate: {n: count()}
input:
  - {event: {ts: 1, k: 1}, at: 1}
  - {event: {ts: 12, k: 1}, at: 2}
  - {event: {ts: 4, k: 1}, at: 3}
  - {batch: [{ts: 25, k: 2}, {ts: 14, k: 1}, {ts: 2, k: 1}]}
  - {advance: 40}
  - {event: {ts: 26, k: 2}}
"""

SPECS = {
    # typed tumbling counts: the JVM step
    "tumbling count, JVM step": TUMBLING,
    # window_start in the row: still the typed step
    "tumbling count with window_start": TUMBLING.replace("{n: count()}", "{n: count(), ws: window_start()}"),
    # closes when the clock passes end + tolerance (the profile's close_at override)
    "close_at passes": TUMBLING + "rules: {close_at: passes}\n",
    # hopping windows and sums: the Python step on typed rows
    "hopping sum": TUMBLING.replace("{size: 10,", "{size: 10, every: 5,").replace("{n: count()}", "{n: count(), s: sum(ts)}"),
    # a string key: not a typed key column, the Python step
    "string key": TUMBLING.replace("k: 1}", "k: a}").replace("k: 2}", "k: b}"),
}


@pytest.mark.spark
@pytest.mark.parametrize("name", list(SPECS))
def test_fast_path_agrees_with_the_oracle_on_generated_streams(windtunnel_spark: Any, name: str) -> None:
    target = target_named("spark-fast", windtunnel_spark)
    result = check(scenario(SPECS[name]), target, examples=8, seed=3, batch_size=8)
    assert result.failure is None, result.failure
    assert result.checked == 9  # the spec's own input and 8 generated streams


@pytest.mark.spark
def test_a_broken_step_is_caught(windtunnel_spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # the JVM step's answer with its first drop turned into nothing: the check must fail
    from windtunnel.spark_impl import jvm_step

    original = jvm_step.render

    def without_drops(*args: Any) -> Any:
        import pyarrow.compute as pc

        out = original(*args)
        return None if out is None else out.filter(pc.not_equal(out.column("type"), "drop"))

    monkeypatch.setattr(jvm_step, "render", without_drops)
    late = TUMBLING + "  - {event: {ts: 3, k: 2}}\n"  # key 2's clock is 26: late
    result = check(scenario(late), target_named("spark-fast", windtunnel_spark), examples=0, shrink_seconds=1)
    assert result.failure is not None


def test_typed_rows_unless_the_wall_clock_moves_after_the_last_event() -> None:
    from windtunnel.spark_impl.batch_scenarios import typed_batches

    typed = typed_batches(scenario(TUMBLING))
    assert typed is not None
    assert all(t.column_names == ["seq", "arrival_ms", "ts", "k"] for t in typed)
    assert [t.num_rows for t in typed] == [1, 1, 1, 3, 1]
    # an advance after the last event moves the end-of-input flush's wall clock: clock rows
    assert typed_batches(scenario(TUMBLING + "  - {advance: 90}\n")) is None
    # fields that differ between events: the payload as JSON
    assert typed_batches(scenario(TUMBLING + "  - {event: {ts: 30, k: 1, x: 2}}\n")) is None


def test_sessions_are_refused_with_the_target_to_use() -> None:
    from windtunnel.spark_impl.batch_scenarios import check_runs

    session = scenario("window: {kind: session, gap: 5, on: ts}\naggregate: {n: count()}\ninput: [{ts: 1}]")
    with pytest.raises(InvalidSpec, match="--target spark"):
        check_runs(session)
