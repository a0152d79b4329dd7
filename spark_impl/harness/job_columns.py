"""The columns a user's job sees: the ``events`` DataFrame it reads, and a job that reads a
column the spec's events do not have (Spark's analysis error, named).

:func:`event_schema` types the columns (every field typed from its values, declared fields
of their declared type, the ``on`` field a timestamp); :func:`events_frame` builds the
streaming DataFrame of them from micro-batches of event rows.

Spark refuses a job reading a missing column when it builds its plan (``AnalysisException``
with the condition ``UNRESOLVED_COLUMN.*``, ``UNRESOLVED_COLUMN_AMONG_FIELD_NAMES`` or
``FIELD_NOT_FOUND``). :func:`missing_column_error` turns that into one line naming the
column and the fix: declare the field under ``fields:`` or add it to an input event
(docs/scenarios.md, "fields"), instead of blaming the job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.field_specs import FieldSpec
from windtunnel.oracle.model.spec import Query
from windtunnel.spark_impl.harness.memory_feed import MemoryFeed
from windtunnel.spark_impl.jobs.scripted import scripted_stream
from windtunnel.spark_impl.schema import EVENT
from windtunnel.spark_impl.stock.payload import payload_schema

DECLARED_TYPES = {"string": T.StringType(), "int": T.LongType(), "float": T.DoubleType(),
                  "bool": T.BooleanType()}
"""The column type of each declared field type (docs/scenarios.md, "fields")."""

def _value_type(values: Sequence[Any]) -> T.DataType:
    """A column type for JSON values: their one scalar type, a struct for objects, else
    text (lists, mixed types, only nulls)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, dict) for v in present):
        names = sorted({k for v in present for k in v})
        return T.StructType(
            [T.StructField(n, _value_type([v.get(n) for v in present])) for n in names]
        )
    if present and all(isinstance(v, bool) for v in present):
        return T.BooleanType()
    numbers = [v for v in present if isinstance(v, int | float) and not isinstance(v, bool)]
    if present and len(numbers) == len(present):
        return T.LongType() if all(isinstance(v, int) for v in numbers) else T.DoubleType()
    return T.StringType()


def _with_type(struct: T.StructType, path: Sequence[str], kind: T.DataType) -> T.StructType:
    """``struct`` with the field at ``path`` (created if missing) of type ``kind``."""
    head, rest = path[0], path[1:]
    fields = {f.name: f.dataType for f in struct.fields}
    if rest:
        inner = fields.get(head)
        inner = inner if isinstance(inner, T.StructType) else T.StructType([])
        fields[head] = _with_type(inner, rest, kind)
    else:
        fields[head] = kind
    return T.StructType([T.StructField(n, t) for n, t in fields.items()])


def _leaves(struct: T.StructType, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], T.DataType]]:
    out: list[tuple[tuple[str, ...], T.DataType]] = []
    for f in struct.fields:
        if isinstance(f.dataType, T.StructType):
            out += _leaves(f.dataType, (*prefix, f.name))
        else:
            out.append(((*prefix, f.name), f.dataType))
    return out


def event_schema(query: Query, payloads: Sequence[Mapping[str, Any]],
                 fields: Sequence[FieldSpec] = ()) -> T.StructType:
    """The ``events`` columns for these payloads: every field typed from its values, the
    fields the query reads as :func:`~windtunnel.spark_impl.stock.payload.payload_schema` types
    them (mixed types there are an input error), every declared field (``fields``) of its
    declared type, present or not, the ``on`` field a timestamp."""
    names = sorted({k for p in payloads for k in p})
    schema = T.StructType(
        [T.StructField(n, _value_type([p.get(n) for p in payloads])) for n in names]
    )
    for path, kind in _leaves(payload_schema(query, payloads)):
        schema = _with_type(schema, path, kind)
    for field in fields:
        schema = _with_type(schema, field.path.split("."), DECLARED_TYPES[field.type])
    return _with_type(schema, query.window.on.split("."), T.TimestampType())


def _without(struct: T.StructType, path: Sequence[str]) -> T.StructType:
    fields = []
    for f in struct.fields:
        if f.name != path[0]:
            fields.append(f)
        elif len(path) > 1 and isinstance(f.dataType, T.StructType):
            fields.append(T.StructField(f.name, _without(f.dataType, path[1:])))
    return T.StructType(fields)


def events_frame(spark: Any, batches: Sequence[Sequence[Any]], schema: T.StructType,
                 on: str, feed: MemoryFeed | None = None) -> DataFrame:
    """Micro-batches of event rows (payload ``{"t": ms, "p": event}``) as the contract's
    ``events``: ``schema``'s columns, ``on`` the timestamp of ``t``. From the scripted
    source, or from ``feed``'s stream of payload texts (the caller feeds ``batches``)."""
    path = on.split(".")
    body = _without(schema, path)
    payloads = (
        scripted_stream(spark, batches).where(F.col("kind") == F.lit(EVENT)).select("payload")
        if feed is None else feed.frame().select(F.col("value").alias("payload"))
    )
    parsed = payloads.select(
        F.from_json(
            "payload", T.StructType([T.StructField("t", T.LongType()), T.StructField("p", body)])
        ).alias("e")
    )
    time = F.timestamp_millis(F.col("e.t"))
    columns: list[Column] = []
    for field in schema.fields:
        if field.name != path[0]:
            columns.append(F.col("e.p").getField(field.name).alias(field.name))
        elif len(path) == 1:
            columns.append(time.alias(field.name))
        else:
            inner = F.col("e.p").getField(field.name)  # null when the event lacks it: no time
            columns.append(inner.withField(".".join(path[1:]), time).alias(field.name))
    return parsed.select(*columns)


CONDITIONS = ("UNRESOLVED_COLUMN", "UNRESOLVED_COLUMN_AMONG_FIELD_NAMES", "FIELD_NOT_FOUND")
"""Spark's error conditions (their prefix before a dot) for a column or field not found."""


def _condition(exc: BaseException) -> str:
    for name in ("getCondition", "getErrorClass"):
        method = getattr(exc, name, None)
        if callable(method):
            try:
                found = method()
            except Exception:  # a Connect error without a condition
                continue
            if found:
                return str(found)
    return ""


def missing_column(exc: BaseException) -> str | None:
    """The column (a dotted path) Spark could not find, or None for any other error."""
    condition = _condition(exc)
    if condition.split(".")[0] not in CONDITIONS:
        return None
    get = getattr(exc, "getMessageParameters", None)
    parameters: dict[str, Any] = (get() or {}) if callable(get) else {}
    name = parameters.get("objectName") or parameters.get("colName") or parameters.get(
        "fieldName")
    if not name:
        return None
    return ".".join(part.strip("`") for part in str(name).split("`.`"))


def missing_column_error(
    exc: BaseException, job_name: str, columns: Sequence[str]
) -> InvalidSpec | None:
    """One line for a job reading a column the events lack (``columns``: the ones they
    have), or None when ``exc`` is not that."""
    name = missing_column(exc)
    if name is None:
        return None
    return InvalidSpec(
        "--job", job_name,
        f"the job reads column {name}, which the spec's events do not have (they have: "
        f"{', '.join(columns)})",
        f"declare it under fields: (e.g. fields: {{{name}: string}}) or add it to an input "
        "event",
    )
