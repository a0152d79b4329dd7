"""What stock Spark does: a window spec compiled to ``withWatermark`` + ``window()`` /
``session_window()`` and a streaming aggregation in the spec's output mode (append by default).

This is the mapping a Spark user would write by hand, not windtunnel's exact operator:
its results follow the oracle's ``spark`` profile (docs/semantics.md "The spark profile";
docs/spark-stock.md), not the default profile. ``tolerance`` is the watermark delay;
fixed windows are ``window(ts, size, every)`` (``[start_ms, end_ms)``, starts aligned to
the epoch), sessions are ``session_window(ts, gap)`` (``[first, last + gap)``).

Output rows have the exact operator's schema (:data:`windtunnel.spark_impl.schema.OUTPUT_DDL`):
one ``emit`` row per window, group and ``aggregate_by`` value, reason ``close`` and
``partial`` false in append mode (``update``/``complete`` and true in the spec's other
``output_mode``, which the query must then be started with: :func:`replay_stock` does).
Stock Spark drops late rows without a trace, so there are no ``drop``
rows, and a streaming aggregation does not know its micro-batch: ``after_seq``,
``wall_ms`` and the ordering columns are null in :func:`stock_window`'s output and are
filled from the micro-batch id by :func:`replay_stock`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from windtunnel.oracle.engine import replay
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.fields import getter
from windtunnel.oracle.model.results import Emission, Output, Result, to_jsonl_line
from windtunnel.oracle.model.rules import RULE_VALUES, Rules
from windtunnel.oracle.model.spec import NOW, FixedWindows, Query, SessionWindows
from windtunnel.oracle.model.stages import Where
from windtunnel.oracle.model.stream import (
    Advance,
    Batch,
    End,
    Event,
    Item,
    checked,
    without_watermarks,
)
from windtunnel.oracle.model.timeparse import NotATime, timestamp_ms
from windtunnel.oracle.profiles import SPARK_PROFILE, check_supported
from windtunnel.oracle.scenario import Scenario
from windtunnel.oracle.windows.output_modes import MODE_ROWS
from windtunnel.spark_impl.feed import Feed
from windtunnel.spark_impl.runs import SparkRun, divergences
from windtunnel.spark_impl.schema import (
    EVENT,
    OUTPUT_COLUMNS,
    control_step,
    output_of,
    print_order,
    to_json_text,
)
from windtunnel.spark_impl.scratch import checkpoint_dir
from windtunnel.spark_impl.scripted import scripted_stream
from windtunnel.spark_impl.stock_stages import apply_stages, check_stages

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
                "or profile tenzir (the exact operator)",
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
    measured = [_aggregate(a.function, a.field).alias(f"_a{i}") for i, a in enumerate(aggregations)]
    grouped = timed.groupBy(bounds.alias("_w"), *keys, *by).agg(
        F.count(F.lit(1)).alias("_n"), *measured
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


# --- replaying a scenario on stock Spark -------------------------------------------------


def micro_batches(items: Iterable[Item], micro_batch: int = 1) -> tuple[Item, ...]:
    """The stream with runs of up to ``micro_batch`` lone events wrapped into Batches.

    Every Batch (and, with ``micro_batch`` 1, every lone event) is one micro-batch of
    the ``spark`` profile; an Advance or a Batch ends a run. ``End`` is dropped.
    """
    if isinstance(micro_batch, bool) or not isinstance(micro_batch, int) or micro_batch < 1:
        raise InvalidSpec("--micro-batch", micro_batch, "must be an integer >= 1", "give e.g. 10")
    out: list[Item] = []
    run: list[Event] = []

    def flush() -> None:
        if run:
            out.append(run[0] if micro_batch == 1 else Batch(tuple(run)))
            run.clear()

    for item in items:
        if isinstance(item, Event):
            run.append(item)
            if len(run) >= micro_batch:
                flush()
            continue
        flush()
        if not isinstance(item, End):
            out.append(item)
    flush()
    return tuple(out)


@dataclass(frozen=True, slots=True)
class StockPlan:
    """A scenario as stock micro-batches: rows for the scripted source and, per micro-batch
    id, the stream position its emissions belong to.

    ``positions[i]`` is ``(after_seq, wall_ms)`` at the end of micro-batch ``i``; the
    last entry is the no-data micro-batch Spark runs after the input (the wall clock
    after the whole stream).
    """

    items: tuple[Item, ...]
    feed: Feed
    positions: tuple[tuple[int | None, int], ...]
    schema: T.StructType
    first_seen: Mapping[str, int]
    """JSON text of each group key -> seq of its first event (print order)."""


def plan_stock(scenario: Scenario, micro_batch: int = 1) -> StockPlan:
    """Cut ``scenario`` into stock micro-batches (:func:`micro_batches`).

    Event rows carry ``{"t": event time in ms or null, "p": payload}`` as their payload;
    the time is read as the oracle reads it (null or not a time: null, never emitted).
    """
    items = micro_batches(
        without_watermarks(checked(scenario.items, scenario.start_wall_ms), "Spark"), micro_batch
    )
    query = scenario.query
    on = query.window.on
    read_time = getter(on)
    keys = [getter(p) for p in query.group_by]
    wall = scenario.start_wall_ms
    last: int | None = None
    batches: list[tuple[Any, ...]] = []
    groups: list[tuple[Item, ...]] = []
    pending: list[Item] = []
    ranges: list[tuple[int, int]] = []
    positions: list[tuple[int | None, int]] = []
    first_seen: dict[str, int] = {}
    payloads: list[Mapping[str, Any]] = []
    for item in items:
        pending.append(item)
        if isinstance(item, Advance):
            wall = max(wall, item.to_ms)
            continue
        events = item.events if isinstance(item, Batch) else (item,) if isinstance(
            item, Event) else ()
        rows = []
        for event in events:
            if event.at_ms is not None:
                wall = max(wall, event.at_ms)
            if on == NOW:
                t_ms: int | None = wall
            else:
                try:
                    t_ms = timestamp_ms(read_time(event.payload), scenario.time_unit_ms)
                except NotATime:
                    t_ms = None
            payload = dict(event.payload)
            payloads.append(payload)
            group = to_json_text([g(payload) for g in keys])
            first_seen.setdefault(group, event.seq)
            rows.append((0, EVENT, event.seq, wall, None, to_json_text({"t": t_ms, "p": payload})))
            last = event.seq
        first = events[0].seq if events else (0 if last is None else last + 1)
        ranges.append((first, first + len(events)))
        batches.append(tuple(rows))
        groups.append(tuple(pending))
        pending = []
        positions.append((last, wall))
    if pending and groups:
        groups[-1] += tuple(pending)
    positions.append((last, wall))
    return StockPlan(
        items=items,
        feed=Feed(tuple(batches), tuple(ranges), tuple(groups)),
        positions=tuple(positions),
        schema=payload_schema(query, payloads),
        first_seen=first_seen,
    )


def _json_type(values: Sequence[Any], path: str, numeric: bool) -> T.DataType:
    """The Spark type of a field from its non-null JSON values (see payload_schema)."""
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if numeric:
        return T.LongType() if all(isinstance(v, int) for v in numbers) else T.DoubleType()
    kinds = {
        "boolean" if isinstance(v, bool) else "number" if v in numbers else type(v).__name__
        for v in values
    }
    if not kinds:
        return T.StringType()
    if len(kinds) > 1 or kinds & {"dict", "list"}:
        raise InvalidSpec(
            f"input.{path}",
            sorted(kinds),
            "stock Spark columns hold one scalar type",
            "give the field one JSON type in every event, or use --engine oracle",
        )
    kind = kinds.pop()
    if kind == "boolean":
        return T.BooleanType()
    if kind == "number":
        return T.LongType() if all(isinstance(v, int) for v in numbers) else T.DoubleType()
    return T.StringType()


def stage_fields(query: Query) -> set[str]:
    """The fields the query's stages read (where fields, deduplicate keys), but its ``on``."""
    read: set[str] = set()
    for stage in query.stages:
        read.update(stage.condition.fields if isinstance(stage, Where) else stage.key)
    return read - {query.window.on}


