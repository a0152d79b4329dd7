"""A Flink SQL job's cause named from Flink's EXPLAIN: the watermark, the window (size,
slide, gap, cumulating step), keys and aggregates, read from the optimized physical plan;
end to end on the real engine for the examples' broken twins."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli
from windtunnel.conformance.cause import cause_lines
from windtunnel.conformance.flink import runtime
from windtunnel.conformance.flink.plan import read_flink_plan
from windtunnel.oracle.scenario import load_spec

ROOT = Path(__file__).resolve().parents[2]
AVAILABLE = runtime.flink_lib() is not None and runtime.java_binary() is not None
CLICKS = load_spec(ROOT / "examples" / "flink-sql" / "clicks.yaml")


def explained(window: str, watermark: str = "-(ts, 10000:INTERVAL SECOND)",
              select: str = "COUNT(*) AS clicks, SUM(amount) AS spent") -> list[str]:
    """Flink's EXPLAIN lines (its optimized physical plan) for a windowed count per user."""
    return [
        "== Optimized Physical Plan ==",
        "Calc(select=[window_start, window_end, user, clicks, spent])",
        f"+- WindowAggregate(groupBy=[user], window=[{window}], select=[user, {select}, "
        "start('w$) AS window_start, end('w$) AS window_end])",
        "   +- Exchange(distribution=[hash[user]])",
        f"      +- WatermarkAssigner(rowtime=[ts], watermark=[{watermark}])",
        "         +- TableSourceScan(table=[[default_catalog, default_database, clicks__explained]]"
        ", fields=[user, amount, ts])",
        "",
        "== Optimized Execution Plan ==",
        "Calc(select=[window_start])",
    ]


@pytest.mark.parametrize(
    ("lines", "cause"),
    [
        (explained("TUMBLE(time_col=[ts], size=[1 min])", "-(ts, 1000:INTERVAL SECOND)"),
         "the job's watermark on ts is 1s; the spec's tolerance is 10s"),
        (explained("TUMBLE(time_col=[ts], size=[5 min])"),
         "the job's window size is 5min; the spec's size is 1min"),
        (explained("HOP(time_col=[ts], size=[1 min], slide=[30 s])"),
         "the job's window slides every 30s; the spec's windows tumble (every 1min)"),
        (explained("SESSION(time_col=[ts], gap=[20 s], partition keys=[user])"),
         "the job's window is a session with gap 20s; the spec's is a fixed window of 1min"),
        (explained("TUMBLE(time_col=[ts], size=[1 min])",
                   select="COUNT(*) AS clicks, MAX(amount) AS spent"),
         "the job's spent is max(amount); the spec's is sum(amount)"),
        (explained("TUMBLE(time_col=[ts], size=[1 min])"),
         "the job's plan matches the spec (watermark, window, keys, aggregates, stages): the "
         "difference is in the data path (filters, joins, UDFs)"),
    ],
    ids=["watermark", "size", "slide", "gap", "aggregate", "matches"],
)
def test_the_explained_plan_names_the_parameter(lines: list[str], cause: str) -> None:
    plan = read_flink_plan(lines)
    assert plan.reads == {"user", "amount", "ts"}
    assert cause_lines(plan, CLICKS) == [cause]


@pytest.mark.flink
@pytest.mark.skipif(not AVAILABLE, reason="needs the [flink] extra and a Java runtime")
@pytest.mark.parametrize(
    ("spec", "query", "cause"),
    [
        ("clicks.yaml", "clicks-broken.sql",
         "the job's watermark on ts is 1s; the spec's tolerance is 10s"),
        ("running-totals.yaml", "running-totals-broken.sql",
         "the job's window is a fixed window of 10min every 1min; the spec's is a cumulating "
         "window of 10min by 1min"),
    ],
)
def test_check_of_a_broken_flink_sql_job_names_its_cause_first(
    tmp_path: Path, spec: str, query: str, cause: str
) -> None:
    folder = ROOT / "examples" / "flink-sql"
    result = CliRunner().invoke(cli, ["check", str(folder / spec), "--flink-sql",
                                      str(folder / query), "--examples", "0",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[2:4] == ["cause, from the job's plan:", f"  {cause}"]
