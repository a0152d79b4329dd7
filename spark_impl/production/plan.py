"""What the production operator runs and where: whether it can run a query in a session,
and the plan its Java side runs from (where the stream columns sit in the micro-batch rows,
how events are read, the key slices and what a checkpoint's state is tied to).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Query

SIMPLE_TYPES = ("bigint", "int", "smallint", "tinyint", "double", "float", "string", "boolean")
"""Spark column types the map side reads directly; any other type of an event column makes
the event travel as ``to_json`` text, as the general operator reads it."""


def not_covered(query: Query, rules: Rules) -> str | None:
    """What of ``query`` under ``rules`` the Java engine does not cover, in one line
    (:func:`windtunnel.spark_impl.jvm.engine_spec.covered`), or None."""
    from windtunnel.spark_impl.jvm.engine_spec import covered

    return covered(query, rules)


def not_loaded(spark: Any) -> str | None:
    """Why the production operator does not load into ``spark``'s session, in one line (a Spark
    Connect client, a jar that does not link: :func:`windtunnel.spark_impl.jvm.binding.load`,
    which warns once), or None when it loads."""
    from windtunnel.spark_impl.jvm.binding import load

    loaded = load(spark)
    return None if loaded.jvm is not None else loaded.reason


def fingerprint(engine_spec: str, slices: int) -> str:
    """What a checkpoint's state is tied to: the engine's spec and the slice count."""
    return hashlib.sha256(f"{engine_spec}\n{slices}".encode()).hexdigest()[:32]


def default_slices(spark: Any) -> int:
    """Key slices of a new checkpoint: the session's default parallelism (its cores), at
    least 1 and at most 256. A checkpoint keeps the count it started with."""
    try:
        cores = int(spark.sparkContext.defaultParallelism)
    except Exception:
        cores = 2
    return max(1, min(256, cores))


def input_layout(schema: Any, *, payload: str | None, stream_columns: dict[str, str | None]) -> dict[str, Any]:
    """Where the plan's stream columns sit in the micro-batch rows and how events are read.

    ``stream_columns`` maps ``seq``, ``arrival``, ``kind``, ``after_seq`` to column names
    (None: absent); ``payload`` names a JSON-text column, or None: every other column is a
    typed event field (only :data:`SIMPLE_TYPES` and timestamps; the caller makes anything
    else a ``to_json`` column first). Raises InvalidInput for a missing column."""
    names = [f.name for f in schema.fields]

    def index(name: str | None, role: str) -> int:
        if name is None:
            return -1
        if name not in names:
            raise InvalidInput(role, name, "no such column", f"use one of {', '.join(names)}")
        return names.index(name)

    layout: dict[str, Any] = {
        role: index(name, role) for role, name in stream_columns.items()
    }
    layout["payload"] = index(payload, "payload")
    taken = {name for name in (*stream_columns.values(), payload) if name}
    layout["columns"] = [
        {"name": f.name, "index": i, "type": f.dataType.simpleString()}
        for i, f in enumerate(schema.fields)
        if f.name not in taken and payload is None
    ]
    return layout


def plan_json(
    query: Query,
    engine_spec: str,
    slices: int,
    layout: dict[str, Any],
    *,
    time_is_timestamp: bool,
    wall: str = "arrival",
) -> str:
    """The JSON the Java side reads (``windtunnel.spark.Plan``)."""
    spec = json.loads(engine_spec)
    paths = list(spec["fields"])
    return json.dumps(
        {
            "engine": engine_spec,
            "fingerprint": fingerprint(engine_spec, slices),
            "slices": slices,
            "input": layout,
            "paths": paths,
            "key_slots": [paths.index(g) for g in query.group_by],
            "whole_payload": query.aggregate is None,
            "time_is_timestamp": time_is_timestamp,
            "wall": wall,
        }
    )
