"""What stock Spark does: a window spec compiled to ``withWatermark`` + ``window()`` /
``session_window()`` and a streaming aggregation in the spec's output mode (append by default).

This is the mapping a Spark user would write by hand, not windtunnel's operators:
its results follow the oracle's ``spark`` profile (docs/semantics.md "The spark profile";
docs/spark-stock.md), not the default profile. ``tolerance`` is the watermark delay;
fixed windows are ``window(ts, size, every)`` (``[start_ms, end_ms)``, starts aligned to
the epoch), sessions are ``session_window(ts, gap)`` (``[first, last + gap)``).

Output rows have the schema of windtunnel's operators (:data:`windtunnel.spark_impl.schema.OUTPUT_DDL`):
one ``emit`` row per window, group and ``aggregate_by`` value, reason ``close`` and
``partial`` false in append mode (``update``/``complete`` and true in the spec's other
``output_mode``, which the query must then be started with:
:func:`~windtunnel.spark_impl.harness.stock_replay.replay_stock` does).
Stock Spark drops late rows without a trace, so there are no ``drop``
rows, and a streaming aggregation does not know its micro-batch: ``after_seq``,
``wall_ms`` and the ordering columns are null in :func:`stock_window`'s output and are
filled from the micro-batch id by
:func:`windtunnel.spark_impl.harness.stock_replay.replay_stock`.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.rules import RULE_VALUES, Rules
from windtunnel.oracle.model.spec import NOW, FixedWindows, Query, SessionWindows
from windtunnel.oracle.profiles import SPARK_PROFILE, check_supported
from windtunnel.oracle.windows.output_modes import MODE_ROWS
from windtunnel.spark_impl.schema import (
    OUTPUT_COLUMNS,
)
from windtunnel.spark_impl.stock.stages import apply_stages, check_stages

STOCK_FUNCTIONS = ("count", "sum", "min", "max", "avg", "window_start", "window_end")
"""Aggregations with an exact stock streaming equivalent."""

UNSUPPORTED_FUNCTIONS = {
    "distinct": "Spark rejects distinct aggregations on streaming DataFrames",
    "count_distinct": "Spark rejects distinct aggregations on streaming DataFrames "
    "(approx_count_distinct is not exact)",
    "collect": "collect_list's order is not delivery order in Spark",
    "first": "Spark's first() depends on partition order, not delivery order",
    "last": "Spark's last() depends on partition order, not delivery order",
}
"""Aggregations the stock mapping refuses, and why."""

TIME = "_windtunnel_event_time"
"""The timestamp column the mapping adds (withWatermark needs a timestamp column)."""


def check_stock(query: Query, rules: Rules = SPARK_PROFILE.rules) -> None:
    """Raise InvalidSpec unless stock Spark can express ``query`` under ``rules``.

    The kinds and options of the ``spark`` profile (fixed and session windows, no
    ``idle_timeout``, no caps, an aggregate, sessions need ``group_by``), the
    aggregations in :data:`STOCK_FUNCTIONS`, and the profile's rules unchanged.
    """
    check_supported(SPARK_PROFILE, query)
    check_stages(query)
    for aggregation in query.aggregate or ():
        if aggregation.function not in STOCK_FUNCTIONS:
            field = aggregation.field or ""
            raise InvalidSpec(
                f"aggregate.{aggregation.name}",
                f"{aggregation.function}({field})",
                f"no exact stock Spark streaming aggregation: "
                f"{UNSUPPORTED_FUNCTIONS[aggregation.function]}",
                f"use one of {', '.join(f + '()' for f in STOCK_FUNCTIONS)}, "
                "or profile tenzir (windtunnel's operators)",
            )
    for rule in RULE_VALUES:
        value, stock = getattr(rules, rule), getattr(SPARK_PROFILE.rules, rule)
        if value != stock:
            raise InvalidSpec(
                f"rules.{rule}",
                value,
                f"stock Spark always has {rule}={stock}",
                "remove the override, or use --engine oracle",
            )


def field_column(path: str) -> Column:
    """The column for a dotted field path (``a.b``: field ``b`` of struct column ``a``)."""
    head, *rest = path.split(".")
    column = F.col(f"`{head}`")
    for part in rest:
        column = column.getField(part)
    return column


def _ms(amount: int) -> str:
    return f"{amount} milliseconds"


def _value_json(column: Column) -> Column:
    """JSON text of one value (``null`` for null): ``{"v":X}`` with its wrapper cut off."""
    text = F.to_json(F.struct(column.alias("v")), {"ignoreNullFields": "false"})
    return text.substr(F.lit(6), F.length(text) - F.lit(6))


def _aggregate(function: str, field: str | None) -> Column:
    if function == "count":
        return F.count(F.lit(1) if field is None else field_column(field))
    builders = {"sum": F.sum, "min": F.min, "max": F.max, "avg": F.avg}
    return builders[function](field_column(field or ""))


def stock_window(
    df: DataFrame,
    query: Query,
    *,
    event_time: str | None = None,
    time_unit_ms: int = 1,
) -> DataFrame:
    """Emissions of ``query`` over the streaming ``df`` as stock Spark computes them.

    ``df`` has the query's fields as typed columns (dotted paths read struct fields).
    The event time is column ``event_time`` (default: the window's ``on`` field): a
    timestamp, or a number of ``time_unit_ms`` milliseconds since the epoch. Output:
    schema.OUTPUT_DDL, ``emit`` rows only (see the module docstring). Raises InvalidSpec
    for what stock Spark cannot express (:func:`check_stock`), or ``on: now()`` without
    ``event_time``.
    """
    check_stock(query)
    window = query.window
    name = event_time or window.on
    if name == NOW:
        raise InvalidSpec(
            "window.on", NOW, "stock Spark windows need an event-time column",
            "pass event_time= naming a column with the arrival time",
        )
    if isinstance(window, FixedWindows):
        bounds = F.window(TIME, _ms(window.size_ms), _ms(window.hop_ms))
    elif isinstance(window, SessionWindows):
        bounds = F.session_window(TIME, _ms(window.gap_ms))
    else:  # pragma: no cover - check_stock admits only fixed and session windows
        raise InvalidSpec("window.kind", window.kind, "not a stock Spark window", "use fixed")
    raw = field_column(name)
    kind = dict(df.select(raw.alias("t")).dtypes)["t"]
    time = raw if kind == "timestamp" else F.timestamp_millis((raw * time_unit_ms).cast("long"))
    timed = df.withColumn(TIME, time).withWatermark(TIME, _ms(window.tolerance_ms))
    if query.stages:  # filter and deduplicate after withWatermark, as a user writes them
        timed = apply_stages(timed, query, TIME, field_column)
    keys = [field_column(p).alias(f"_g{i}") for i, p in enumerate(query.group_by)]
    by = [field_column(p).alias(f"_b{i}") for i, p in enumerate(query.aggregate_by)]
    aggregations = [a for a in query.aggregate or () if a.function in ("count", "sum", "min",
                                                                          "max", "avg")]
    aggregated = [_aggregate(a.function, a.field).alias(f"_a{i}") for i, a in enumerate(aggregations)]
    grouped = timed.groupBy(bounds.alias("_w"), *keys, *by).agg(
        F.count(F.lit(1)).alias("_n"), *aggregated
    )
    start, end = F.unix_millis(F.col("_w.start")), F.unix_millis(F.col("_w.end"))
    fields: list[Column] = [F.col(f"_b{i}").alias(p) for i, p in enumerate(query.aggregate_by)]
    for a in query.aggregate or ():
        if a.function == "window_start":
            fields.append(start.alias(a.name))
        elif a.function == "window_end":
            fields.append(end.alias(a.name))
        else:
            fields.append(F.col(f"_a{aggregations.index(a)}").alias(a.name))
    if not keys:
        group: Column = F.lit("null")
    elif len(keys) == 1:
        group = _value_json(F.col("_g0"))
    else:
        parts = [_value_json(F.col(f"_g{i}")) for i in range(len(keys))]
        group = F.concat(F.lit("["), F.concat_ws(", ", *parts), F.lit("]"))
    reason, partial = MODE_ROWS[query.output_mode]
    values: dict[str, Column] = {
        "type": F.lit("emit"),
        "start_ms": start,
        "end_ms": end,
        "group": group,
        "row": F.to_json(F.struct(*fields), {"ignoreNullFields": "false"}),
        "reason": F.lit(reason),
        "partial": F.lit(partial),
    }
    types = {"type": "string", "group": "string", "row": "string", "reason": "string",
             "windows": "string", "message": "string", "partial": "boolean"}
    return grouped.select(
        *[
            values.get(c, F.lit(None)).cast(types.get(c, "long")).alias(c)
            for c in OUTPUT_COLUMNS
        ]
    )
