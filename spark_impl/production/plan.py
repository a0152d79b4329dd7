"""Which path a streaming job takes, why, and the plan the production operator runs.

Two paths run the default profile's semantics on Spark:

- **production**: the JVM operator (:mod:`windtunnel.spark_impl.production`), partitioned by key
  slice, state on the checkpoint's file system;
- **general**: ``transformWithStateInPandas`` with one oracle driver per hash bucket
  (:mod:`windtunnel.spark_impl.general.operator`), state in Spark's state store.

:func:`choose_path` takes the production path unless one of these holds, and then names
it: the engine does not cover the query (:func:`windtunnel.spark_impl.jvm.engine_spec.covered`:
trailing windows, rules other than the default profile's, ...); the session has no JVM in
this process or the jar does not load (a Spark Connect client; the one warning line of
:func:`windtunnel.spark_impl.jvm.binding.load`); the sink is a memory table; the input is a
batch DataFrame; or the checkpoint was started by the
general path (its state stays in Spark's state store). A checkpoint started by the
production path never moves to the general one: if the production path cannot run on it,
the job stops with one line.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Query

PRODUCTION = "production"
GENERAL = "general"

SIMPLE_TYPES = ("bigint", "int", "smallint", "tinyint", "double", "float", "string", "boolean")
"""Spark column types the map side reads directly; any other type of an event column makes
the event travel as ``to_json`` text, as the general path reads it."""

PLAN_SINKS = ("json", "parquet", "console", "foreach_batch")


@dataclass(frozen=True, slots=True)
class PathChoice:
    """The path a job takes, the reasons against the other one, and the slice count."""

    path: str
    reasons: tuple[str, ...] = ()
    slices: int = 0
    jvm: Any = None

    @property
    def production(self) -> bool:
        return self.path == PRODUCTION

    def explain(self, checkpoint: str | None = None) -> str:
        """What ``windtunnel run --explain`` prints: the path and why, one line each."""
        if self.production:
            where = f"; state under {checkpoint}/windtunnel" if checkpoint else ""
            lines = [
                f"path: production (the JVM operator, {self.slices} key slices in parallel"
                f"{where}, through Hadoop's FileSystem API)"
            ]
        else:
            lines = [
                "path: general (transformWithStateInPandas, one oracle driver per key bucket, "
                "state in Spark's state store)"
            ]
            lines += [f"  because {reason}" for reason in self.reasons]
        return "\n".join(lines)


def fingerprint(engine_spec: str, slices: int) -> str:
    """What a checkpoint's state is tied to: the engine's spec and the slice count."""
    return hashlib.sha256(f"{engine_spec}\n{slices}".encode()).hexdigest()[:32]


def checkpoint_kind(checkpoint: str) -> str | None:
    """``production`` when the checkpoint holds the production operator's state, ``general``
    when Spark's state store holds operator state (the general path started it), else None.
    Local paths only; other file systems are asked by the Java side when the query opens."""
    if "://" in checkpoint and not checkpoint.startswith("file:"):
        return None
    path = Path(checkpoint.removeprefix("file://").removeprefix("file:"))
    if (path / "windtunnel" / "FORMAT").is_file():
        return PRODUCTION
    state = path / "state"
    if state.is_dir() and any(state.iterdir()):
        return GENERAL
    return None


def choose_path(
    query: Query,
    rules: Rules,
    *,
    spark: Any,
    streaming: bool,
    sink_kind: str,
    clock: str,
    checkpoint: str | None,
    slices: int | None = None,
) -> PathChoice:
    """The path for a job (see the module docstring); loads the JVM operator when needed.
    Raises
    InvalidInput when the checkpoint belongs to the production path and it cannot run now."""
    from windtunnel.spark_impl.jvm.engine_spec import covered

    reasons: list[str] = []
    uncovered = covered(query, rules)
    if uncovered is not None:
        reasons.append(f"the JVM engine does not cover {uncovered}")
    if not streaming:
        reasons.append("the input is a batch DataFrame (the general path runs it once)")
    if sink_kind not in PLAN_SINKS:
        reasons.append(f"the {sink_kind} sink needs a streaming query's own sink")
    owner = checkpoint_kind(checkpoint) if checkpoint else None
    if owner == GENERAL:
        reasons.append(f"the checkpoint {checkpoint} was started by the general path")
    jvm = None
    if not reasons:
        from windtunnel.spark_impl.jvm.binding import load

        loaded = load(spark)
        jvm = loaded.jvm
        if jvm is None:
            reasons.append(loaded.reason)
    if reasons:
        if owner == PRODUCTION:
            raise InvalidInput(
                "checkpoint", checkpoint,
                f"holds the production operator's state, which cannot run now ({reasons[0]})",
                "run it where the JVM operator loads, or start a new checkpoint",
            )
        return PathChoice(GENERAL, tuple(reasons))
    return PathChoice(PRODUCTION, (), slices or default_slices(spark), jvm)


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
