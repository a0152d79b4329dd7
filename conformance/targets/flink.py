"""The real Flink engine as targets: ``windtunnel check SPEC --target flink`` and a user's
Flink SQL, ``windtunnel check SPEC --flink-sql query.sql``.

- :class:`FlinkTarget`: scenarios on Flink's own DataStream ``WindowOperator`` (the
  ``[flink]`` extra brings Flink's jars; a Java runtime runs them), many per JVM and per
  MiniCluster job, one branch each (:mod:`windtunnel.conformance.flink.windows`); held to
  the ``flink`` profile; reports drops (the late side output), no timing.
- :class:`FlinkSqlTarget`: a user's ``CREATE TABLE`` + windowing TVF query over the same
  scenarios through Flink's Table API (:mod:`windtunnel.conformance.flink.sql`); emissions
  only; its plan from Flink's ``EXPLAIN`` (:mod:`windtunnel.conformance.flink.plan`).
"""

from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from windtunnel.conformance.flink.plan import read_flink_plan
from windtunnel.conformance.flink.runtime import run_harness, server_command
from windtunnel.conformance.flink.sql import FlinkSql, emissions_of, feed_lines, load_sql
from windtunnel.conformance.flink.windows import outputs_of, parse, prepare
from windtunnel.conformance.job_plan import JobPlan
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
    server_command()
    return FlinkTarget()


@dataclass(frozen=True, slots=True)
class FlinkSqlTarget:
    """A user's Flink SQL on the real engine; one JVM per :meth:`run_many` call; emissions
    only (no drops, no timing)."""

    sql: FlinkSql
    name: str = "flink-sql"
    reports_drops: bool = False
    reports_timing: bool = False

    def run_many(self, scenarios: Sequence[Scenario]) -> list[TargetRun]:
        prepared = [prepare(scenario, sid) for sid, scenario in enumerate(scenarios)]
        lines = [line for scenario, p in zip(scenarios, prepared, strict=True)
                 for line in feed_lines(p, scenario.query.window.on)]
        with tempfile.TemporaryDirectory(prefix="windtunnel-flink-sql-") as tmp:
            ddl, query = Path(tmp) / "ddl.sql", Path(tmp) / "query.sql"
            ddl.write_text(self.sql.ddl, encoding="utf-8")
            query.write_text(self.sql.query, encoding="utf-8")
            found = run_harness("SqlHarness", lines, str(ddl), str(query), self.sql.table)
        rows: dict[int, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
        for line in found:
            _, sid, reason, text = line.split("\t", 3)
            rows[int(sid)].append((reason, json.loads(text)))
        return [TargetRun(tuple(emissions_of(s.query, rows.get(sid, []), self.sql.path)))
                for sid, s in enumerate(scenarios)]

    def plan(self, scenario: Scenario) -> JobPlan:
        """What Flink's ``EXPLAIN`` of the query says it does (:mod:`windtunnel.conformance.
        flink.plan`); nothing runs."""
        with tempfile.TemporaryDirectory(prefix="windtunnel-flink-sql-") as tmp:
            ddl, query = Path(tmp) / "ddl.sql", Path(tmp) / "query.sql"
            ddl.write_text(self.sql.ddl, encoding="utf-8")
            query.write_text(self.sql.query, encoding="utf-8")
            found = run_harness("SqlHarness", [], str(ddl), str(query), self.sql.table, "explain")
        return read_flink_plan([line.removeprefix("P\t") for line in found])


def flink_sql_target(path: str) -> FlinkSqlTarget:
    """The target for the Flink SQL file ``path``; InvalidSpec for a bad file,
    EngineUnavailable without Flink's jars or Java."""
    sql = load_sql(path)
    server_command()
    return FlinkSqlTarget(sql, name=f"flink-sql:{Path(path).name}")


ENTRY = TargetEntry(
    flink_target,
    "the real Flink engine's DataStream window operator (the [flink] extra; Java 17+)",
    stand_in="flink",
)

__all__ = ["ENTRY", "FlinkSqlTarget", "FlinkTarget", "flink_sql_target", "flink_target"]
