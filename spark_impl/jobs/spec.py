"""What a windowed job computes: its spec (query, rules, profile), read from a spec file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from windtunnel.oracle.engine import DEFAULT_RULES
from windtunnel.oracle.loading import read_scenario_data
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.model.stages import refuse_stages
from windtunnel.oracle.scenario import Scenario, parse_scenario
from windtunnel.spark_impl.general.operator import check_rules

CLOCKS = ("arrival", "system")
"""A job's wall clock: the rows' ``arrival_ms`` (virtual, exact per event) or the system
clock (read per micro-batch, or by timers)."""


@dataclass(frozen=True, slots=True)
class JobSpec:
    """What a job computes: the query, the rules it runs under, the time unit of plain-number
    times (ms), the wall clock before the first row (epoch ms) and the profile: ``tenzir``
    (windtunnel's operators, default rules only) or ``spark`` (stock Spark). Raises
    InvalidSpec for another profile, rules windtunnel's operators do not run, or stages
    before the window they do not run (stock Spark: what it has no form for)."""

    query: Query
    rules: Rules = DEFAULT_RULES
    time_unit_ms: int = 1
    start_wall_ms: int = 0
    profile: str = "tenzir"
    name: str = "job"

    def __post_init__(self) -> None:
        if self.profile == "spark":  # stock Spark (spark_impl/stock/job.py)
            from windtunnel.spark_impl.stock.mapping import check_stock

            check_stock(self.query, self.rules)
        else:
            check_rules(self.rules, self.profile)
            refuse_stages(self.query.stages, "windtunnel's Spark jobs (windtunnel run)")


def spec_of(spec: JobSpec | Scenario | Query) -> JobSpec:
    """A JobSpec from a Query (default rules), a Scenario (its window block) or a JobSpec."""
    if isinstance(spec, JobSpec):
        return spec
    if isinstance(spec, Query):
        return JobSpec(spec)
    return JobSpec(
        spec.query,
        spec.rules,
        spec.time_unit_ms,
        spec.start_wall_ms,
        spec.profile.name,
        spec.name,
    )


def load_job_spec(path: str | Path) -> JobSpec:
    """The job spec of a scenario or spec file (YAML/JSON with ``window`` or ``query``,
    ``group_by``, ``aggregate``, ...); its ``input`` and ``expect`` are ignored. Raises
    InvalidScenario for a file that is no spec, InvalidSpec as :class:`JobSpec` does."""
    path = Path(path)
    data = read_scenario_data(path)
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k not in ("input", "expect")} | {"input": []}
    return spec_of(parse_scenario(data, default_name=path.stem))
