"""The job shapes of examples/spark_jobs (docs/conformance.md, "Job shapes"), each checked on
its spec with a handful of generated streams: the correct ones pass, the buggy one is caught
with a counterexample of at most three events. The rates are benchmarks/check_rate.py's."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from windtunnel.cli.check import load_spec
from windtunnel.conformance.check import DETECT, check
from windtunnel.conformance.targets.spark import job_target
from windtunnel.oracle.model.stream import events_of

FOLDER = Path(__file__).resolve().parents[3] / "examples" / "spark_jobs"
EXAMPLES = 4


@pytest.fixture(scope="module")
def shapes() -> Iterator[Any]:
    sys.path.insert(0, str(FOLDER))
    try:
        yield importlib.import_module("spark_shapes")
    finally:
        sys.path.remove(str(FOLDER))


@pytest.mark.spark
@pytest.mark.parametrize(
    ("spec", "job", "compare"),
    [
        ("logins.yaml", "logins_per_user", "rows"),
        ("logins.yaml", "logins_sql", "rows"),
        ("payments.yaml", "merchant_stats", "rows"),
        ("sessions.yaml", "device_sessions", "rows"),
        ("clicks.yaml", "clicks_deduplicated", "rows"),
        ("logins-no-bots.yaml", "logins_without_bots", "rows"),
        ("totals-update.yaml", "merchant_totals", "rows"),
        ("totals-update.yaml", "totals_for_upsert", "final"),
    ],
)
def test_a_correct_job_passes(spark: Any, shapes: Any, spec: str, job: str, compare: str) -> None:
    result = check(load_spec(str(FOLDER / spec)), job_target(getattr(shapes, job), spark),
                   examples=EXAMPLES, seed=1, compare=compare)
    assert result.failure is None, result.failure and result.failure.mismatch
    assert result.checked == EXAMPLES


@pytest.mark.spark
def test_the_null_filtering_job_is_caught_with_a_small_counterexample(
    spark: Any, shapes: Any
) -> None:
    result = check(load_spec(str(FOLDER / "logins.yaml")),
                   job_target(shapes.logins_known_users, spark),
                   examples=20, seed=1, stand_in=DETECT, shrink_seconds=60)
    failure = result.failure
    assert failure is not None
    assert len(list(events_of(failure.scenario.items))) <= 3
    assert failure.shrunk_on.startswith("stand-in oracle:spark with ")  # not on the job
    assert any(e.payload.get("user_id") is None or e.payload.get("bytes") is None
               for e in events_of(failure.scenario.items))  # what dropna drops


@pytest.mark.spark
def test_a_job_in_complete_mode_agrees_with_the_spark_profile(spark: Any, shapes: Any) -> None:
    """Complete mode has no no-data micro-batch and keeps every window: the shared query's
    closing micro-batch is left out and windows ending before a scenario's offset count."""
    spec = load_spec(str(FOLDER / "totals-update.yaml"))
    spec = replace(spec, query=replace(spec.query, output_mode="complete"))
    result = check(spec, job_target(shapes.merchant_totals, spark), examples=EXAMPLES, seed=2)
    assert result.failure is None, result.failure and result.failure.mismatch
