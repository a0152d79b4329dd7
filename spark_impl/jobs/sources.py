"""Job input rows and their sources: simulator outputs, Kafka, any DataFrame.

Each source gives a streaming (or, for a user's DataFrame, possibly batch) DataFrame of
job input rows (:data:`JOB_INPUT_DDL`) for :func:`windtunnel.spark_impl.job.windowed`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.datasource import DataSource, InputPartition

from windtunnel.oracle.model.errors import EngineUnavailable, InvalidInput
from windtunnel.oracle.model.extras import requires_extra
from windtunnel.spark_impl.general.operator import json_payload, kind_column, row_columns
from windtunnel.spark_impl.jobs.file_records import jvm_records
from windtunnel.spark_impl.jobs.scripted import OneBatchPerOffset
from windtunnel.spark_impl.schema import END, EVENT, FIELD_PREFIX

JOB_INPUT_COLUMNS = ("kind", "seq", "arrival_ms", "after_seq", "payload")
JOB_INPUT_DDL = "kind string, seq long, arrival_ms long, after_seq long, payload string"
"""A job's input rows: ``kind`` (``event``, ``clock`` or ``end``), ``seq`` (stream order,
0, 1, 2, ...; null for control rows), ``arrival_ms`` (wall clock at arrival, epoch ms),
``after_seq`` (control rows: seq of the last event before them), ``payload`` (the
event as JSON object text)."""

KAFKA_PACKAGE = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.3.0"
"""Maven coordinate of Spark's Kafka connector for the installed PySpark (Scala 2.13)."""

RECORD_FORMATS = ("spark-dir", "jsonl", "parquet")
RECORDS_SOURCE = "windtunnel_records"
RECORD_READERS = ("auto", "python")
"""``auto``: Spark's JSON file source for a ``spark-dir`` whose files it reads one per
micro-batch in name order (:mod:`windtunnel.spark_impl.jobs.file_records`), else windtunnel's
Python data source; ``python``: the Python data source always. The rows are the same."""


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