def payload_schema(query: Query, payloads: Sequence[Mapping[str, Any]]) -> T.StructType:
    """The typed columns a user's DataFrame would have for the fields ``query`` reads.

    Keys (``group_by``, ``aggregate_by``, the fields the stages read) and ``count(x)``
    fields take their one JSON
    type (mixed types are an input error); ``sum``/``min``/``max``/``avg`` fields are
    numbers (long if every number is an integer), so other values read as null and
    are ignored, as the oracle ignores them. ``count(x)`` alone reads any value as text.
    """
    numeric = {a.field for a in query.aggregate or () if a.field and a.function != "count"}
    counted = {a.field for a in query.aggregate or () if a.field and a.function == "count"}
    keyed = set(query.group_by) | set(query.aggregate_by) | stage_fields(query)
    tree: dict[str, Any] = {}
    for path in sorted(numeric | counted | keyed):
        values = [v for v in map(getter(path), payloads) if v is not None]
        if (
            path in numeric
            and (path in keyed or path in counted)
            and any(not isinstance(v, int | float) or isinstance(v, bool) for v in values)
        ):
            raise InvalidSpec(
                f"input.{path}", "numbers and other values",
                "one stock Spark column cannot be summed and keyed or counted by all values",
                "give the field numbers only, or use --engine oracle",
            )
        kind = (
            T.StringType()
            if path in counted and path not in keyed | numeric
            else _json_type(values, path, path in numeric)
        )
        node = tree
        *parents, leaf = path.split(".")
        for part in parents:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise InvalidSpec(f"input.{path}", part, "is both a value and a struct",
                                  "read either the field or its subfields")
            node = child
        if isinstance(node.get(leaf), dict):
            raise InvalidSpec(f"input.{path}", leaf, "is both a value and a struct",
                              "read either the field or its subfields")
        node[leaf] = kind

    def struct(node: Mapping[str, Any]) -> T.StructType:
        return T.StructType([
            T.StructField(k, struct(v) if isinstance(v, dict) else v) for k, v in node.items()
        ])

    return struct(tree)


