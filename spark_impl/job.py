"""Windowed jobs: a window spec applied to a source and written to a sink, on any Spark.

A job reads *job input rows* (:data:`JOB_INPUT_DDL`) from a source, runs the exact
operator (:func:`windtunnel.spark_impl.operator.apply_window`, default profile) and
writes its output rows (:data:`windtunnel.spark_impl.schema.OUTPUT_DDL`, one per
emission or drop) to a sink.

Sources (each a streaming DataFrame of job input rows):

- :func:`records_source`: what ``windtunnel generate`` writes (``spark-dir`` directory,
  ``jsonl`` or ``parquet`` file): one micro-batch per spark-dir file, or
  ``rows_per_batch`` records per micro-batch, in seq order; with ``end_of_input`` an
  ``end`` row rides in the last micro-batch, so open windows flush exactly once.
- :func:`kafka_source`: Spark's ``format("kafka")`` (needs the connector on the
  classpath: :data:`KAFKA_PACKAGE`); seq from the ``wt-seq`` header, arrival from the
  record timestamp.
- :func:`dataframe_source`: any user DataFrame (streaming or batch).

Sinks (:class:`Sink`): JSON lines or Parquet directory, console, memory table, or a
``foreachBatch`` callable.

Wall clock: ``clock="arrival"`` (virtual) moves the wall clock with each event's
arrival column; every event also becomes a ``clock`` row for every bucket, so each
bucket sees the stream-wide wall clock move where the oracle does (exact per event).
``clock="system"``: processing-time timers every ``tick_ms`` move it to the system clock.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

from windtunnel.oracle.engine import DEFAULT_RULES
from windtunnel.oracle.errors import EngineUnavailable, InvalidInput, InvalidSpec
from windtunnel.oracle.rules import Rules
from windtunnel.oracle.scenario import Scenario, load_yaml, parse_scenario
from windtunnel.oracle.spec import Query
from windtunnel.spark_impl.operator import apply_window, bucket_count, check_rules
from windtunnel.spark_impl.schema import CLOCK, END, EVENT

JOB_INPUT_COLUMNS = ("kind", "seq", "arrival_ms", "after_seq", "payload")
JOB_INPUT_DDL = "kind string, seq long, arrival_ms long, after_seq long, payload string"
"""A job's input rows: ``kind`` (``event``, ``clock`` or ``end``), ``seq`` (stream order,
0, 1, 2, ...; null for control rows), ``arrival_ms`` (wall clock at arrival, epoch ms),
``after_seq`` (control rows: seq of the last event before them), ``payload`` (the
event as JSON object text)."""

KAFKA_PACKAGE = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.3.0"
"""Maven coordinate of Spark's Kafka connector for the installed PySpark (Scala 2.13)."""

CLOCKS = ("arrival", "system")
SINK_KINDS = ("json", "parquet", "console", "memory", "foreach_batch")
RECORD_FORMATS = ("spark-dir", "jsonl", "parquet")
RECORDS_SOURCE = "windtunnel_records"

_names = itertools.count()


@dataclass(frozen=True, slots=True)
class JobSpec:
    """What a job computes: the query and the default-profile rules it runs under."""

    query: Query
    rules: Rules = DEFAULT_RULES
    time_unit_ms: int = 1
    start_wall_ms: int = 0
    profile: str = "tenzir"
    name: str = "job"

    def __post_init__(self) -> None:
        check_rules(self.rules, self.profile)


def spec_of(spec: JobSpec | Scenario | Query) -> JobSpec:
    """A JobSpec from a Query (default rules), a Scenario (its window block) or a JobSpec."""
    if isinstance(spec, JobSpec):
        return spec
    if isinstance(spec, Query):
        return JobSpec(spec)
    return JobSpec(
        spec.query,
        spec.rules,
        spec.time_unit_ms,
        spec.start_wall_ms,
        spec.profile.name,
        spec.name,
    )


