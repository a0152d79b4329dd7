"""Scenarios through the fast path's micro-batch function (:class:`batch_exact.ExactBatches`).

What ``windtunnel check --target spark-fast`` runs: each scenario's micro-batches (as
:func:`windtunnel.spark_impl.feed.feed` cuts them: a ``Batch`` is one, lone events one each)
become DataFrames handed to the same ``ExactBatches`` object a ``foreachBatch`` query calls,
with micro-batch ids 0, 1, ...; the rows it writes (Parquet files, one per micro-batch) are
read back as the oracle's outputs. The step is picked as in a job:

- **typed rows** (the JVM step where the session has one, else the Python typed step, for a
  covered query): one row per event with ``seq``, ``arrival_ms`` and the event's fields as
  columns. Used when every event has the same fields, none null or named ``seq`` or
  ``arrival_ms``, Arrow can type them, and the wall clock ends where the last event put it
  (an ``advance`` after the last event would move the wall clock of the end-of-input flush,
  which only ``clock`` rows carry). The end of input is :meth:`ExactBatches.finish`.
- **stream rows** otherwise: the operator's input rows (``kind``, ``after_seq``, the event
  as JSON ``payload``), ``clock`` rows for wall-clock moves and an ``end`` row.

Raises InvalidSpec for a scenario the fast path does not run (see :func:`batch_exact.eligible`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.results import Output
from windtunnel.oracle.model.stages import refuse_stages
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.scenario import Scenario
from windtunnel.spark_impl import batch_exact
from windtunnel.spark_impl.feed import Feed, feed
from windtunnel.spark_impl.multi_exact import exact_rules
from windtunnel.spark_impl.schema import CLOCK, END, EVENT, outputs_in_order

STREAM_SCHEMA = pa.schema(
    [
        ("seq", pa.int64()),
        ("arrival_ms", pa.int64()),
        ("kind", pa.string()),
        ("after_seq", pa.int64()),
        ("payload", pa.string()),
    ]
)
STREAM_COLUMNS = batch_exact.Columns("seq", "arrival_ms", "kind", "after_seq", "payload")
TYPED_COLUMNS = batch_exact.Columns("seq", "arrival_ms")


def check_runs(scenario: Scenario) -> None:
    """Raises InvalidSpec when the fast path does not run ``scenario``'s query."""
    refuse_stages(scenario.query.stages, "windtunnel's Spark fast path")
    if not batch_exact.eligible(scenario.query, exact_rules(scenario)):
        raise InvalidSpec(
            "--target", "spark-fast",
            f"the fast path does not run scenario {scenario.name!r}: it covers fixed windows on "
            "an event field with an aggregate, no idle_timeout or aggregate_by, default rules",
            "use --target spark (the general operator) for it",
        )


def run_scenarios(spark: Any, scenarios: Sequence[Scenario]) -> list[tuple[Output, ...]]:
    """Each scenario through a fresh :class:`ExactBatches` (its own state and output
    folder); the outputs in the oracle's order. Raises InvalidSpec (before Spark runs) for
    a scenario the fast path does not run."""
    for scenario in scenarios:
        check_runs(scenario)
    return [run_scenario(spark, scenario) for scenario in scenarios]


def run_scenario(spark: Any, scenario: Scenario) -> tuple[Output, ...]:
    """One scenario through the fast path's micro-batch function (see the module docstring)."""
    check_runs(scenario)
    with tempfile.TemporaryDirectory(prefix="windtunnel-fast-") as tmp:
        root = Path(tmp)
        fed = _feed(scenario)
        typed = typed_batches(scenario, fed)
        batches = batch_exact.ExactBatches(
            scenario.query,
            batch_exact.FileOutput(str(root / "out"), "parquet"),
            str(root / "state"),
            rules=exact_rules(scenario),
            time_unit_ms=scenario.time_unit_ms,
            start_wall_ms=scenario.start_wall_ms,
            columns=TYPED_COLUMNS if typed is not None else STREAM_COLUMNS,
        )
        tables = typed if typed is not None else stream_batches(scenario, fed)
        for batch_id, table in enumerate(tables):
            batches(spark.createDataFrame(table), batch_id)
        if typed is not None:  # the end of input (a scenario always ends)
            batches.finish(spark)
        else:  # the end row rode in the last micro-batch
            batches.flush()
        names = [*map(str, range(len(tables))), "end"]
        rows: list[dict[str, Any]] = []
        for name in names:
            path = batches.output.file(name) if isinstance(batches.output, batch_exact.FileOutput) else None
            if path is not None and path.exists():
                rows.extend(pq.read_table(path).to_pylist())
        return tuple(outputs_in_order(rows))


def _feed(scenario: Scenario) -> Feed:
    return feed(scenario.items, scenario.query.group_by, buckets=1, start_wall_ms=scenario.start_wall_ms)


def stream_batches(scenario: Scenario, fed: Feed | None = None) -> list[pa.Table]:
    """The operator's input rows of each micro-batch (``kind``, ``payload``, ...); ``fed``:
    the scenario's feed when already made."""
    fed = fed or _feed(scenario)
    return [
        pa.Table.from_pylist(
            [
                {"seq": seq, "arrival_ms": arrival, "kind": kind, "after_seq": after, "payload": payload}
                for _bucket, kind, seq, arrival, after, payload in batch
            ],
            schema=STREAM_SCHEMA,
        )
        for batch in fed.batches
    ]


def typed_batches(scenario: Scenario, fed: Feed | None = None) -> list[pa.Table] | None:
    """One table per micro-batch with a row per event (``seq``, ``arrival_ms``, the event's
    fields), or None when the scenario needs stream rows (see the module docstring); ``fed``:
    the scenario's feed when already made."""
    fed = fed or _feed(scenario)
    events = {item.seq: item for group in fed.items for item in _events(group)}
    fields: tuple[str, ...] | None = None
    last_event_wall = scenario.start_wall_ms
    final_wall = scenario.start_wall_ms
    records: list[list[dict[str, Any]]] = []
    for batch in fed.batches:
        rows: list[dict[str, Any]] = []
        for _bucket, kind, seq, arrival, _after, _payload in batch:
            assert arrival is not None
            final_wall = max(final_wall, arrival)
            if kind != EVENT:
                if kind not in (CLOCK, END):
                    return None
                continue
            assert seq is not None
            data = dict(events[seq].payload)
            keys = tuple(sorted(data))
            if fields is None:
                fields = keys
            if keys != fields or "seq" in data or "arrival_ms" in data or any(v is None for v in data.values()):
                return None
            last_event_wall = max(last_event_wall, arrival)
            rows.append({"seq": seq, "arrival_ms": arrival, **data})
        records.append(rows)
    if final_wall != last_event_wall:
        return None
    try:
        tables = [pa.Table.from_pylist(rows) for rows in records]
        schemas = {t.schema for t in tables if t.num_rows}
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return None
    if len(schemas) > 1:
        return None
    schema = next(iter(schemas), None)
    if schema is None:
        return None
    return [t if t.num_rows else schema.empty_table() for t in tables]


def _events(items: Sequence[Any]) -> list[Event]:
    found: list[Event] = []
    for item in items:
        if isinstance(item, Event):
            found.append(item)
        else:
            found.extend(e for e in getattr(item, "events", ()) if isinstance(e, Event))
    return found


__all__ = ["check_runs", "run_scenario", "run_scenarios", "stream_batches", "typed_batches"]
