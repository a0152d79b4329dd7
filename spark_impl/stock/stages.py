"""The stages before the window (``where``, ``deduplicate``) as a Spark user writes them.

After ``withWatermark``: ``where`` is ``filter(condition)`` (the condition compiled to a
Column, SQL's three-valued logic; a comparison of values of different types is unknown,
as in the oracle, where Spark would cast), and ``deduplicate`` is
``dropDuplicatesWithinWatermark(key)`` when ``within`` equals the watermark delay
(``window.tolerance``), ``dropDuplicates(key)`` when ``within`` is left out, or is 0 with
the event-time field in the key. What these do is the ``spark`` profile's stage rules
(docs/semantics.md, D1-D4, as PySpark 4.3.0 runs them).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from windtunnel.oracle.model.conditions import All, AnyOf, Compare, FieldRef, Literal, Node, Not
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.model.stages import Deduplicate, Where
from windtunnel.oracle.model.timeparse import format_duration

_OPS: dict[str, Callable[[Column, Column], Column]] = {
    "=": lambda a, b: a == b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    "<>": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}
_NUMBERS = (T.LongType, T.IntegerType, T.DoubleType, T.FloatType, T.DecimalType, T.ShortType,
            T.ByteType)


def check_stages(query: Query) -> None:
    """Raise InvalidSpec for a stage stock Spark has no form for: a ``where`` reading the
    event-time field (a timestamp column in Spark, a number or text in the events), a
    ``deduplicate`` whose ``within`` is neither the watermark delay nor left out (nor 0
    with the event-time field in the key)."""
    window = query.window
    tolerance = int(getattr(window, "tolerance_ms", 0) or 0)
    for stage in query.stages:
        if isinstance(stage, Where) and window.on in stage.condition.fields:
            raise InvalidSpec(
                "where", stage.condition.text,
                f"reads the event-time field {window.on}, a timestamp column in stock Spark",
                "filter on other fields (the window already bounds event time)",
            )
        if isinstance(stage, Deduplicate):
            within = stage.within_ms
            if within is None or within == tolerance or (within == 0 and window.on in stage.key):
                continue
            raise InvalidSpec(
                "deduplicate.within", format_duration(within),
                "stock Spark deduplicates within the watermark delay "
                f"(window.tolerance={format_duration(tolerance)}: dropDuplicatesWithinWatermark) "
                "or for good (dropDuplicates)",
                f"set within: {format_duration(tolerance)}, or leave it out, or use 0s with "
                f"{window.on} in the key",
            )


def condition_column(node: Node, column: Callable[[str], Column],
                     types: Callable[[str], T.DataType | None]) -> Column:
    """``node`` as a boolean Column; ``column(path)`` reads a field, ``types(path)`` its
    Spark type (None: unknown). A comparison of a string with a number or a boolean with
    anything else is null (unknown)."""
    if isinstance(node, Compare):
        sides = [(column(o.path), types(o.path)) if isinstance(o, FieldRef) else
                 (F.lit(o.value_), _literal_type(o)) for o in (node.left, node.right)]
        (left, left_type), (right, right_type) = sides
        if not _comparable(left_type, right_type):
            return F.lit(None).cast("boolean")
        return _OPS[node.op](left, right)
    if isinstance(node, Not):
        return ~condition_column(node.inner, column, types)
    parts = [condition_column(p, column, types) for p in node.parts]
    if isinstance(node, All):
        return reduce(lambda a, b: a & b, parts)
    assert isinstance(node, AnyOf)
    return reduce(lambda a, b: a | b, parts)


def _literal_type(literal: Literal) -> T.DataType | None:
    value = literal.value_
    if value is None:
        return None
    if isinstance(value, bool):
        return T.BooleanType()
    if isinstance(value, int):
        return T.LongType()
    if isinstance(value, float):
        return T.DoubleType()
    return T.StringType()


def _comparable(left: T.DataType | None, right: T.DataType | None) -> bool:
    if left is None or right is None:  # a null side: Spark's own comparison is null
        return True
    if isinstance(left, _NUMBERS) and isinstance(right, _NUMBERS):
        return True
    return type(left) is type(right)


def apply_stages(df: DataFrame, query: Query, time_column: str,
                 column: Callable[[str], Column]) -> DataFrame:
    """``df`` (watermarked on ``time_column``) with ``query``'s stages applied in order;
    ``column(path)`` reads a field. Raises InvalidSpec as :func:`check_stages`."""
    check_stages(query)
    types = dict(df.dtypes)
    schema: dict[str, Any] = {f.name: f.dataType for f in df.schema.fields}

    def type_of(path: str) -> T.DataType | None:
        head, *rest = path.split(".")
        found = schema.get(head)
        for part in rest:
            if not isinstance(found, T.StructType) or part not in found.names:
                return None
            found = found[part].dataType
        return found if types.get(head) else None

    out = df
    for stage in query.stages:
        if isinstance(stage, Where):
            out = out.filter(condition_column(stage.condition.tree, column, type_of))
            continue
        names = []
        for index, path in enumerate(stage.key):
            if path == query.window.on:
                names.append(time_column)
            else:
                out = out.withColumn(f"_wt_dk{index}", column(path))
                names.append(f"_wt_dk{index}")
        tolerance = int(getattr(query.window, "tolerance_ms", 0) or 0)
        if stage.within_ms is not None and stage.within_ms == tolerance:
            out = out.dropDuplicatesWithinWatermark(names)
        else:
            out = out.dropDuplicates(names)
        out = out.drop(*(n for n in names if n.startswith("_wt_dk")))
    return out
