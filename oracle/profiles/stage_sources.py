"""Sources of the stage rules (``where`` and ``deduplicate`` before the window) per profile.

Each profile's value of ``where_null_equals``, ``filtered_clock``, ``duplicate_clock``,
``dedup_expiry`` and ``dedup_late`` with the sentence it rests on (docs/semantics.md,
"Stages before the window"), and the stages a profile's engine has no form for.
"""

from __future__ import annotations

from typing import Final

TENZIR_WHERE = "https://docs.tenzir.com/reference/operators/where"
TENZIR_DEDUP = "https://docs.tenzir.com/reference/operators/deduplicate"
SPARK_DEDUP_WM = (
    "https://spark.apache.org/docs/latest/api/python/reference/pyspark.sql/api/"
    "pyspark.sql.DataFrame.dropDuplicatesWithinWatermark.html"
)
SPARK_PUSHDOWN = (
    "https://github.com/apache/spark/blob/master/sql/catalyst/src/main/scala/org/apache/spark/"
    "sql/catalyst/optimizer/Optimizer.scala (PushPredicateThroughNonJoin)"
)
SPARK_MEASURED = "measured with PySpark 4.3.0 (docs/semantics.md, D2)"
FLINK_DEDUP = (
    "https://nightlies.apache.org/flink/flink-docs-stable/docs/dev/table/sql/queries/deduplication/"
)
FLINK_CONFIG = "https://nightlies.apache.org/flink/flink-docs-stable/docs/dev/table/config/"
FLINK_WATERMARK = (
    "https://nightlies.apache.org/flink/flink-docs-stable/docs/dev/table/sql/create/"
    "#watermark"
)
TIMEPLUS_DEDUP = "https://docs.timeplus.com/functions_for_streaming#dedup"
TIMEPLUS_QUERY = "https://docs.timeplus.com/query-syntax"

_SQL_NULLS = "SQL: a comparison with NULL is unknown, and WHERE keeps only rows that are true"

STAGE_SOURCES: Final[dict[str, dict[str, str]]] = {
    "tenzir": {
        "where_null_equals": f'{TENZIR_WHERE}: "Only events for which it evaluates to true pass." '
        "Tenzir 6.20.0, measured (D1): where not (x == 1) keeps {x: null}, where not (x > 1) "
        "drops it (== compares a null, > with a null is null)",
        "filtered_clock": f'{TENZIR_WHERE}: "discards all other events": where runs before window '
        "in the pipeline, so the window never sees them",
        "duplicate_clock": f'{TENZIR_DEDUP}: "removes duplicates from a stream of events": the '
        "window after it never sees them",
        "dedup_expiry": f'{TENZIR_DEDUP}: create_timeout "The time that needs to pass until a '
        'surpressed event is no longer considered a duplicate. The timeout resets when the first '
        'event for a given key is let through."',
        "dedup_late": f"{TENZIR_DEDUP}: no watermark (deduplicate lets every first event through)",
    },
    "spark": {
        "where_null_equals": f"{_SQL_NULLS} (Spark SQL's filter)",
        "filtered_clock": f"{SPARK_PUSHDOWN}: predicates that are deterministic and do not reference "
        "watermark.eventTime are pushed below EventTimeWatermark; " + SPARK_MEASURED,
        "duplicate_clock": f'{SPARK_DEDUP_WM}: "watermark for the input DataFrame must be set via '
        'withWatermark()" (the watermark sees every row before deduplication); ' + SPARK_MEASURED,
        "dedup_expiry": f'{SPARK_DEDUP_WM}: "Events are deduplicated as long as the time distance '
        'of earliest and latest events are smaller than the delay threshold of watermark."; '
        + SPARK_MEASURED,
        "dedup_late": f'{SPARK_DEDUP_WM}: "Note: too late data older than watermark will be '
        'dropped."; ' + SPARK_MEASURED,
    },
    "flink": {
        "where_null_equals": f"{_SQL_NULLS} (Flink SQL)",
        "filtered_clock": f'{FLINK_WATERMARK}: "The WATERMARK defines the event time attributes of '
        'a table" (the watermark is made at the source from every row, before a WHERE runs)',
        "duplicate_clock": f'{FLINK_WATERMARK}: "The WATERMARK defines the event time attributes '
        'of a table" (made at the source, before deduplication)',
        "dedup_expiry": f'{FLINK_DEDUP}: "Ordering by ASC means keeping the first row"; '
        f'{FLINK_CONFIG}: table.exec.state.ttl "Specifies a minimum time interval for how long '
        'idle state (i.e. state which was not updated), will be retained." (processing time)',
        "dedup_late": f"{FLINK_DEDUP}: deduplication keeps the first row; late rows are the "
        "window's to drop",
    },
    "timeplus": {
        "where_null_equals": f"{_SQL_NULLS} (Timeplus SQL)",
        "filtered_clock": f"{TIMEPLUS_QUERY}: WHERE filters before the window aggregation, whose "
        "watermark moves with the rows it sees (TP11; ambiguous)",
        "duplicate_clock": f'{TIMEPLUS_DEDUP}: "You can cascade this table function like '
        'tumble(dedup(table(...." (the window sees only what dedup lets through)',
        "dedup_expiry": f'{TIMEPLUS_DEDUP}: "Rows with same column value will only show once (only '
        'the first row is selected and others are omitted.) liveInSecond specifies how long the '
        'keys will be kept in the memory/state. By default forever."',
        "dedup_late": f"{TIMEPLUS_DEDUP}: dedup() has no watermark (kept: keep)",
    },
}
"""Per profile: the stage rules' values' sources."""


def stage_sources(profile: str) -> dict[str, str]:
    """The stage rules' sources for ``profile``; profiles without stages keep the defaults."""
    if profile in STAGE_SOURCES:
        return dict(STAGE_SOURCES[profile])
    return {
        rule: f"not applicable to {profile} (stages before the window are refused; kept default)"
        for rule in STAGE_SOURCES["tenzir"]
    }


STAGE_UNSUPPORTED: Final[dict[str, dict[str, str]]] = {
    "ekuiper": {
        "where": "eKuiper's WHERE runs after the window (E9); its filter before the window is the "
        "ekuiper kind's filter: (FILTER (WHERE ...))",
        "deduplicate": "eKuiper has no deduplication operator",
    },
    "kdb": {
        "where": "the kdb page has no filter before the window to cite",
        "deduplicate": "kdb Insights Stream Processor has no deduplication operator",
    },
}
"""Stages a profile cannot express, and why (``Profile.unsupported`` entries)."""
