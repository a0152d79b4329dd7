"""Which operator runs a job, and why: the one place that decides it.

Three paths run a job's window on Spark:

- **production**: the production operator (:mod:`windtunnel.spark_impl.production`), the
  default profile's windows in Java, partitioned by key slice, state on the checkpoint's
  file system;
- **general**: the general operator (:func:`windtunnel.spark_impl.general.operator.apply_window`),
  the oracle's own step per hash bucket in ``transformWithStateInPandas``, state in Spark's
  state store: every query of the default profile;
- **stock**: stock Spark (``withWatermark`` + ``window()``/``session_window()``,
  :mod:`windtunnel.spark_impl.stock.job`), for a ``profile: spark`` spec.

:func:`choose_path` gives a ``profile: spark`` spec the stock path, and any other spec the
production path unless one of these holds, and then the general one, naming each: the
engine does not cover the query (:func:`windtunnel.spark_impl.production.plan.not_covered`:
trailing windows, rules other than the default profile's, ...); the input is a batch
DataFrame; the sink is a memory table; the checkpoint was started by the general operator
(its state is in Spark's state store); the session has no JVM in this process or the jar
does not load into it (:func:`windtunnel.spark_impl.production.plan.not_loaded`: a Spark
Connect client; a jar that does not link, with one warning line). A checkpoint the production operator
started never moves to the general one: where the production operator cannot run on it,
the choice raises. ``run_job``, ``windtunnel run`` and its ``--explain``, ``windtunnel
replay``, the conformance targets and the harnesses all take their path from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from windtunnel.oracle.model.errors import InvalidInput, InvalidSpec
from windtunnel.spark_impl.jobs.spec import CLOCKS, JobSpec
from windtunnel.spark_impl.production.plan import default_slices, not_covered, not_loaded
from windtunnel.spark_impl.production.sink import SINK_KINDS as PRODUCTION_SINKS

PRODUCTION = "production"
GENERAL = "general"
STOCK = "stock"
PATHS = (PRODUCTION, GENERAL, STOCK)

_WHAT = {
    PRODUCTION: "the production operator: the JVM engine, {slices}in parallel{where}",
    GENERAL: "the general operator: transformWithStateInPandas, one oracle driver per key "
    "bucket, state in Spark's state store",
    STOCK: "stock Spark: withWatermark + window()/session_window() in append mode, "
    "emissions only",
}


@dataclass(frozen=True, slots=True)
class PathChoice:
    """The path a job takes (one of :data:`PATHS`), why it does not take the production
    path (``reasons``; none for the production path) and the production path's key slices
    for a new checkpoint (None: no session to ask yet, or another path). Raises ValueError
    for an unknown path or reasons that do not fit it."""

    path: str
    reasons: tuple[str, ...] = ()
    slices: int | None = None

    def __post_init__(self) -> None:
        if self.path not in PATHS:
            raise ValueError(f"path={self.path!r}: use one of {', '.join(PATHS)}")
        if (self.path == PRODUCTION) == bool(self.reasons):
            raise ValueError(f"path={self.path!r}, reasons={self.reasons!r}: the production "
                             "path has no reasons against it, the others at least one")

    @property
    def production(self) -> bool:
        return self.path == PRODUCTION

    def explain(self, checkpoint: str | None = None) -> str:
        """What ``windtunnel run --explain`` prints: the path and what runs it on the first
        line, each reason against the production path on a line of its own."""
        slices = f"{self.slices} key slices " if self.slices else "key slices "
        where = (f"; state under {checkpoint}/windtunnel, through Hadoop's FileSystem API"
                 if checkpoint else "")
        what = _WHAT[self.path].format(slices=slices, where=where)
        return "\n".join([f"path: {self.path} ({what})",
                          *(f"  because {reason}" for reason in self.reasons)])


def checkpoint_owner(checkpoint: str) -> str | None:
    """:data:`PRODUCTION` when the checkpoint holds the production operator's state (its
    ``windtunnel/FORMAT`` file), :data:`GENERAL` when Spark's state store holds operator
    state, else None. Local paths only; other file systems are asked by the production
    operator when its query opens."""
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
    spec: JobSpec,
    *,
    spark: Any,
    streaming: bool = True,
    sink_kind: str = "json",
    clock: str = "arrival",
    checkpoint: str | None = None,
    slices: int | None = None,
) -> PathChoice:
    """The path for ``spec`` (see the module docstring): over a ``streaming`` input or a
    batch one, into a sink of ``sink_kind``, on the wall ``clock``, resuming ``checkpoint``
    (None: a new one). ``spark`` None decides before a session exists: the JVM is not asked
    and the slice count stays unknown. ``slices``: the production path's key slices for a
    new checkpoint (default: the session's cores). Raises InvalidSpec for an unknown clock,
    InvalidInput for the system clock on stock Spark (which has no wall clock) and for a
    checkpoint the production operator started when it cannot run now."""
    if clock not in CLOCKS:
        raise InvalidSpec("clock", clock, "unknown wall clock", f"use one of {', '.join(CLOCKS)}")
    if spec.profile == "spark":
        if clock == "system":
            raise InvalidInput(
                "clock", clock, "a profile spark spec runs stock Spark, which has no wall clock",
                "drop --clock (stock Spark's windows close by the watermark alone)",
            )
        return PathChoice(STOCK, ("the spec's profile is spark (what stock Spark does)",))
    reasons: list[str] = []
    uncovered = not_covered(spec.query, spec.rules)
    if uncovered is not None:
        reasons.append(f"the JVM engine does not cover {uncovered}")
    if not streaming:
        reasons.append("the input is a batch DataFrame (the general operator runs it once)")
    if sink_kind not in PRODUCTION_SINKS:
        reasons.append(f"the {sink_kind} sink needs a streaming query's own sink")
    owner = checkpoint_owner(checkpoint) if checkpoint else None
    if owner == GENERAL:
        reasons.append(f"the checkpoint {checkpoint} was started by the general operator")
    if not reasons and spark is not None:
        unloaded = not_loaded(spark)
        if unloaded is not None:
            reasons.append(unloaded)
    if reasons:
        if owner == PRODUCTION:
            raise InvalidInput(
                "checkpoint", checkpoint,
                f"holds the production operator's state, which cannot run now ({reasons[0]})",
                "run it where the production operator loads, or start a new checkpoint",
            )
        return PathChoice(GENERAL, tuple(reasons))
    if spark is None:
        return PathChoice(PRODUCTION, (), slices)
    return PathChoice(PRODUCTION, (), slices or default_slices(spark))
