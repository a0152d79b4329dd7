"""Running a streaming job on the production operator.

:func:`run_production` opens the checkpoint (``ProductionRun.open`` on the Java side: a checkpoint
whose state is missing, corrupt, or from another format or query stops here with one line),
then runs a ``foreachBatch`` query whose micro-batch function computes the micro-batch's
output rows on the production operator, hands them to the sink (:mod:`~.sink`) and commits the
state version. Events travel as typed columns when the job's input carries them
(``dataframe_source`` keeps a user DataFrame's columns beside the JSON payload, as
``wt_field_<name>``) and every one is of a type the map side reads; otherwise as the JSON
payload text.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame

from windtunnel.oracle.model.errors import EngineUnavailable, InvalidInput
from windtunnel.spark_impl.errors import cause_line
from windtunnel.spark_impl.production.plan import SIMPLE_TYPES, input_layout, plan_json
from windtunnel.spark_impl.production.sink import ProductionSink
from windtunnel.spark_impl.schema import CONSTANT, FIELD_PREFIX

STREAM_COLUMNS = {
    "seq": "seq", "arrival": "arrival_ms", "kind": "kind", "after_seq": "after_seq", "lane": "lane",
}
"""The job input columns the plan reads (``lane``: independent streams in one query, for
harnesses that run many scenarios at once)."""


@dataclass(slots=True)
class Progress:
    """Micro-batches finished so far: (batch id, rows in, rows out, duration ms), and the
    windows open after the last one (None before the first)."""

    batches: list[tuple[int, int, int, int]] = field(default_factory=list)
    open_windows: int | None = None


def typed_columns(source: DataFrame, time_field: str | None, pass_through: bool) -> list[str] | None:
    """The ``wt_field_`` columns when the map side can read every one directly, else None
    (then the JSON payload is read). A timestamp column is read directly only as the time
    field of an aggregating query (anywhere else its text matters)."""
    fields = [f for f in source.schema.fields if f.name.startswith(FIELD_PREFIX)]
    if not fields:
        return None
    for f in fields:
        kind = f.dataType.simpleString()
        name = f.name.removeprefix(FIELD_PREFIX)
        if kind in SIMPLE_TYPES:
            continue
        if kind == "timestamp" and name == time_field and not pass_through:
            continue
        return None
    return [f.name for f in fields]


def prepared_input(
    source: DataFrame, query: Any, *, read_constants: bool = False
) -> tuple[DataFrame, dict[str, Any], bool]:
    """The micro-batch columns the plan reads, their layout, and whether the time field is a
    timestamp column. Stream columns marked :data:`CONSTANT` are left out unless
    ``read_constants`` (rows of another source are added to the micro-batch later)."""
    from pyspark.sql import functions as F

    time_field = query.window.on if "." not in query.window.on else None
    typed = typed_columns(source, time_field, query.aggregate is None)
    stream = [
        f.name for f in source.schema.fields
        if f.name in STREAM_COLUMNS.values() and (read_constants or not is_constant(f))
    ]
    stream.sort(key=list(STREAM_COLUMNS.values()).index)
    if typed is None:
        selected = source.select(*stream, "payload")
        layout = input_layout(
            selected.schema, payload="payload",
            stream_columns={k: (v if v in stream else None) for k, v in STREAM_COLUMNS.items()},
        )
        return selected, layout, False
    selected = source.select(
        *stream, *[F.col(c).alias(c.removeprefix(FIELD_PREFIX)) for c in typed]
    )
    layout = input_layout(
        selected.schema, payload=None,
        stream_columns={k: (v if v in stream else None) for k, v in STREAM_COLUMNS.items()},
    )
    is_ts = any(
        f.name == time_field and f.dataType.simpleString() == "timestamp"
        for f in selected.schema.fields
    )
    return selected, layout, is_ts


def is_constant(field: Any) -> bool:
    """Whether a stream column holds one value on every row (:data:`CONSTANT`): left out, the
    operator reads its default (every row an event; no arrival; no after_seq)."""
    return field.name != "seq" and bool(field.metadata.get(next(iter(CONSTANT))))


def with_ticks(source: DataFrame, tick_ms: int) -> DataFrame:
    """``source`` and a ``rate`` stream of ``clock`` rows without arrival (they move nothing:
    they make the trigger run a micro-batch, whose start reads the system clock)."""
    from pyspark.sql import functions as F

    spark = source.sparkSession
    per_second = max(1, -(-1000 // tick_ms))
    ticks = spark.readStream.format("rate").option("rowsPerSecond", per_second).load()
    columns = []
    for column in source.schema.fields:
        value = F.lit("clock") if column.name == "kind" else F.lit(None)
        columns.append(value.cast(column.dataType).alias(column.name))
    return source.unionByName(ticks.select(*columns))


def open_run(jvm: Any, spark: Any, plan: str, checkpoint: str) -> Any:
    """``ProductionRun.open``; a checkpoint that cannot be resumed is InvalidInput (one line)."""
    try:
        return jvm.call("open", spark._jsparkSession, plan, checkpoint)
    except Exception as exc:
        line = java_cause(exc)
        if "StateError" in line:
            raise state_error(checkpoint, line) from None
        raise EngineUnavailable(f"the production operator cannot open {checkpoint}: {cause_line(exc)}") from None


def stored_slices(jvm: Any, spark: Any, checkpoint: str) -> int | None:
    """The slice count a checkpoint's state started with, or None for a new checkpoint."""
    found = int(jvm.call("storedSlices", spark._jsparkSession, checkpoint))
    return None if found < 0 else found