def load_spec(path: str | Path) -> JobSpec:
    """The spec of a scenario or spec file (YAML/JSON with ``window`` or ``query``, ``group_by``,
    ``aggregate``, ...); its ``input`` and ``expect`` are ignored. Raises InvalidScenario."""
    from windtunnel.oracle.errors import InvalidScenario

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidScenario(
            "spec", str(path), f"cannot read ({exc.strerror})", "give an existing scenario file"
        ) from exc
    data = load_yaml(text)
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k not in ("input", "expect")} | {"input": []}
    return spec_of(parse_scenario(data, default_name=path.stem))


# ---------------------------------------------------------------- records source


@dataclass(frozen=True, slots=True)
class _Slice:
    """One micro-batch of a records input: a file, or rows ``[start, stop)`` of a file."""

    path: str
    fmt: str
    start: int = 0
    stop: int | None = None


def _plan(path: str, fmt: str, rows_per_batch: int) -> list[_Slice]:
    if fmt == "spark-dir":
        files = sorted(p for p in Path(path).glob("*.jsonl") if not p.name.startswith("_"))
        return [_Slice(str(p), "jsonl") for p in files]
    if fmt == "parquet":
        import pyarrow.parquet as pq

        rows = pq.ParquetFile(path).metadata.num_rows
        return [_Slice(path, fmt, s, s + rows_per_batch) for s in range(0, rows, rows_per_batch)]
    slices: list[_Slice] = []
    with open(path, "rb") as lines:  # byte ranges of rows_per_batch lines each
        start = position = count = 0
        for line in lines:
            position += len(line)
            count += 1
            if count == rows_per_batch:
                slices.append(_Slice(path, fmt, start, position))
                start, count = position, 0
        if count:
            slices.append(_Slice(path, fmt, start, position))
    return slices