def stock_events(spark: Any, plan: StockPlan) -> DataFrame:
    """The plan's micro-batches as a streaming DataFrame of typed columns plus ``_t_ms``."""
    stream = scripted_stream(spark, plan.feed.batches)
    parsed = stream.where(F.col("kind") == F.lit(EVENT)).select(
        F.from_json(
            "payload",
            T.StructType([T.StructField("t", T.LongType()), T.StructField("p", plan.schema)]),
        ).alias("e")
    )
    columns = [F.col("e.t").alias("_t_ms")]
    columns += [F.col("e.p").getField(f.name).alias(f.name) for f in plan.schema.fields]
    return parsed.select(*columns)


def replay_stock(
    scenario: Scenario, spark: Any, *, micro_batch: int = 1, checkpoint: str | None = None
) -> SparkRun:
    """Run ``scenario`` (profile ``spark``) through the stock mapping, micro-batch by
    micro-batch (:func:`plan_stock`), and return its emissions in print order.

    Each emission's ``after_seq``/``wall_ms`` is the position after its micro-batch
    (from the foreachBatch batch id). Raises InvalidSpec when stock Spark cannot run it.
    """
    check_stock(scenario.query, scenario.rules)
    plan = plan_stock(scenario, micro_batch)
    out = stock_window(stock_events(spark, plan), scenario.query, event_time="_t_ms")
    collected: list[tuple[int, dict[str, Any]]] = []

    def keep(batch: DataFrame, batch_id: int) -> None:
        collected.extend((batch_id, r.asDict()) for r in batch.collect())

    with checkpoint_dir(checkpoint, "stock") as location:
        query = (
            out.writeStream.outputMode(scenario.query.output_mode)
            .foreachBatch(keep)
            .option("checkpointLocation", location)
            .trigger(availableNow=True)
            .start()
        )
        try:
            query.awaitTermination()
        finally:
            query.stop()
    records = []
    for batch_id, record in collected:
        after_seq, wall_ms = plan.positions[min(batch_id, len(plan.positions) - 1)]
        record.update(after_seq=after_seq, wall_ms=wall_ms, step=control_step(after_seq),
                      emit_index=0)
        group = json.loads(record["group"])
        width = len(scenario.query.group_by)
        key = to_json_text(group if width > 1 else [group] if width else [])
        record["group_first_seq"] = plan.first_seen.get(key)
        records.append(record)
    records.sort(key=lambda r: (print_order(r), r["row"]))
    steps = tuple(r["step"] for r in records)
    return SparkRun(Result(tuple(output_of(r) for r in records)), plan.feed, steps, "stock")


def oracle_emissions(scenario: Scenario, run: SparkRun) -> list[Output]:
    """The oracle's ``spark`` profile emissions over the run's micro-batches."""
    items = tuple(item for group in run.feed.items for item in group)
    return list(replay(dataclasses.replace(scenario, items=items)).emissions)


def _numbers_by_value(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _numbers_by_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers_by_value(v) for v in value]
    return value


def _by_value(output: Output) -> Output:
    line = _numbers_by_value(json.loads(to_jsonl_line(output)))
    assert isinstance(output, Emission)
    return dataclasses.replace(output, group=line["group"], row=line["row"])


def compare_stock(scenario: Scenario, run: SparkRun) -> list[str]:
    """Divergences between a stock run and the oracle's ``spark`` profile, emissions only
    (stock Spark reports no drops); numbers compare by value (a long-typed column's 3
    equals an oracle 3.0 and vice versa)."""
    want = [_by_value(o) for o in oracle_emissions(scenario, run)]
    got = [_by_value(o) for o in run.result.outputs if isinstance(o, Emission)]
    return divergences(want, got)
