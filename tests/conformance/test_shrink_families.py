"""Every family of bug a stock Spark job ships, caught on a stream of eight events and
shrunk to at most three events within the 60 s budget, with the cause named from the job's
plan where a parameter differs: a session gap, a slide, a filter dropping rows, a watermark
delay too short, a watermark too long (late rows kept), a missing deduplication, and update
mode without a watermark."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from windtunnel.conformance.check import DETECT, check
from windtunnel.conformance.targets.spark import job_target
from windtunnel.oracle.model.stream import events_of
from windtunnel.oracle.scenario import Scenario, parse_scenario

pytestmark = pytest.mark.spark

BUDGET_S = 60.0


def sessions_gap_20s(events: DataFrame) -> DataFrame:
    return (events.withWatermark("ts", "5 seconds")
            .groupBy(F.session_window("ts", "20 seconds"), "device")
            .agg(F.count(F.lit(1)).alias("readings")))


def hop_every_5min(events: DataFrame) -> DataFrame:
    return (events.withWatermark("ts", "1 minute")
            .groupBy(F.window("ts", "10 minutes", "5 minutes"), "merchant")
            .agg(F.count(F.lit(1)).alias("payments")))


def logins_dropna(events: DataFrame) -> DataFrame:
    return (events.dropna().withWatermark("ts", "10 seconds")
            .groupBy(F.window("ts", "1 minute"), "user_id")
            .agg(F.count(F.lit(1)).alias("logins"), F.sum("bytes").alias("bytes")))


def watermark_10s(events: DataFrame) -> DataFrame:
    return (events.withWatermark("ts", "10 seconds")
            .groupBy(F.window("ts", "1 minute"), "user_id")
            .agg(F.count(F.lit(1)).alias("logins")))


def watermark_1min(events: DataFrame) -> DataFrame:
    return (events.withWatermark("ts", "1 minute")
            .groupBy(F.window("ts", "1 minute"), "user_id")
            .agg(F.count(F.lit(1)).alias("logins")))


def clicks_not_deduplicated(events: DataFrame) -> DataFrame:
    return (events.withWatermark("ts", "20 seconds")
            .groupBy(F.window("ts", "1 minute"), "campaign")
            .agg(F.count(F.lit(1)).alias("clicks")))


def totals_without_watermark(events: DataFrame) -> DataFrame:
    return (events.groupBy(F.window("ts", "1 minute"), "merchant")
            .agg(F.count(F.lit(1)).alias("payments")))


def _stream(times_s: list[int], key: str, keys: list[str], extra: dict[str, list[Any]] | None = None,
            batches: tuple[int, ...] = ()) -> list[dict[str, Any]]:
    """Events at ``times_s`` (seconds), key values in turn; ``batches``: positions where a
    two-event micro-batch starts."""
    rows = []
    for i, t in enumerate(times_s):
        row: dict[str, Any] = {"ts": t * 1000, key: keys[i % len(keys)]}
        for name, values in (extra or {}).items():
            row[name] = values[i % len(values)]
        rows.append(row)
    items: list[Any] = []
    index = 0
    while index < len(rows):
        if index in batches and index + 1 < len(rows):
            items.append({"batch": rows[index : index + 2]})
            index += 2
        else:
            items.append(rows[index])
            index += 1
    return items


def _spec(window: dict[str, Any], key: str, aggregate: dict[str, str], items: list[Any],
          **more: Any) -> Scenario:
    return parse_scenario({"name": "family", "profile": "spark", "window": window,
                           "group_by": [key], "aggregate": aggregate, "input": items, **more})


FAMILIES: dict[str, tuple[Callable[[], Scenario], Callable[[DataFrame], DataFrame], str | None]] = {
    "session gap": (
        lambda: _spec({"kind": "session", "gap": "30s", "on": "ts", "tolerance": "5s"}, "device",
                      {"readings": "count()"},
                      _stream([0, 3, 25, 31, 58, 96, 190, 300], "device",
                              ["d1", "d2"], batches=(4,))),
        sessions_gap_20s, "the job's session gap is 20s; the spec's gap is 30s"),
    "slide": (
        lambda: _spec({"kind": "fixed", "size": "10min", "every": "2min", "on": "ts",
                       "tolerance": "1min"}, "merchant", {"payments": "count()"},
                      _stream([10, 100, 250, 400, 650, 900, 1500, 2400],
                              "merchant", ["acme", "globex"], batches=(2, 6))),
        hop_every_5min, "the job's window slides every 5min; the spec's every is 2min"),
    "filter": (
        lambda: _spec({"kind": "fixed", "size": "1min", "on": "ts", "tolerance": "10s"},
                      "user_id", {"logins": "count()", "bytes": "sum(bytes)"},
                      _stream([1, 5, 12, 30, 61, 90, 150, 260], "user_id",
                              ["u1", "u2", "u3"], {"bytes": [10, 20, None, 5]}, batches=(3,))),
        logins_dropna, "the job filters rows (atleastnnonnulls(3, "),
    "watermark delay too short": (
        lambda: _spec({"kind": "fixed", "size": "1min", "on": "ts", "tolerance": "1min"},
                      "user_id", {"logins": "count()"},
                      _stream([2, 10, 35, 64, 80, 90, 15, 260], "user_id",
                              ["u1", "u2"], batches=(0,))),
        watermark_10s, "the job's watermark on ts is 10s; the spec's tolerance is 1min"),
    "late drop": (
        lambda: _spec({"kind": "fixed", "size": "1min", "on": "ts", "tolerance": "10s"},
                      "user_id", {"logins": "count()"},
                      _stream([2, 10, 35, 64, 80, 90, 15, 260], "user_id",
                              ["u1", "u2"], batches=(0,))),
        watermark_1min, "the job's watermark on ts is 1min; the spec's tolerance is 10s"),
    "deduplication": (
        lambda: _spec({"kind": "fixed", "size": "1min", "on": "ts", "tolerance": "20s"},
                      "campaign", {"clicks": "count()"},
                      _stream([1, 4, 9, 22, 40, 66, 130, 250], "campaign",
                              ["spring", "summer", "spring"],
                              {"click_id": ["c1", "c2", "c1", "c3", "c4", "c2"]}, batches=(2,)),
                      deduplicate={"key": ["click_id"], "within": "20s"}),
        clicks_not_deduplicated, "the job does not deduplicate; the spec deduplicates on "
        "click_id within 20s"),
    "output mode": (
        lambda: _spec({"kind": "fixed", "size": "1min", "on": "ts", "tolerance": "10s"},
                      "merchant", {"payments": "count()"},
                      _stream([3, 20, 70, 12, 100, 30, 160, 45], "merchant",
                              ["acme", "globex"], batches=(3,)), output_mode="update"),
        totals_without_watermark, "the job has no watermark (so in update mode it never drops "
        "a late row nor forgets a window); the spec's tolerance is 10s"),
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_family_shrinks_to_three_events_within_a_minute(family: str) -> None:
    make, job, cause = FAMILIES[family]
    spec = make()
    result = check(spec, job_target(job, name=job.__name__), examples=0, stand_in=DETECT,
                   shrink_seconds=BUDGET_S)
    failure = result.failure
    assert failure is not None, f"{family}: the spec's own input does not diverge"
    assert failure.mismatch
    shrunk = list(events_of(failure.scenario.items))
    assert len(shrunk) <= 3, (family, failure.scenario.items, failure.shrunk_on)
    assert failure.shrink_seconds <= BUDGET_S
    if cause is not None:
        assert any(line.startswith(cause) for line in failure.cause), failure.cause


def test_shrinking_on_the_job_itself_also_ends_at_three_events_within_a_minute() -> None:
    """No stand-in: every candidate is a streaming query of the job (a deduplicating spec:
    one query per stream, the dearest case)."""
    make, job, _ = FAMILIES["deduplication"]
    result = check(make(), job_target(job, name=job.__name__), examples=0, stand_in=None,
                   shrink_seconds=BUDGET_S)
    failure = result.failure
    assert failure is not None and failure.mismatch
    assert failure.shrunk_on == job.__name__
    assert len(list(events_of(failure.scenario.items))) <= 3, failure.scenario.items
    assert failure.shrink_seconds <= BUDGET_S
