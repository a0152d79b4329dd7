"""Oracle stand-ins found for a target that has none registered (a user's job).

Shrinking on a Spark job costs a streaming query per call; shrinking on the oracle costs
milliseconds. When a job diverges, :func:`variants` lists plausible readings of the spec the
job may implement instead (each a :class:`VariantTarget`: the oracle on a changed spec): the
window's tolerance zero, halved or doubled (a watermark delay "tuned" away from the spec), a
filter dropping rows where every field the query reads, or one of them, is null (``where: f !=
null``, as ``dropna()`` does; under each ``filtered_clock`` reading), and each other value of every rule of the profile
(:data:`~windtunnel.oracle.model.rules.RULE_VALUES`). ``conformance.check`` runs the job once
on the failing stream, takes the first variant whose outputs equal the job's there, shrinks
on it and confirms the small counterexample on the job (:mod:`windtunnel.conformance.failure`;
falling back to shrinking on the job
when no variant matches or the confirmation fails).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from windtunnel.conformance.targets import TargetRun, oracle_micro_batches_of, oracle_outputs
from windtunnel.oracle.model.conditions import parse_condition
from windtunnel.oracle.model.errors import WindtunnelError
from windtunnel.oracle.model.rules import RULE_VALUES
from windtunnel.oracle.model.stages import Where
from windtunnel.oracle.model.timeparse import format_duration
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.scenario import Scenario

Change = Callable[[Scenario], Scenario]


@dataclass(frozen=True, slots=True)
class VariantTarget:
    """The oracle under ``profile`` on each scenario changed by ``change`` (named ``label``)."""

    label: str
    change: Change
    profile: str
    reports_drops: bool = False
    reports_timing: bool = True

    @property
    def name(self) -> str:
        return f"oracle:{self.profile} with {self.label}"

    def run_many(self, scenarios: Sequence[Scenario]) -> list[TargetRun]:
        runs = []
        for scenario in scenarios:
            changed = self.change(scenario)
            outputs = oracle_outputs(changed, self.profile)
            runs.append(TargetRun(outputs, oracle_micro_batches_of(changed, outputs, self.profile)))
        return runs


def _tolerances(spec: Scenario) -> Iterator[tuple[str, Change]]:
    tolerance = getattr(spec.query.window, "tolerance_ms", None)
    if not tolerance:
        return
    for value in dict.fromkeys((tolerance // 2, 0, 2 * tolerance)):

        def change(s: Scenario, value: int = value) -> Scenario:
            window = replace(s.query.window, tolerance_ms=value)  # type: ignore[type-var]
            return replace(s, query=replace(s.query, window=window))

        yield f"tolerance {format_duration(value)}", change


def _read_fields(spec: Scenario) -> list[str]:
    query = spec.query
    fields = [*query.group_by, *(a.field for a in query.aggregate or () if a.field)]
    return list(dict.fromkeys([*fields, *query.aggregate_by]))


def _null_filters(spec: Scenario) -> Iterator[tuple[str, Change]]:
    fields = _read_fields(spec)
    conditions = [" and ".join(f"{p} != null" for p in fields)] if len(fields) > 1 else []
    for text in [*conditions, *(f"{p} != null" for p in fields)]:
        stage = Where(parse_condition(text, "where"))
        for clock in RULE_VALUES["filtered_clock"]:

            def change(s: Scenario, stage: Where = stage, clock: str = clock) -> Scenario:
                overrides = {**s.rule_overrides, "where_null_equals": "compared",
                             "filtered_clock": clock}
                return replace(s, rule_overrides=overrides,
                               query=replace(s.query, stages=(stage, *s.query.stages)))

            yield f"where {text} (filtered_clock: {clock})", change


def _rules(spec: Scenario, profile: str) -> Iterator[tuple[str, Change]]:
    rules = profile_named(profile).rules.with_overrides(dict(spec.rule_overrides))
    for rule, values in RULE_VALUES.items():
        for value in values:
            if getattr(rules, rule) == value:
                continue

            def change(s: Scenario, rule: str = rule, value: str = value) -> Scenario:
                return replace(s, rule_overrides={**s.rule_overrides, rule: value})

            yield f"rule {rule}: {value}", change


def variants(spec: Scenario, profile: str) -> list[VariantTarget]:
    """The candidate readings of ``spec`` under ``profile`` (see the module docstring), in
    the order they are tried; those the oracle cannot run on ``spec`` are left out."""
    found = []
    for label, change in (*_tolerances(spec), *_null_filters(spec), *_rules(spec, profile)):
        target = VariantTarget(label, change, profile)
        try:
            target.run_many([spec])
        except WindtunnelError:
            continue
        found.append(target)
    return found