class RecordsReader(OneBatchPerOffset):
    """Micro-batch i reads slice i; the end row rides in the last."""

    def __init__(self, slices: list[_Slice], end_of_input: bool) -> None:
        self.slices = slices
        self.batch_count = len(slices)
        self.end_of_input = end_of_input
        self._last: tuple[int | None, int | None] | None = None

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
    reader: str = "auto",
) -> DataFrame:
    """A streaming DataFrame of job input rows from ``windtunnel generate`` output.

    ``path``: a ``spark-dir`` directory (one micro-batch per file, in name order), or a
    ``jsonl``/``parquet`` file (``rows_per_batch`` records per micro-batch, in file
    order). Columns used: ``seq``, ``arrival_ms``, ``value`` (the payload as JSON text).
    The input is what exists when the query starts (bounded); with ``end_of_input`` an
    ``end`` row follows the last record, so open windows flush exactly once. Raises
    InvalidInput for a missing path or unknown format, a bad ``rows_per_batch`` or an
    unknown ``reader`` (:data:`RECORD_READERS`: who reads the files; the rows are the same).
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
    if reader not in RECORD_READERS:
        raise InvalidInput(
            "reader", reader, "unknown records reader", f"use one of {', '.join(RECORD_READERS)}"
        )
    if fmt == "spark-dir" and reader == "auto":
        rows = jvm_records(spark, Path(path), end_of_input=end_of_input)
        if rows is not None:
            return rows
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


KAFKA_READERS = ("auto", "connector", "python")
"""``connector``: Spark's ``format("kafka")`` (the JVM connector jar); ``python``:
windtunnel's Python data source (:mod:`windtunnel.spark_impl.jobs.kafka_python`, no jar);
``auto``: the connector when it is on the classpath, else the Python source."""


def _connector_missing(exc: Exception) -> bool:
    text = str(exc)
    return "KAFKA_DATA_SOURCE_NOT_ENABLED" in text or "Failed to find data source: kafka" in text


def kafka_records(
    spark: Any,
    *,
    bootstrap: str,
    topic: str,
    options: dict[str, str] | None = None,
    reader: str = "connector",
) -> tuple[DataFrame, str]:
    """Kafka records of ``topic`` as Spark's Kafka source gives them (headers included),
    and the reader that gives them (``connector`` or ``python``, see :data:`KAFKA_READERS`).

    Both readers start at the earliest offsets and take the same ``options`` (Spark's
    Kafka source option names). Raises EngineUnavailable when ``reader="connector"`` and
    the connector is not on the classpath, InvalidInput for an unknown reader.
    """
    if reader not in KAFKA_READERS:
        raise InvalidInput(
            "reader", reader, "unknown Kafka reader", f"use one of {', '.join(KAFKA_READERS)}"
        )
    settings = {
        "kafka.bootstrap.servers": bootstrap,
        "subscribe": topic,
        "startingOffsets": "earliest",
        "includeHeaders": "true",
        **(options or {}),
    }
    if reader != "python":
        try:
            raw = spark.readStream.format("kafka").options(**settings).load()
            raw.schema  # noqa: B018  (analysis: Spark Connect finds a missing source only here)
            return raw, "connector"
        except Exception as exc:
            if not _connector_missing(exc):
                raise
            if reader == "connector":
                raise EngineUnavailable(
                    "Spark's Kafka connector is not on the classpath: start Spark with "
                    f"--packages {KAFKA_PACKAGE} (or conf spark.jars.packages={KAFKA_PACKAGE}), "
                    "or read with reader='python' (windtunnel's Python Kafka source)"
                ) from exc
    with requires_extra("kafka", "reading Kafka without Spark's connector"):
        import confluent_kafka  # noqa: F401
    from windtunnel.spark_impl.jobs.kafka_python import register

    return spark.readStream.format(register(spark)).options(**settings).load(), "python"


def kafka_job_rows(raw: DataFrame) -> DataFrame:
    """Job input rows from Kafka records: ``seq`` from the header ``wt-seq`` (as
    ``windtunnel generate --format kafka`` writes it), ``arrival_ms`` from the record
    timestamp (use LogAppendTime topics, or generate with ``timestamp_type=LogAppendTime``,
    for arrival times), ``payload`` from the value (JSON text)."""
    seq_header = F.filter(F.col("headers"), lambda h: h["key"] == F.lit("wt-seq"))
    seq = F.element_at(seq_header, 1)["value"].cast("string").cast("long")
    return raw.select(
        F.lit(EVENT).alias("kind"),
        seq.alias("seq"),
        (F.col("timestamp").cast("double") * 1000).cast("long").alias("arrival_ms"),
        F.lit(None).cast("long").alias("after_seq"),
        F.col("value").cast("string").alias("payload"),
    )


def kafka_source(
    spark: Any,
    *,
    bootstrap: str,
    topic: str,
    options: dict[str, str] | None = None,
    reader: str = "connector",
) -> DataFrame:
    """A streaming DataFrame of job input rows from Kafka ``topic`` (see :func:`kafka_job_rows`).

    ``reader="connector"`` (the default) is Spark's ``format("kafka")``: start Spark with
    ``--packages`` :data:`KAFKA_PACKAGE` (or ``spark.jars.packages``); raises
    EngineUnavailable when it is not on the classpath. ``reader="python"`` reads with
    windtunnel's Python data source (confluent-kafka, no jar); ``"auto"`` picks the
    connector when present. The rows are the same either way.
    """
    raw, _ = kafka_records(spark, bootstrap=bootstrap, topic=topic, options=options, reader=reader)
    return kafka_job_rows(raw)


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
    control-row columns (see :data:`JOB_INPUT_DDL`). Without ``payload`` the event's columns
    also stay as they are, named ``wt_field_<name>`` after the job input columns: the
    production operator reads them directly instead of the JSON text (which Spark then never
    computes). Raises InvalidInput for a missing column.
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
    payload_col = F.col(payload).cast("string") if payload else json_payload(rest)
    typed = [] if payload else [F.col(c).alias(FIELD_PREFIX + c) for c in rest]
    return df.select(*row_columns(kind_column(kind), seq, arrival_ms, after_seq, payload_col, kind=kind), *typed)
