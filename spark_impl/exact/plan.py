"""Which path a streaming job takes, why, and the plan the production operator runs.

Two paths run the default profile's semantics on Spark:

- **production**: the JVM operator (:mod:`windtunnel.spark_impl.exact`), partitioned by key
  slice (sliced as Kafka's partitioner places keys when the input is read from Kafka, so
  that a micro-batch skips the shuffle), state on the checkpoint's file system;
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

HASH_SLICES = "hash"
"""Keys sliced by windtunnel's own stable hash of the group key: one shuffle per micro-batch."""
KAFKA_SLICES = "kafka"
"""Keys sliced as Kafka's default partitioner (the Java client's murmur2) places records keyed
by the group key's text: an input read from such a topic skips the shuffle
(``DirectSlices.java``)."""
KAFKA_CRC32_SLICES = "kafka-crc32"
"""The same for librdkafka's default partitioner (CRC32: confluent-kafka, Go, .NET)."""
SLICINGS = {"murmur2": KAFKA_SLICES, "crc32": KAFKA_CRC32_SLICES}
"""The slicing of each Kafka partitioner (``windtunnel.spark_impl.jobs.kafka_keys``)."""


@dataclass(frozen=True, slots=True)
class PathChoice:
    """The path a job takes, the reasons against the other one, and the slice count."""

    path: str
    reasons: tuple[str, ...] = ()
    slices: int = 0
    jvm: Any = None
    slicing: str = HASH_SLICES
    kafka_partitions: int | None = None
    """The topic's partition count when the input is read from Kafka, else None."""
    kafka_partitioner: str | None = None
    """The partitioner that placed the topic's records (``murmur2``, ``crc32``; None: neither)."""
    kafka_wanted: bool = True
    """Whether slicing by Kafka partition was allowed (:func:`kafka_slicing_wanted`)."""

    @property
    def production(self) -> bool:
        return self.path == PRODUCTION

    def why_shuffled(self) -> str:
        """Why keys read from Kafka are sliced by hash (every micro-batch shuffles)."""
        return _why_shuffled(self)

    def explain(self, checkpoint: str | None = None) -> str:
        """What ``windtunnel run --explain`` prints: the path and why, one line each."""
        if self.production:
            where = f"; state under {checkpoint}/windtunnel" if checkpoint else ""
            lines = [
                f"path: production (the JVM operator, {self.slices} key slices in parallel"
                f"{where}, through Hadoop's FileSystem API)"
            ]
            if self.slicing != HASH_SLICES:
                lines.append(
                    f"  keys sliced as the topic's partitioner ({self.kafka_partitioner}) places "
                    f"them in its {self.kafka_partitions} partitions: a micro-batch whose input "
                    "partitions each hold one slice's keys skips the shuffle"
                )
            elif self.kafka_partitions is not None:
                lines.append(f"  every micro-batch shuffles: {self.why_shuffled()}")
        else:
            lines = [
                "path: general (transformWithStateInPandas, one oracle driver per key bucket, "
                "state in Spark's state store)"
            ]
            lines += [f"  because {reason}" for reason in self.reasons]
        return "\n".join(lines)


def _why_shuffled(choice: PathChoice) -> str:
    if not choice.kafka_wanted:
        return (
            f"skipping it is off ({KAFKA_SLICES_CONF}=on turns it on: the extra pass it takes "
            "measured slower than the shuffle on one machine)"
        )
    if choice.kafka_partitioner is None:
        return (
            "the topic's records are placed by neither Kafka's partitioner (murmur2) nor "
            "librdkafka's (crc32) over their keys"
        )
    if kafka_slices(choice.kafka_partitions or 1, choice.slices) is None:
        return (
            f"the topic's {choice.kafka_partitions} partitions do not split evenly over "
            f"{choice.slices} cores (a Kafka partition's keys would stay in one slice task)"
        )
    return "skipping it needs one group_by field, the topic's record key"


