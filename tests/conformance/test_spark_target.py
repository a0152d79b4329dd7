"""``--target spark``: the production operator, through its streaming path, held to the oracle.

The conformance check generates streams from each spec (disorder, batches, advances, the
end of input) and compares every output, drops included, every field included
(``after_seq``, ``wall_ms``, messages).
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
    "tumbling count": TUMBLING,
    "tumbling count with window_start": TUMBLING.replace("{n: count()}", "{n: count(), ws: window_start()}"),
    "hopping sum": TUMBLING.replace("{size: 10,", "{size: 10, every: 5,").replace("{n: count()}", "{n: count(), s: sum(ts)}"),
    "string key": TUMBLING.replace("k: 1}", "k: a}").replace("k: 2}", "k: b}"),
    "idle timeout": TUMBLING.replace("tolerance: 3}", "tolerance: 3, idle_timeout: 20}"),
    "session": TUMBLING.replace("{size: 10, on: ts, tolerance: 3}", "{kind: session, gap: 5, on: ts}"),
}


@pytest.mark.spark
@pytest.mark.parametrize("name", list(SPECS))
def test_the_production_operator_agrees_with_the_oracle_on_generated_streams(
    windtunnel_spark: Any, name: str
) -> None:
    target = target_named("spark", windtunnel_spark)
    result = check(scenario(SPECS[name]), target, examples=20, seed=3, batch_size=21)
    assert result.failure is None, result.failure
    assert result.checked == 21  # the spec's own input and 20 generated streams


def test_a_query_the_production_operator_does_not_cover_exits_before_spark() -> None:
    target = target_named("spark")
    with pytest.raises(InvalidSpec, match=r"does not cover rules\.close_at=passes.*spark-general"):
        target.run_many([scenario(TUMBLING + "rules: {close_at: passes}\n")])


@pytest.mark.spark
def test_a_broken_operator_is_caught(windtunnel_spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # the operator's drops lost on the way out: the check must fail
    from windtunnel.spark_impl.harness import production

    original = production.outputs_in_order
    monkeypatch.setattr(
        production, "outputs_in_order",
        lambda rows: [o for o in original(rows) if o.type != "drop"],
    )
    late = TUMBLING + "  - {event: {ts: 3, k: 2}}\n"  # key 2's clock is 26: late
    result = check(scenario(late), target_named("spark", windtunnel_spark), examples=0, shrink_seconds=1)
    assert result.failure is not None
