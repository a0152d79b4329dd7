"""Targets by name: the built-in ones, the ``windtunnel.targets`` entry points, and the forms
``oracle:PROFILE``, ``python:module:function`` and ``module:function`` (a Spark job).

A named target is a :class:`TargetEntry`: a factory from a Spark session (or None) to a
:class:`~windtunnel.conformance.targets.base.Target`, a one-line description, and the oracle
profile that stands in for it while shrinking. windtunnel's own (``spark``, ``spark-fast``,
``spark-general``, ``spark-stock``, ``tenzir``, ``flink``, ``beam``, ``beam-direct``) are named in :data:`BUILTIN` as ``module:attribute`` and
imported only when used. A third-party package adds one from its own distribution with an
entry point in the group ``windtunnel.targets`` whose object is a :class:`TargetEntry`::

    [project.entry-points."windtunnel.targets"]
    my-engine = "my_package.windtunnel_target:ENTRY"

Entry points are read once, on first use; one that fails to load, or that names a built-in,
is reported by :func:`entry_point_problems` and
otherwise ignored, so a broken plug-in never hides the built-in targets.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any

from windtunnel.conformance.targets.base import (
    Target,
    TargetEntry,
    TargetFactory,
    callable_target,
    load_function,
    oracle_target,
)
from windtunnel.oracle.model.errors import EngineUnavailable, InvalidSpec

GROUP = "windtunnel.targets"
"""The entry-point group third-party targets register under."""

BUILTIN: dict[str, str] = {
    "spark": "windtunnel.conformance.targets.spark:EXACT",
    "spark-fast": "windtunnel.conformance.targets.spark:FAST",
    "spark-general": "windtunnel.conformance.targets.spark:GENERAL",
    "spark-stock": "windtunnel.conformance.targets.spark:STOCK",
    "tenzir": "windtunnel.conformance.targets.tenzir:ENTRY",
    "flink": "windtunnel.conformance.targets.flink:ENTRY",
    "beam": "windtunnel.conformance.targets.beam:ENTRY",
    "beam-direct": "windtunnel.conformance.targets.beam:DIRECT",
}
"""windtunnel's own targets, as ``module:attribute`` of their :class:`TargetEntry`."""

SPARK_JOBS = "windtunnel.conformance.targets.spark"
"""The module that runs a user's Spark job (``module:function``)."""

TARGETS: dict[str, TargetEntry] = {}
"""Every named target, filled on first use (:func:`targets`)."""

_problems: list[str] = []
_loaded = False


def _entry(reference: str) -> TargetEntry:
    module_name, _, attribute = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise EngineUnavailable(
            f"the target {reference} cannot be loaded ({exc}); install its extra"
        ) from None
    entry = getattr(module, attribute)
    if not isinstance(entry, TargetEntry):
        raise InvalidSpec(reference, entry, "is not a TargetEntry", "export a TargetEntry")
    return entry


def targets() -> dict[str, TargetEntry]:
    """Every named target: built-ins first, then entry points with new names."""
    global _loaded
    if not _loaded:
        _loaded = True
        for name, reference in BUILTIN.items():
            TARGETS.setdefault(name, _entry(reference))
        for point in entry_points(group=GROUP):
            if point.name in BUILTIN:
                _problems.append(f"{point.name} ({point.value}): names a built-in target; ignored")
                continue
            try:
                entry = point.load()
            except Exception as exc:  # a broken plug-in must not hide the others
                _problems.append(f"{point.name} ({point.value}): {type(exc).__name__}: {exc}")
                continue
            if not isinstance(entry, TargetEntry):
                _problems.append(f"{point.name} ({point.value}): not a TargetEntry; ignored")
                continue
            TARGETS.setdefault(point.name, entry)
    return TARGETS


def entry_point_problems() -> list[str]:
    """One line per ``windtunnel.targets`` entry point that could not be used."""
    targets()
    return list(_problems)


def register_target(
    name: str, factory: TargetFactory, description: str, stand_in: str | None = None
) -> None:
    """Make ``--target NAME`` available in this process (replacing an entry of that name)."""
    targets()[name] = TargetEntry(factory, description, stand_in)


def known_targets() -> list[str]:
    """Registered names plus the forms ``module:function`` and ``oracle:PROFILE``."""
    return [*targets(), "oracle:PROFILE", "python:module:function", "module:function (a Spark job)"]


def _spark_jobs() -> Any:
    try:
        return importlib.import_module(SPARK_JOBS)
    except ModuleNotFoundError as exc:
        raise EngineUnavailable(
            f"the Spark targets cannot be loaded ({exc}); install the spark extra: "
            'pip install "windtunnel[spark]"'
        ) from None


def target_named(name_or_job: str, spark: Any = None) -> Target:
    """The target for ``--target``/``--job``: a registered name, ``oracle:PROFILE``,
    ``python:module:function`` (a callable scenario -> outputs) or ``module:function``
    (a user's Spark job ``job(events) -> DataFrame``).

    Raises InvalidSpec listing the known targets for an unknown name.
    """
    found = targets()
    if name_or_job in found:
        return found[name_or_job].factory(spark)
    if name_or_job.startswith("oracle:"):
        return oracle_target(name_or_job.split(":", 1)[1])
    if name_or_job.startswith("python:"):
        function = load_function(name_or_job.split(":", 1)[1], "--target")
        return callable_target(function, name=name_or_job)
    if ":" in name_or_job:
        job = load_function(name_or_job)
        return _spark_jobs().job_target(job, spark)  # type: ignore[no-any-return]
    raise InvalidSpec(
        "--target", name_or_job, "unknown target", f"use one of {', '.join(known_targets())}"
    )


def is_named(name: str) -> bool:
    """Whether ``name`` is a registered target name."""
    return name in targets()


def stand_in_of(name_or_job: str) -> str | None:
    """The oracle profile registered to stand in for a named target when shrinking."""
    entry = targets().get(name_or_job)
    return entry.stand_in if entry is not None else None


def describe_targets() -> Mapping[str, str]:
    """Registered target names and their descriptions."""
    return {name: entry.description for name, entry in targets().items()}
