"""benchmarks/state_growth.py at a tiny size: it runs, reports every quarter, and a
micro-batch writes in proportion to the keys it changed, not to every key held."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import state_growth

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark() -> Any:
    from windtunnel.spark_impl.session import spark_session

    session = spark_session(shuffle_partitions=2)
    session.sparkContext.setLogLevel("ERROR")
    return session


def test_state_written_per_micro_batch_stays_flat_as_keys_grow(spark: Any, tmp_path: Path) -> None:
    state_growth.write_batches(state_growth.bids(10 * 2_000), tmp_path / "data", 10)
    growth = state_growth.run(spark, tmp_path / "data", tmp_path / "run")
    assert len(growth.durations_ms) == len(growth.written) == 10
    assert growth.bids == 20_000 and growth.keys > 1_000
    written = state_growth.quarters(growth.written)
    # the keys held grow about 2.5x from the second quarter to the last; a full rewrite of
    # every slice per micro-batch grows with them
    assert 0 < written[3] < 1.5 * written[1]
    assert growth.state_bytes > written[3]
    lines = state_growth.report_lines(growth)
    assert any(line.startswith("ratio last/second quarter: duration") for line in lines)
    assert any("bytes per key" in line for line in lines)
