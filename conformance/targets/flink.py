"""The real Flink engine as a target: ``windtunnel check SPEC --target flink``.

Scenarios run on Flink's own DataStream ``WindowOperator`` (the ``[flink]`` extra brings
Flink's jars; a Java runtime runs them), many per JVM and per MiniCluster job, one branch
each (:mod:`windtunnel.conformance.flink.windows`); held to the ``flink`` profile. The
target reports drops (the late side output) but no timing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from windtunnel.conformance.flink.runtime import classpath, java_or_fail, run_harness
from windtunnel.conformance.flink.windows import outputs_of, parse, prepare
from windtunnel.conformance.targets.base import TargetEntry, TargetRun
from windtunnel.oracle.scenario import Scenario


@dataclass(frozen=True, slots=True)
class FlinkTarget:
    """Flink's window operator in a MiniCluster; one JVM per :meth:`run_many` call."""

    name: str = "flink"
    reports_drops: bool = True
    reports_timing: bool = False

    def run_many(self, scenarios: Sequence[Scenario]) -> list[TargetRun]:
        prepared = [prepare(scenario, sid) for sid, scenario in enumerate(scenarios)]
        lines = [line for p in prepared for line in p.lines]
        firings, late = parse(run_harness("WindowHarness", lines))
        return [
            TargetRun(tuple(outputs_of(
                scenario.query, p, firings.get(sid, []), late.get(sid, [])
            )))
            for sid, (scenario, p) in enumerate(zip(scenarios, prepared, strict=True))
        ]


def flink_target(spark: Any = None) -> FlinkTarget:
    """The ``flink`` target; raises EngineUnavailable without Flink's jars or Java."""
    classpath()
    java_or_fail()
    return FlinkTarget()


ENTRY = TargetEntry(
    flink_target,
    "the real Flink engine's DataStream window operator (the [flink] extra; Java 17+)",
    stand_in="flink",
)

__all__ = ["ENTRY", "FlinkTarget", "flink_target"]