def _read_slice(part: _Slice) -> Any:
    """The slice's records as an Arrow table of job input columns (events, seq order)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if part.fmt == "parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(part.path, columns=["seq", "arrival_ms", "value"])
        table = table.slice(part.start, (part.stop or table.num_rows) - part.start)
    else:
        import io

        import pyarrow.json as pj

        with open(part.path, "rb") as handle:
            handle.seek(part.start)
            data = handle.read() if part.stop is None else handle.read(part.stop - part.start)
        schema = pa.schema(
            [("seq", pa.int64()), ("arrival_ms", pa.int64()), ("value", pa.string())]
        )
        table = pj.read_json(
            io.BytesIO(data),
            parse_options=pj.ParseOptions(
                explicit_schema=schema, unexpected_field_behavior="ignore"
            ),
        )
    n = table.num_rows
    return pa.table(
        {
            "kind": pa.array([EVENT] * n, pa.string()),
            "seq": table["seq"].cast(pa.int64()),
            "arrival_ms": table["arrival_ms"].cast(pa.int64()),
            "after_seq": pa.nulls(n, pa.int64()),
            "payload": pc.cast(table["value"], pa.string()),
        }
    )


def _end_table(last_seq: int | None, wall_ms: int | None) -> Any:
    import pyarrow as pa

    return pa.table(
        {
            "kind": pa.array([END], pa.string()),
            "seq": pa.nulls(1, pa.int64()),
            "arrival_ms": pa.array([wall_ms], pa.int64()),
            "after_seq": pa.array([last_seq], pa.int64()),
            "payload": pa.nulls(1, pa.string()),
        }
    )


class _RecordsPart(InputPartition):  # type: ignore[misc]
    def __init__(self, part: _Slice | None, end: tuple[int | None, int | None] | None) -> None:
        super().__init__(part)
        self.part = part
        self.end = end


class RecordsReader(DataSourceStreamReader, SupportsTriggerAvailableNow):  # type: ignore[misc]
    """Offsets ``{"batch": i}``: micro-batch i reads slice i; the end row rides in the last."""

    def __init__(self, slices: list[_Slice], end_of_input: bool) -> None:
        self.slices = slices
        self.end_of_input = end_of_input
        self._last: tuple[int | None, int | None] | None = None

    def initialOffset(self) -> dict[str, int]:
        return {"batch": 0}

    def prepareForTriggerAvailableNow(self) -> None:
        pass

    def latestOffset(self, start: dict[str, int], limit: Any) -> dict[str, int]:
        return {"batch": min(start["batch"] + 1, len(self.slices))}

    def _last_event(self) -> tuple[int | None, int | None]:
        """(last seq, largest arrival) of the whole input, for the end row."""
        if self._last is None:
            import pyarrow.compute as pc

            table = _read_slice(self.slices[-1]) if self.slices else None
            if table is None or table.num_rows == 0:
                self._last = (None, None)
            else:
                self._last = (pc.max(table["seq"]).as_py(), pc.max(table["arrival_ms"]).as_py())
        return self._last

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        parts: list[InputPartition] = [
            _RecordsPart(s, None) for s in self.slices[start["batch"] : end["batch"]]
        ]
        if self.end_of_input and end["batch"] == len(self.slices) and start["batch"] < end["batch"]:
            parts.append(_RecordsPart(None, self._last_event()))
        if self.end_of_input and not self.slices and start["batch"] == end["batch"] == 0:
            parts.append(_RecordsPart(None, (None, None)))
        return parts

    def read(self, partition: InputPartition) -> Iterator[Any]:
        table = (
            _read_slice(partition.part)
            if partition.part is not None
            else _end_table(*partition.end)
        )
        yield from table.to_batches()

    def commit(self, end: dict[str, int]) -> None:
        pass


class RecordsSource(DataSource):  # type: ignore[misc]
    """``spark.readStream.format("windtunnel_records").option("path", ...)``: see records_source."""

    @classmethod
    def name(cls) -> str:
        return RECORDS_SOURCE

    def schema(self) -> str:
        return JOB_INPUT_DDL

    def streamReader(self, schema: Any) -> RecordsReader:
        options = self.options
        slices = _plan(options["path"], options["format"], int(options["rows_per_batch"]))
        return RecordsReader(slices, options.get("end_of_input", "true") == "true")


def records_format(path: str | Path) -> str:
    """``spark-dir`` for a directory, else ``parquet`` or ``jsonl`` by suffix; raises InvalidInput."""
    path = Path(path)
    if path.is_dir():
        return "spark-dir"
    if not path.exists():
        raise InvalidInput("source", str(path), "does not exist", "give a file or directory")
    if path.suffix == ".parquet":
        return "parquet"
    if path.suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    raise InvalidInput(
        "source",
        str(path),
        "unknown records format",
        "give a spark-dir directory, a .jsonl or a .parquet file from windtunnel generate",
    )


def records_source(
    spark: Any,
    path: str | Path,
    *,
    rows_per_batch: int = 10_000,
    end_of_input: bool = True,
) -> DataFrame:
    """A streaming DataFrame of job input rows from ``windtunnel generate`` output.

    ``path``: a ``spark-dir`` directory (one micro-batch per file, in name order), or a
    ``jsonl``/``parquet`` file (``rows_per_batch`` records per micro-batch, in file
    order). Columns used: ``seq``, ``arrival_ms``, ``value`` (the payload as JSON text).
    The input is what exists when the query starts (bounded); with ``end_of_input`` an
    ``end`` row follows the last record, so open windows flush exactly once. Raises
    InvalidInput for a missing path or unknown format, or a bad ``rows_per_batch``.
    """
    fmt = records_format(path)
    if (
        isinstance(rows_per_batch, bool)
        or not isinstance(rows_per_batch, int)
        or rows_per_batch < 1
    ):
        raise InvalidInput(
            "rows_per_batch", rows_per_batch, "must be an integer >= 1", "give e.g. 10000"
        )
    spark.dataSource.register(RecordsSource)
    return (
        spark.readStream.format(RECORDS_SOURCE)
        .option("path", str(Path(path).resolve()))
        .option("format", fmt)
        .option("rows_per_batch", str(rows_per_batch))
        .option("end_of_input", "true" if end_of_input else "false")
        .load()
    )


# ---------------------------------------------------------------- other sources


def kafka_source(
    spark: Any,
    *,
    bootstrap: str,
    topic: str,
    options: dict[str, str] | None = None,
) -> DataFrame:
    """A streaming DataFrame of job input rows from Kafka ``topic`` (``format("kafka")``).

    ``seq`` comes from the record header ``wt-seq`` (as ``windtunnel generate --format
    kafka`` writes it), ``arrival_ms`` from the record timestamp (use LogAppendTime
    topics for arrival times), ``payload`` from the value (JSON text). Needs Spark's
    Kafka connector: start Spark with ``--packages`` :data:`KAFKA_PACKAGE` (or
    ``spark.jars.packages``); raises EngineUnavailable when it is not on the classpath.
    """
    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("includeHeaders", "true")
    )
    for key, value in (options or {}).items():
        reader = reader.option(key, value)
    try:
        raw = reader.load()
    except Exception as exc:
        text = str(exc)
        if "KAFKA_DATA_SOURCE_NOT_ENABLED" in text or "Failed to find data source: kafka" in text:
            raise EngineUnavailable(
                "Spark's Kafka connector is not on the classpath: start Spark with "
                f"--packages {KAFKA_PACKAGE} (or conf spark.jars.packages={KAFKA_PACKAGE})"
            ) from exc
        raise
    seq_header = F.filter(F.col("headers"), lambda h: h["key"] == F.lit("wt-seq"))
    return raw.select(
        F.lit(EVENT).alias("kind"),
        F.element_at(seq_header, 1)["value"].cast("string").cast("long").alias("seq"),
        (F.col("timestamp").cast("double") * 1000).cast("long").alias("arrival_ms"),
        F.lit(None).cast("long").alias("after_seq"),
        F.col("value").cast("string").alias("payload"),
    )


def dataframe_source(
    df: DataFrame,
    *,
    seq: str = "seq",
    arrival_ms: str | None = "arrival_ms",
    payload: str | None = None,
    kind: str | None = None,
    after_seq: str | None = None,
) -> DataFrame:
    """Job input rows from a user DataFrame (streaming or batch).

    ``seq`` names the stream-order column (0, 1, 2, ...), ``arrival_ms`` the arrival
    wall clock (epoch ms; None: no virtual clock), ``payload`` a JSON-text column with the
    event (otherwise every other column is the payload), ``kind``/``after_seq`` optional
    control-row columns (see :data:`JOB_INPUT_DDL`). Raises InvalidInput for a missing column.
    """
    for label, name in (
        ("seq", seq),
        ("arrival_ms", arrival_ms),
        ("payload", payload),
        ("kind", kind),
        ("after_seq", after_seq),
    ):
        if name is not None and name not in df.columns:
            raise InvalidInput(
                label, name, "not a column of the DataFrame", f"use one of {df.columns}"
            )
    named = {c for c in (seq, arrival_ms, payload, kind, after_seq) if c}
    rest = [c for c in df.columns if c not in named]
    if payload:
        payload_col = F.col(payload).cast("string")
    elif rest:
        payload_col = F.to_json(F.struct(*[F.col(c) for c in rest]))
    else:
        payload_col = F.lit("{}")
    kind_col = F.coalesce(F.col(kind), F.lit(EVENT)) if kind else F.lit(EVENT)
    return df.select(
        kind_col.alias("kind"),
        F.col(seq).cast("long").alias("seq"),
        (F.col(arrival_ms).cast("long") if arrival_ms else F.lit(None).cast("long")).alias(
            "arrival_ms"
        ),
        (F.col(after_seq).cast("long") if after_seq else F.lit(None).cast("long")).alias(
            "after_seq"
        ),
        F.when(kind_col == F.lit(EVENT), payload_col).alias("payload"),
    )


# ---------------------------------------------------------------- the window


def windowed(
    spec: JobSpec | Scenario | Query,
    rows: DataFrame,
    *,
    clock: str = "arrival",
    tick_ms: int = 1000,
    buckets: int | None = None,
) -> DataFrame:
    """The exact operator over job input rows: a DataFrame of output rows (schema.OUTPUT_DDL).

    ``clock="arrival"``: the wall clock follows ``arrival_ms``; with more than one bucket
    each event is also sent as a ``clock`` row (after the previous seq) to every bucket,
    so idle timeouts and ``now()`` windows close at the oracle's stream points (this
    costs one narrow row per bucket and event). ``clock="system"``: ``arrival_ms`` is
    ignored and processing-time timers move the wall clock every ``tick_ms`` (streaming
    only). Raises InvalidSpec for an unknown clock or a bad tick.
    """
    job = spec_of(spec)
    if clock not in CLOCKS:
        raise InvalidSpec("clock", clock, "unknown wall clock", f"use one of {', '.join(CLOCKS)}")
    if isinstance(tick_ms, bool) or not isinstance(tick_ms, int) or tick_ms < 1:
        raise InvalidSpec("tick_ms", tick_ms, "must be an integer >= 1", "give e.g. 1000")
    if clock == "system" and not rows.isStreaming:
        raise InvalidSpec(
            "clock", clock, "the system clock needs a streaming source", "use clock arrival"
        )
    spark = rows.sparkSession
    if buckets is None:
        buckets = 2 * int(spark.conf.get("spark.sql.shuffle.partitions") or "2")
    used = bucket_count(job.query, job.rules, buckets)
    if clock == "arrival" and used > 1:
        rows = _with_clock_rows(rows)
    return apply_window(
        rows,
        job.query,
        rules=job.rules,
        time_unit_ms=job.time_unit_ms,
        start_wall_ms=job.start_wall_ms,
        buckets=used,
        seq="seq",
        arrival_ms="arrival_ms" if clock == "arrival" else None,
        kind="kind",
        after_seq="after_seq",
        payload="payload",
        system_tick_ms=tick_ms if clock == "system" else None,
    )


def _with_clock_rows(rows: DataFrame) -> DataFrame:
    """Each event row plus a ``clock`` row at its arrival, right before it in stream order."""
    fields = [F.col(c).alias(c) for c in JOB_INPUT_COLUMNS]
    clock_row = F.struct(
        F.lit(CLOCK).alias("kind"),
        F.lit(None).cast("long").alias("seq"),
        F.col("arrival_ms").alias("arrival_ms"),
        F.when(F.col("seq") > 0, F.col("seq") - 1).cast("long").alias("after_seq"),
        F.lit(None).cast("string").alias("payload"),
    )
    is_event = (F.col("kind") == F.lit(EVENT)) & F.col("arrival_ms").isNotNull()
    both = F.when(is_event, F.array(clock_row, F.struct(*fields))).otherwise(
        F.array(F.struct(*fields))
    )
    return rows.select(F.explode(both).alias("r")).select(*[f"r.{c}" for c in JOB_INPUT_COLUMNS])


# ---------------------------------------------------------------- sinks and running


@dataclass(frozen=True, slots=True)
class Sink:
    """Where output rows go: ``json``/``parquet`` (a directory at ``path``; Spark's file
    sink, exactly once with the checkpoint), ``console`` (printed per micro-batch),
    ``memory`` (a table named ``name``), ``foreach_batch`` (``function(df, batch_id)``)."""

    kind: str
    path: str | None = None
    name: str | None = None
    function: Callable[[DataFrame, int], None] | None = None

    def __post_init__(self) -> None:
        if self.kind not in SINK_KINDS:
            raise InvalidInput(
                "sink", self.kind, "unknown sink", f"use one of {', '.join(SINK_KINDS)}"
            )
        if self.kind in ("json", "parquet") and not self.path:
            raise InvalidInput(
                "sink.path", self.path, f"a {self.kind} sink needs a directory", "give --out DIR"
            )
        if self.kind == "foreach_batch" and not callable(self.function):
            raise InvalidInput(
                "sink.function", self.function, "must be callable", "pass function(df, batch_id)"
            )


@dataclass(frozen=True, slots=True)
class BatchProgress:
    """One finished micro-batch: its id, rows read from the source, output rows written."""

    batch_id: int
    rows_in: int
    rows_out: int
    duration_ms: int


@dataclass(frozen=True, slots=True)
class JobReport:
    """What a job run did: its micro-batches (with data) and totals."""

    batches: tuple[BatchProgress, ...] = ()
    checkpoint: str | None = None
    timed_out: bool = False
    """True when ``timeout_s`` stopped the query."""

    @property
    def rows_in(self) -> int:
        return sum(b.rows_in for b in self.batches)

    @property
    def rows_out(self) -> int:
        return sum(b.rows_out for b in self.batches)


OUT_METRIC = "windtunnel_rows_out"
TRIGGER_HELP = "availableNow, or a processing interval such as '5 seconds'"


def trigger_options(trigger: str) -> dict[str, Any]:
    """``writeStream.trigger`` keyword arguments; raises InvalidInput for an unknown trigger."""
    text = trigger.strip()
    if text.lower() in ("availablenow", "available-now", "available_now"):
        return {"availableNow": True}
    from windtunnel.oracle.timeparse import parse_duration_ms

    try:
        interval_ms = parse_duration_ms(text.removeprefix("processing").strip(" =:"), "trigger")
    except InvalidInput as exc:
        raise InvalidInput("trigger", trigger, "unknown trigger", f"give {TRIGGER_HELP}") from exc
    if interval_ms < 1:
        raise InvalidInput("trigger", trigger, "interval must be positive", f"give {TRIGGER_HELP}")
    return {"processingTime": f"{interval_ms} milliseconds"}


def run_job(
    spec: JobSpec | Scenario | Query,
    source: DataFrame,
    sink: Sink,
    *,
    clock: str = "arrival",
    tick_ms: int = 1000,
    trigger: str = "availableNow",
    checkpoint: str | None = None,
    buckets: int | None = None,
    timeout_s: float | None = None,
    on_batch: Callable[[BatchProgress], None] | None = None,
) -> JobReport:
    """Run ``spec`` over job input rows ``source`` into ``sink`` and wait for the end.

    A streaming source runs as a streaming query with ``trigger`` (``availableNow``: until
    the input present at start is consumed; an interval: until ``timeout_s`` passes or
    the query fails); ``checkpoint`` (a directory) lets a stopped job resume without loss
    or duplicates (keep ``buckets`` the same); ``on_batch`` is called for each finished
    micro-batch. A batch source runs once (``apply_window`` on a bounded input). Raises
    InvalidInput/InvalidSpec for bad options, EngineUnavailable when the query fails.
    """
    out = windowed(spec, source, clock=clock, tick_ms=tick_ms, buckets=buckets)
    if not source.isStreaming:
        return _run_batch(out, sink, on_batch)
    options = trigger_options(trigger)
    if timeout_s is None and "processingTime" in options:
        raise InvalidInput(
            "timeout", None, "a processing trigger runs until stopped", "give a timeout"
        )
    location = checkpoint or _temp_checkpoint()
    out = out.observe(OUT_METRIC, F.count(F.lit(1)).alias("rows"))
    writer = out.writeStream.outputMode("append").option("checkpointLocation", location)
    writer = writer.trigger(**options)
    writer = _attach(writer, sink)
    query = writer.start()
    seen: list[BatchProgress] = []
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    # processing-time timers keep a system-clock query running after its input: under
    # availableNow it stops at the first micro-batch without input or output after the input
    stop_when_idle = clock == "system" and "availableNow" in options
    timed_out = False
    try:
        while query.isActive:
            if deadline is not None and time.monotonic() >= deadline:
                timed_out = True
                break
            query.awaitTermination(0.5)
            idle = _collect_progress(query, seen, on_batch)
            if stop_when_idle and idle and seen:
                break
        _collect_progress(query, seen, on_batch)
        error = query.exception()
    finally:
        query.stop()
    if error is not None:
        raise EngineUnavailable(f"the spark job failed: {_first_line(error)}")
    return JobReport(tuple(seen), location, timed_out)


def _first_line(error: Any) -> str:
    text = str(getattr(error, "desc", None) or error)
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__


def _temp_checkpoint() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="windtunnel-job-ckpt-")


def _attach(writer: Any, sink: Sink) -> Any:
    if sink.kind in ("json", "parquet"):
        assert sink.path is not None
        return writer.format(sink.kind).option("path", str(Path(sink.path).resolve()))
    if sink.kind == "console":
        return writer.format("console").option("truncate", "false").option("numRows", 1000)
    if sink.kind == "memory":
        return writer.format("memory").queryName(sink.name or f"windtunnel_job_{next(_names)}")
    return writer.foreachBatch(sink.function)


def _collect_progress(
    query: Any, seen: list[BatchProgress], on_batch: Callable[[BatchProgress], None] | None
) -> bool:
    """Report new micro-batches with data; True when a micro-batch after the last reported
    one had neither input nor output."""
    done = {b.batch_id for b in seen}
    idle = False
    for progress in query.recentProgress:
        data = progress if isinstance(progress, dict) else json.loads(progress.json)
        batch_id = int(data.get("batchId", -1))
        if batch_id in done or batch_id < 0:
            continue
        rows_in = _rows_in(progress, data)
        rows_out = _rows_out(data)
        if rows_in == 0 and rows_out == 0:  # no-data batches are not reported
            idle = idle or (bool(seen) and batch_id > max(b.batch_id for b in seen))
            continue
        done.add(batch_id)
        entry = BatchProgress(
            batch_id,
            rows_in,
            rows_out,
            int((data.get("durationMs") or {}).get("triggerExecution", 0)),
        )
        seen.append(entry)
        if on_batch is not None:
            on_batch(entry)
    return idle


def _rows_in(progress: Any, data: dict[str, Any]) -> int:
    """Rows read in a micro-batch (Spark Connect leaves the total empty: sum the sources)."""
    if data.get("numInputRows") is not None:
        return int(data["numInputRows"])
    return sum(int(source.get("numInputRows") or 0) for source in data.get("sources") or [])


def _rows_out(data: dict[str, Any]) -> int:
    """Output rows of a micro-batch, from the ``observe`` metric run_job attaches."""
    metric = (data.get("observedMetrics") or {}).get(OUT_METRIC)
    if metric is None:
        return 0
    return _count_in(metric)


def _count_in(metric: Any) -> int:
    """The count inside an observed-metric value: a Row, a dict (``rows``), or Spark
    Connect's JSON form (``{"values": [n], "schema": ...}``)."""
    if hasattr(metric, "asDict"):
        metric = metric.asDict()
    if isinstance(metric, dict):
        for key in ("rows", "values"):
            if key in metric:
                return _count_in(metric[key])
        return 0
    if isinstance(metric, list | tuple):
        return _count_in(metric[0]) if metric else 0
    return int(metric or 0)


def _run_batch(
    out: DataFrame, sink: Sink, on_batch: Callable[[BatchProgress], None] | None
) -> JobReport:
    started = time.monotonic()
    out = out.persist()
    try:
        rows_out = out.count()
        if sink.kind in ("json", "parquet"):
            assert sink.path is not None
            out.write.mode("append").format(sink.kind).save(str(Path(sink.path).resolve()))
        elif sink.kind == "console":
            out.show(n=max(rows_out, 1), truncate=False)
        elif sink.kind == "memory":
            out.createOrReplaceTempView(sink.name or f"windtunnel_job_{next(_names)}")
        else:
            assert sink.function is not None
            sink.function(out, 0)
    finally:
        if sink.kind != "memory":
            out.unpersist()
    entry = BatchProgress(0, -1, rows_out, int((time.monotonic() - started) * 1000))
    if on_batch is not None:
        on_batch(entry)
    return JobReport((entry,))
