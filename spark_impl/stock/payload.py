"""The typed columns a stock Spark job's events have: each field the query reads, typed
from its JSON values (shared by the stock mapping's replays, ``profile: spark`` jobs and
users' jobs under check)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import types as T

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.fields import getter
from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.model.stages import Where


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
