"""What the pytest plugin's ``windtunnel_check`` does: resolve the target, check it, and
write the failure as ``windtunnel check`` would (report, counterexample file, summary).

Imported only when a fixture or a collected scenario needs it (the plugin's other modules
import nothing of windtunnel at load).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from windtunnel.conformance.check import CheckResult, check
from windtunnel.conformance.counterexample import write_counterexample
from windtunnel.conformance.report import input_lines, render, summary
from windtunnel.conformance.targets import Target, is_named, stand_in_of, target_named
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.scenario import Scenario, load_spec, load_yaml, parse_scenario

SparkGetter = Callable[[], Any]
"""Gives the SparkSession when a target needs one (the plugin's ``windtunnel_spark``)."""

Spec = str | Path | Mapping[str, Any] | Scenario
"""A spec: a scenario file's path, its decoded data, or a parsed Scenario."""


@dataclass(frozen=True, slots=True)
class Resolved:
    """A target ready to check, the stand-in profile for shrinking and the option that
    names it again on the command line (``--job my_jobs:windowed``), if there is one."""

    target: Target
    stand_in: str | None
    rerun: str | None


def needs_spark(job_or_target: Any) -> bool:
    """Whether resolving ``job_or_target`` needs a SparkSession (Spark targets and jobs)."""
    if isinstance(job_or_target, str):
        if job_or_target.startswith(("oracle:", "python:")):
            return False
        return is_named(job_or_target) or ":" in job_or_target
    return callable(job_or_target) and not isinstance(job_or_target, Target)


def resolve(job_or_target: Any, spark: SparkGetter) -> Resolved:
    """A :class:`Target` for ``job_or_target``: a Target as is; a name (``spark``,
    ``spark-stock``, ``oracle:PROFILE``, ``python:module:function``) or ``module:function``
    (a Spark job) as ``windtunnel check`` reads it; a callable as a Spark job
    ``job(events) -> DataFrame``. Raises InvalidSpec for anything else."""
    session = spark() if needs_spark(job_or_target) else None
    if isinstance(job_or_target, Target):
        return Resolved(job_or_target, None, None)
    if isinstance(job_or_target, str):
        target = target_named(job_or_target, session)
        known = is_named(job_or_target) or job_or_target.startswith(("oracle:", "python:"))
        option = "--target" if known else "--job"
        return Resolved(target, stand_in_of(job_or_target), f"{option} {job_or_target}")
    if callable(job_or_target):
        from windtunnel.conformance.targets.spark import job_target

        module = getattr(job_or_target, "__module__", None)
        name = getattr(job_or_target, "__qualname__", None)
        label = f"{module}:{name}" if module and name else None
        rerun = f"--job {label}" if label and "<" not in label else None
        return Resolved(job_target(job_or_target, session, name=label), None, rerun)
    raise InvalidSpec(
        "job_or_target", job_or_target, "must be a Spark job, a target name or a Target",
        "give e.g. jobs:windowed, a function job(events) -> DataFrame, or 'spark-stock'",
    )


def spec_and_data(spec: Spec) -> tuple[Scenario, Mapping[str, Any] | None]:
    """The parsed spec and its data as written (None for a parsed Scenario: no file can
    be written from it); its `input` may be left out. Raises InvalidScenario for a bad file."""
    if isinstance(spec, Scenario):
        return spec, None
    if isinstance(spec, Mapping):
        return parse_scenario(spec, require_input=False), spec
    path = Path(spec)
    scenario = load_spec(path)
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if path.suffix == ".json" else load_yaml(text)
    return scenario, data


def failure_text(
    result: CheckResult,
    spec_data: Mapping[str, Any] | None,
    rerun: str | None,
    out_dir: str | Path,
) -> str:
    """The report of a failed check, the counterexample's path (written under ``out_dir``
    when the spec's data is known, else the shrunk stream inline) and the summary line."""
    failure = result.failure
    assert failure is not None
    lines = [render(result, failure)]
    if spec_data is not None:
        path = write_counterexample(
            failure, spec_data, target=result.target, profile=result.profile,
            rerun=rerun or "--target oracle:" + result.profile, out_dir=out_dir,
        )
        lines += ["", f"counterexample written to {path}", f"  replay it: windtunnel replay {path}"]
        if rerun:
            lines.append(f"  again: windtunnel check {path} {rerun} --examples 0")
    else:
        lines += ["", "shrunk stream (give the spec as a file to get a counterexample file):"]
        lines += input_lines(failure.scenario.items)
    lines.append(summary(result))
    return "\n".join(lines)


def run_check(
    job_or_target: Any,
    spec: Spec,
    *,
    spark: SparkGetter,
    examples: int,
    seed: int,
    profile: str | None,
    out_dir: str | Path,
    shrink_seconds: float = 60.0,
) -> tuple[CheckResult, str | None]:
    """Check the target on the spec (its own input, then ``examples`` generated streams);
    the result and, on a divergence, the failure text (:func:`failure_text`)."""
    scenario, data = spec_and_data(spec)
    resolved = resolve(job_or_target, spark)
    result = check(
        scenario, resolved.target, profile=profile, examples=examples, seed=seed,
        stand_in=resolved.stand_in, shrink_seconds=shrink_seconds,
    )
    if result.failure is None:
        return result, None
    return result, failure_text(result, data, resolved.rerun, out_dir)
