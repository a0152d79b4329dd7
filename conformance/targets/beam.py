"""Beam as targets: its own trigger driver (``windtunnel check SPEC --target beam``), the
spec's own pipeline on the DirectRunner (``--target beam-direct``) and a user's Beam
transform on the DirectRunner (``windtunnel check SPEC --beam-transform module:function``).
All need the ``[beam]`` extra and are held to the ``beam`` profile pane for pane.

- :class:`BeamDriverTarget`: each scenario through ``GeneralTriggerDriver``
  (:mod:`windtunnel.conformance.beam.driver`); emissions with their micro-batch.
- :class:`BeamPipelineTarget`: each scenario as one pipeline, ``TestStream`` into the
  transform, on ``BundleBasedDirectRunner`` (:mod:`windtunnel.conformance.beam.pipeline`);
  emissions without ``reason`` (a pipeline's output does not say what fired it) and without
  timing. A pipeline that stalls is stopped and its outputs until then compared; the stalls
  are kept in :attr:`BeamPipelineTarget.stalls`. A diverging stream on a user's transform is
  also run through the spec's own pipeline: when that gives the same panes, the divergence
  is the DirectRunner's, not the transform's (:meth:`BeamPipelineTarget.whose`).

Beam drops expired data silently, so no target reports drops (a wrong drop shows as a pane).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from windtunnel.conformance.differential import canonical
from windtunnel.conformance.targets.base import (
    TargetEntry,
    TargetRun,
    load_function,
    micro_batch_of_items,
)
from windtunnel.oracle.model.results import Output
from windtunnel.oracle.model.stream import checked
from windtunnel.oracle.scenario import Scenario


@dataclass(frozen=True, slots=True)
class BeamDriverTarget:
    """Scenarios on Beam's ``GeneralTriggerDriver``, one driver and state per scenario."""

    name: str = "beam"
    reports_drops: bool = False
    reports_timing: bool = True

    def run_many(self, scenarios: Sequence[Scenario]) -> list[TargetRun]:
        from windtunnel.conformance.beam.driver import driver_outputs

        runs = []
        for scenario in scenarios:
            outputs, indexes = driver_outputs(scenario)
            batches = micro_batch_of_items(list(checked(scenario.items, scenario.start_wall_ms)))
            runs.append(TargetRun(tuple(outputs), tuple(batches[i] for i in indexes)))
        return runs


def beam_target(spark: Any = None) -> BeamDriverTarget:
    """The ``beam`` target; raises MissingExtra without apache-beam."""
    from windtunnel.conformance.beam import driver  # noqa: F401 - fails early without the extra

    return BeamDriverTarget()


class BeamPipelineTarget:
    """Scenarios as DirectRunner pipelines: ``transform`` (``module:function``) or, when
    None, the spec's own ``WindowInto`` + ``GroupByKey``."""

    reports_drops = False
    reports_timing = False
    ignored = ("reason",)
    preferred_batch_size = 4
    """Scenarios per call: each is a pipeline of about a second, so shrinking asks about a
    few candidates at a time and keeps to its time budget."""

    def __init__(self, transform: str | None = None) -> None:
        self.transform = transform
        self.function = None if transform is None else load_function(transform, "--beam-transform")
        self.name = "beam-direct" if transform is None else f"beam-transform:{transform}"
        self.stalls: list[str] = []

    def outputs(self, scenario: Scenario, own: bool = False) -> list[Output]:
        """The scenario's emissions on the DirectRunner (``own``: the spec's own pipeline)."""
        from windtunnel.conformance.beam.pipeline import run_pipeline

        found, stalled = run_pipeline(scenario, None if own else self.function)
        if stalled:
            self.stalls.append(f"{scenario.name}: {stalled}")
        return found

    def run_many(self, scenarios: Sequence[Scenario]) -> list[TargetRun]:
        return [TargetRun(tuple(self.outputs(s))) for s in scenarios]

    def whose(self, scenario: Scenario, run: TargetRun) -> str:
        """Whose divergence ``run`` (the transform's on ``scenario``) is: ``engine`` when the
        spec's own pipeline on the DirectRunner gives the same panes, else ``transform``."""
        if self.function is None:
            return "engine"
        own = self.outputs(scenario, own=True)
        key = sorted(canonical(o, ("wall_ms", "after_seq", "message", "reason")) for o in own)
        theirs = sorted(canonical(o, ("wall_ms", "after_seq", "message", "reason"))
                        for o in run.outputs)
        return "engine" if key == theirs else "transform"


def beam_direct_target(spark: Any = None) -> BeamPipelineTarget:
    """The ``beam-direct`` target; raises MissingExtra without apache-beam."""
    from windtunnel.conformance.beam import pipeline  # noqa: F401 - fails early without the extra

    return BeamPipelineTarget()


def beam_transform_target(transform: str) -> BeamPipelineTarget:
    """The target for a user's transform ``module:function``; InvalidSpec when it cannot be
    loaded, MissingExtra without apache-beam."""
    from windtunnel.conformance.beam import pipeline  # noqa: F401 - fails early without the extra

    return BeamPipelineTarget(transform)


ENTRY = TargetEntry(
    beam_target,
    "Apache Beam's own trigger driver (GeneralTriggerDriver, the Python SDK; the [beam] extra)",
    stand_in="beam",
)
DIRECT = TargetEntry(
    beam_direct_target,
    "the spec's own WindowInto + GroupByKey as a Beam pipeline on the DirectRunner with "
    "TestStream, one per stream (the [beam] extra)",
)

__all__ = ["DIRECT", "ENTRY", "BeamDriverTarget", "BeamPipelineTarget", "beam_direct_target",
           "beam_target", "beam_transform_target"]