def run_production(
    job: Any,
    source: DataFrame,
    output: ProductionSink,
    *,
    slices: int,
    options: dict[str, Any],
    checkpoint: str,
    timeout_s: float | None,
    on_batch: Callable[[int, int, int, int], None] | None = None,
    clock: str = "arrival",
    tick_ms: int = 1000,
) -> tuple[Progress, bool]:
    """Runs ``job`` (its query, rules, time unit and start of the wall clock, as
    :class:`~windtunnel.spark_impl.job.JobSpec` has them) over ``source`` into ``output``;
    returns its micro-batches and whether ``timeout_s`` stopped it. ``slices``: the key
    slices of a new checkpoint (a checkpoint keeps the count it started with).

    ``clock="system"``: the wall clock is the system clock, read once per micro-batch when
    it starts (every key's idle windows close then, keys without input included); under an
    interval trigger a ``rate`` source adds a tick row every ``tick_ms`` so that micro-batches
    run while no data arrives. Raises InvalidInput for a checkpoint that cannot be resumed,
    EngineUnavailable when the production operator is not available or the query fails (its first
    line)."""
    from windtunnel.spark_impl.jvm.binding import load
    from windtunnel.spark_impl.jvm.engine_spec import engine_spec
    from windtunnel.spark_impl.streaming import follow

    spark = source.sparkSession
    loaded = load(spark)
    jvm = loaded.jvm
    if jvm is None:
        raise EngineUnavailable(f"the production operator is not available: {loaded.reason}")
    system = clock == "system"
    ticks = system and "processingTime" in options
    selected, layout, time_is_ts = prepared_input(source, job.query, read_constants=ticks)
    spec = engine_spec(job.query, job.rules, job.time_unit_ms, job.start_wall_ms)
    slices = stored_slices(jvm, spark, checkpoint) or slices
    plan = plan_json(job.query, spec, slices, layout, time_is_timestamp=time_is_ts, wall=clock)
    run = open_run(jvm, spark, plan, checkpoint)
    progress = Progress()
    if ticks:
        selected = with_ticks(selected, tick_ms)

    def micro_batch(df: DataFrame, batch_id: int) -> None:
        started = time.monotonic()
        now_ms = int(time.time() * 1000) if system else -(2**63)
        output.write(run, df, int(batch_id), now_ms)
        rows_in, rows_out, open_windows = (int(v) for v in run.commit(int(batch_id)))
        progress.open_windows = open_windows
        entry = (int(batch_id), rows_in, rows_out, int((time.monotonic() - started) * 1000))
        progress.batches.append(entry)
        if on_batch is not None:
            on_batch(*entry)

    writer = selected.writeStream.foreachBatch(micro_batch).option("checkpointLocation", checkpoint)
    query = writer.trigger(**options).start()
    try:
        timed_out = follow(query, timeout_s, lambda: False)
        error = query.exception()
    finally:
        query.stop()
        run.close()
    if error is not None:
        line = java_cause(error)
        if "StateError" in line:
            raise state_error(checkpoint, line)
        raise EngineUnavailable(f"the spark job failed: {cause_line(error)}")
    return progress, timed_out


def state_error(checkpoint: str, line: str) -> InvalidInput:
    """A ``StateError`` line from the Java side (``what is wrong; how to fix it``) as the
    one-line InvalidInput naming the checkpoint."""
    text = line.split("StateError: ", 1)[-1]
    what, _, fix = text.rpartition("; ")
    if not what:
        what, fix = text, "restore the checkpoint whole, or start again with a new checkpoint"
    return InvalidInput("checkpoint", checkpoint, what, fix)


def java_cause(error: Any) -> str:
    """The innermost Java exception's first line (``windtunnel.spark.StateError: ...``), else
    the error's own first line."""
    java = getattr(error, "java_exception", None)
    if java is not None:
        cause = java
        while cause.getCause() is not None:
            cause = cause.getCause()
        return str(cause.toString()).splitlines()[0]
    text = str(getattr(error, "desc", None) or error).strip()
    for line in text.splitlines():
        if "StateError" in line:
            return line.strip()
    return text.splitlines()[0] if text else type(error).__name__
