"""The Spark benchmarks run at a tiny size in this process, on the worker's shared session,
their checks included: before timing, the production operator's output equals the
oracle's and stock Spark's the ``spark`` profile's; the check rates count only runs that
agree with the oracle, job shapes that pass and broken jobs that are caught. A check that
fails raises AssertionError."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

pytestmark = pytest.mark.spark

TINY = ["--events", "2000", "--keys", "50", "--warmup-events", "0"]

RUNS = {
    "spark_operators": (
        [*TINY, "--batches", "2", "--repeat", "1", "--check-events", "600"],
        ["windows equal the spark profile's", "production"],
    ),
    "spark_scale": (
        [*TINY, "--batches", "3", "--check-events", "600"],
        ["windows equal the spark profile's", "ratio production/stock(hdfs)"],
    ),
    "spark_jobs realistic": (
        [*TINY, "--shapes", "realistic", "--batches", "2", "--repeat", "1", "--check-events", "200"],
        ["realistic: check: production", "windows equal the spark profile's", "x stock-parquet"],
    ),
    "spark_jobs session": (
        [*TINY, "--shapes", "session", "--batches", "2", "--repeat", "1", "--check-events", "200",
         "--sides", "stock,production"],
        ["session: check: production", "windows equal the spark profile's", "x stock"],
    ),
    "check_rate": (
        ["--scenarios", "3", "--solo", "1", "--events", "4", "--stock-scenarios", "2"],
        ["check: spark-stock: 1 solo and 2 batched runs agree", "ratio"],
    ),
    "check_rate --jobs": (
        ["--jobs", "--scenarios", "2", "--events", "3", "--examples", "2", "--repeat", "1",
         "--floor-batches", "3", "--lanes", "2", "--shapes", "logins_per_user",
         "--broken", "logins_known_users"],
        ["logins_per_user (logins.yaml): passes", "shrunk to"],
    ),
}


SLOW = {"check_rate", "check_rate --jobs"}
"""Whole checks: marked slow, out of CI's default run."""


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(RUNS)]
)
def test_the_spark_benchmarks_sides_agree_with_the_oracle_at_a_tiny_size(
    name: str, benchmark: Callable[[str], ModuleType], spark: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    arguments, expected = RUNS[name]
    benchmark(name.split()[0]).main(arguments)
    out = capsys.readouterr().out
    for text in expected:
        assert text in out, out
    assert spark.conf.get("spark.sql.streaming.stateStore.providerClass").endswith(
        "RocksDBStateStoreProvider"), "the benchmark left the session on another state store"
