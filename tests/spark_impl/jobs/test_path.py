"""The one decision of a job's path, without a session: production, general or stock, each
reason named, and what cannot run refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel.oracle import Aggregation, FixedWindows, Query
from windtunnel.oracle.model.errors import InvalidInput, InvalidSpec
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import TrailingWindows
from windtunnel.oracle.profiles import SPARK_PROFILE
from windtunnel.spark_impl.job import JobSpec, PathChoice, choose_path

QUERY = Query(FixedWindows(10_000, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
TRAILING = Query(TrailingWindows(10_000, on="ts"), aggregate=(Aggregation("n", "count"),))
STOCK = JobSpec(QUERY, SPARK_PROFILE.rules, profile="spark")


def test_a_covered_streaming_job_takes_the_production_path() -> None:
    choice = choose_path(JobSpec(QUERY), spark=None, slices=3)
    assert (choice.path, choice.reasons, choice.slices) == ("production", (), 3)
    assert choice.explain("ckpt") == (
        "path: production (the production operator: the JVM engine, 3 key slices in parallel; "
        "state under ckpt/windtunnel, through Hadoop's FileSystem API)"
    )


def test_a_profile_spark_spec_takes_the_stock_path() -> None:
    choice = choose_path(STOCK, spark=None)
    assert choice.path == "stock"
    assert choice.explain().splitlines() == [
        "path: stock (stock Spark: withWatermark + window()/session_window() in append mode, "
        "emissions only)",
        "  because the spec's profile is spark (what stock Spark does)",
    ]


def test_stock_spark_has_no_system_clock() -> None:
    with pytest.raises(InvalidInput, match="runs stock Spark, which has no wall clock"):
        choose_path(STOCK, spark=None, clock="system")


def test_an_unknown_clock_is_refused() -> None:
    with pytest.raises(InvalidSpec, match="unknown wall clock"):
        choose_path(JobSpec(QUERY), spark=None, clock="sundial")


@pytest.mark.parametrize(
    ("spec", "options", "reason"),
    [
        (JobSpec(TRAILING), {}, "the JVM engine does not cover trailing windows"),
        (JobSpec(QUERY, Rules(close_at="passes")), {},
         "the JVM engine does not cover rules.close_at=passes"),
        (JobSpec(QUERY), {"streaming": False}, "the input is a batch DataFrame"),
        (JobSpec(QUERY), {"sink_kind": "memory"}, "the memory sink needs a streaming query's own sink"),
    ],
    ids=["trailing", "rules", "batch", "memory-sink"],
)
def test_what_the_production_operator_cannot_run_takes_the_general_path_saying_why(
    spec: JobSpec, options: dict[str, object], reason: str
) -> None:
    choice = choose_path(spec, spark=None, **options)  # type: ignore[arg-type]
    assert choice.path == "general"
    assert reason in choice.reasons[0]
    assert choice.explain().splitlines()[1] == f"  because {choice.reasons[0]}"


def test_a_checkpoint_keeps_the_operator_that_started_it(tmp_path: Path) -> None:
    general = tmp_path / "general"
    (general / "state" / "0").mkdir(parents=True)
    assert choose_path(JobSpec(QUERY), spark=None, checkpoint=str(general)).path == "general"
    production = tmp_path / "production"
    (production / "windtunnel").mkdir(parents=True)
    (production / "windtunnel" / "FORMAT").write_text("1\n")
    assert choose_path(JobSpec(QUERY), spark=None, checkpoint=str(production)).production
    with pytest.raises(InvalidInput, match="holds the production operator's state"):
        choose_path(JobSpec(TRAILING), spark=None, checkpoint=str(production))


@pytest.mark.parametrize(("path", "reasons"), [("fast", ()), ("production", ("x",)), ("general", ())])
def test_a_choice_fits_its_path(path: str, reasons: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="path="):
        PathChoice(path, reasons)