def fingerprint(engine_spec: str, slices: int, slicing: str = HASH_SLICES) -> str:
    """What a checkpoint's state is tied to: the engine's spec, the slice count and how keys
    are sliced."""
    text = f"{engine_spec}\n{slices}" + ("" if slicing == HASH_SLICES else f"\n{slicing}")
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def kafka_slices(partitions: int, cores: int) -> int | None:
    """Slices for a topic of ``partitions``: its smallest divisor that is a multiple of
    ``cores``, so every Kafka partition's keys fall in one slice (``h % slices`` is
    ``(h % partitions) % slices`` for a divisor) and the slice tasks fill every core in
    each round; None when there is none (3 partitions on 2 cores: 3 slices would take two
    rounds where the shuffle's 2 take one, so keys are sliced by hash)."""
    cores = max(1, cores)
    return next((d for d in range(cores, partitions + 1, cores) if partitions % d == 0), None)


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
    kafka_partitions: int | None = None,
    kafka_partitioner: str | None = "murmur2",
) -> PathChoice:
    """The path for a job (see the module docstring); loads the JVM operator when needed.
    ``kafka_partitions``: the input is read from a topic of that many partitions, placed by
    ``kafka_partitioner`` (keys are then sliced the same way when the query has one
    group_by field). Raises
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
    kafka = (kafka_partitions, kafka_partitioner)
    cores = default_slices(spark)
    even = kafka_slices(kafka_partitions, cores) if kafka_partitions is not None else None
    wanted = kafka_partitions is not None and kafka_slicing_wanted(spark)
    if wanted and even is not None and kafka_partitioner in SLICINGS and len(query.group_by) == 1:
        count = slices or even
        return PathChoice(PRODUCTION, (), count, jvm, SLICINGS[kafka_partitioner], *kafka)
    return PathChoice(PRODUCTION, (), slices or cores, jvm, HASH_SLICES, *kafka, wanted)


KAFKA_SLICES_CONF = "spark.windtunnel.kafkaSlices"
"""``on`` or ``off`` (the default): whether keys read from Kafka may be sliced by Kafka
partition, so that micro-batches skip the shuffle."""


def kafka_slicing_wanted(spark: Any) -> bool:
    """Whether keys read from Kafka may be sliced by Kafka partition (:data:`KAFKA_SLICES_CONF`).
    Off by default: skipping the shuffle takes an extra pass that measured slower than the
    shuffle in local mode and on a one-host standalone cluster (``benchmarks/kafka_e2e.py``,
    docs/spark.md). Raises InvalidInput for another value."""
    setting = str(spark.conf.get(KAFKA_SLICES_CONF, "off")).strip().lower()
    if setting not in ("on", "off"):
        raise InvalidInput(KAFKA_SLICES_CONF, setting, "unknown setting", "use on or off")
    return setting == "on"


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
    slicing: str = HASH_SLICES,
) -> str:
    """The JSON the Java side reads (``windtunnel.spark.Plan``)."""
    spec = json.loads(engine_spec)
    paths = list(spec["fields"])
    return json.dumps(
        {
            "engine": engine_spec,
            "fingerprint": fingerprint(engine_spec, slices, slicing),
            "slices": slices,
            "slicing": slicing,
            "input": layout,
            "paths": paths,
            "key_slots": [paths.index(g) for g in query.group_by],
            "whole_payload": query.aggregate is None,
            "time_is_timestamp": time_is_timestamp,
            "wall": wall,
        }
    )


def partitioner_of(spark: Any, sample: Any) -> str | None:
    """Which partitioner placed a topic's sampled records
    (:class:`~windtunnel.spark_impl.jobs.kafka_keys.KeySample`): the first of ``murmur2``
    and ``crc32`` that gives every sampled keyed record its partition
    (records without a key are left out: both spread them; a sample without keyed records
    gives ``murmur2``, Kafka's own default); None when neither explains the sample or the
    JVM operator does not load (then no Kafka slicing is needed: the general path runs)."""
    from windtunnel.spark_impl.jvm.binding import load

    jvm = load(spark).jvm
    if jvm is None:
        return None
    keyed = [(key, part) for key, part in sample.placed if key]
    keys = jvm.strings([key.decode("latin-1") for key, _ in keyed])  # bytes, one char each
    parts = ",".join(str(part) for _, part in keyed)
    found = str(jvm.call("kafkaPartitioner", keys, parts, sample.partitions))
    return found or None
