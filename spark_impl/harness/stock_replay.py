"""Replaying a scenario on stock Spark: the ``spark`` profile's micro-batches through the
stock mapping (:func:`windtunnel.spark_impl.stock.mapping.stock_window`), its emissions
placed at their stream positions, and compared with the oracle's ``spark`` profile."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from windtunnel.oracle.engine import replay
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.fields import getter
from windtunnel.oracle.model.results import Emission, Output, Result, to_jsonl_line
from windtunnel.oracle.model.spec import NOW
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
from windtunnel.oracle.scenario import Scenario
from windtunnel.spark_impl.harness.feed import Feed
from windtunnel.spark_impl.harness.general import collect_by_batch
from windtunnel.spark_impl.harness.runs import SparkRun, divergences
from windtunnel.spark_impl.jobs.scripted import scripted_stream
from windtunnel.spark_impl.schema import (
    EVENT,
    control_step,
    output_of,
    print_order,
    to_json_text,
)
from windtunnel.spark_impl.stock.mapping import check_stock, stock_window
from windtunnel.spark_impl.stock.payload import payload_schema


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
    collected = collect_by_batch(out, checkpoint, output_mode=scenario.query.output_mode,
                                 what="stock")
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
