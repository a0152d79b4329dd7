"""Table output: times, closed ends, wrapping (plain and rich), formats, the replay summary,
compare's difference count, drop groups and Spark progress lines (no Spark needed)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from windtunnel.cli.main import cli
from windtunnel.cli.output.outputs import outputs_table, summary_line
from windtunnel.cli.output.table import PLAIN_WIDTH, Table, plain, rich_table
from windtunnel.cli.output.times import TimeStyle
from windtunnel.oracle.compare import compare
from windtunnel.oracle.engine import replay
from windtunnel.oracle.model.errors import InvalidSpec, WindtunnelError
from windtunnel.oracle.model.results import Drop, Emission, WindowRef, to_jsonl_line
from windtunnel.oracle.scenario import load_scenario, parse_scenario
from windtunnel.spark_impl.harness.progress import ProgressWatch

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BRUTE = str(EXAMPLES / "brute-force.yaml")


@pytest.mark.parametrize(
    ("mode", "unit_ms", "ms", "text"),
    [
        ("unit", 1000, -540000, "-540s"),
        ("unit", 1000, 1500, "1.5s"),
        ("unit", 1, 60000, "60000"),
        ("unit", 1000, 1_700_000_000_000, "2023-11-14T22:13:20Z"),
        ("ms", 1000, -540000, "-540000"),
        ("iso", 1000, 30000, "1970-01-01T00:00:30Z"),
        ("iso", 1, 10**17, str(10**17)),  # beyond the calendar: plain
    ],
)
def test_times_print_in_the_chosen_style(mode: str, unit_ms: int, ms: int, text: str) -> None:
    assert TimeStyle(mode, unit_ms).time(ms) == text


@pytest.mark.parametrize(("closed", "text"), [(False, "[0s,10s)"), (True, "[0s,10s]")])
def test_windows_print_their_ends_as_they_are(closed: bool, text: str) -> None:
    assert TimeStyle("unit", 1000, closed).window(WindowRef(0, 10000)) == text
    assert TimeStyle("unit", 1000, closed).window(WindowRef(start_offset=4, end_offset=6)) == "#[4,6)"


def test_a_bad_time_style_is_an_input_error() -> None:
    with pytest.raises(InvalidSpec, match="unit, ms or iso"):
        TimeStyle("hours")


@pytest.mark.parametrize(
    ("window", "closed"),
    [
        ("{kind: trailing, size: 10}", True),
        ("{kind: session, gap: 10}", True),
        ("{kind: fixed, size: 10}", False),
    ],
)
def test_replay_prints_closed_windows_with_a_bracket(tmp_path: Path, window: str, closed: bool) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(f"window: {window}\naggregate: {{n: count()}}\ninput: [{{ts: 1}}, {{ts: 3}}]\n")
    result = CliRunner().invoke(cli, ["replay", str(path)])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if line.startswith("emit")]
    assert rows and all(("]" in row) == closed for row in rows)


def test_the_plain_brute_force_table_fits_120_columns_and_keeps_the_whole_message() -> None:
    result = CliRunner().invoke(cli, ["replay", BRUTE])
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= PLAIN_WIDTH
    drop = next(i for i, line in enumerate(lines) if line.startswith("drop"))
    assert "alice, 10.0.0.1" in lines[drop]
    message = " ".join(line.strip() for line in lines[drop:drop + 6] if not line.startswith("emit"))
    assert "idle_timeout force-closed it; the clock is at 170000" in message


def test_rich_wraps_the_message_column_to_the_terminal_width() -> None:
    scenario = load_scenario(BRUTE)
    table = outputs_table(replay(scenario).outputs, TimeStyle("unit", scenario.time_unit_ms))
    console = Console(width=100, record=True, force_terminal=True, color_system=None)
    console.print(rich_table(table))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "[-540s,60s)" in text  # brackets are text, not markup
    assert any(line.startswith(" emit (partial)  [-540s,60s)") for line in text.splitlines())


def test_a_note_column_moves_under_its_row_when_the_table_is_too_wide() -> None:
    table = Table(("k", "a", "cause"), (("1", "x" * 50, "because " * 12),), wrap=(2,), note=True)
    lines = plain(table, width=60).splitlines()
    assert lines[0].split() == ["k", "a"]
    assert any(line.lstrip().startswith("cause: because") for line in lines)
    assert max(len(line) for line in lines) <= 60


def test_a_row_with_the_wrong_number_of_cells_is_refused() -> None:
    with pytest.raises(WindtunnelError):
        Table(("a", "b"), (("1",),))


def test_summary_line_counts_emissions_and_drops_by_reason() -> None:
    ref = WindowRef(0, 10)
    outputs = [
        Emission(ref, None, {}, "close", 0, 0),
        Drop(1, "late"),
        Emission(ref, None, {}, "end_of_input", 1, 0),
        Emission(ref, None, {}, "close", 1, 0),
    ]
    assert summary_line(outputs) == "3 emissions (close 2, end_of_input 1), 1 drop (late 1)"
    assert summary_line([]) == "0 emissions, 0 drops"


def test_replay_table_ends_with_the_summary_line() -> None:
    result = CliRunner().invoke(cli, ["replay", BRUTE])
    assert result.stdout.splitlines()[-1] == (
        "22 emissions (idle_timeout 12, end_of_input 10), 1 drop (late 1)"
    )


def test_jsonl_stays_the_contract_lines_with_drop_groups_as_an_extension() -> None:
    result = CliRunner().invoke(cli, ["replay", BRUTE, "--format", "jsonl"])
    expected = "".join(to_jsonl_line(o) + "\n" for o in replay(load_scenario(BRUTE)).outputs)
    assert result.stdout == expected
    drop = next(json.loads(line) for line in result.stdout.splitlines() if '"drop"' in line)
    assert list(drop) == ["type", "seq", "reason", "windows", "message", "group"]
    assert drop["group"] == ["alice", "10.0.0.1"]


def test_csv_and_json_hold_every_output() -> None:
    runner = CliRunner()
    rows = list(csv.reader(io.StringIO(runner.invoke(cli, ["replay", BRUTE, "--format", "csv"]).stdout)))
    assert rows[0] == ["type", "window", "group", "reason", "seq", "wall", "row / message"]
    assert len(rows) == 1 + 23
    data = json.loads(runner.invoke(cli, ["replay", BRUTE, "--format", "json"]).stdout)
    assert len(data["outputs"]) == 23
    assert data["summary"] == {"emissions": {"idle_timeout": 12, "end_of_input": 10}, "drops": {"late": 1}}


def test_a_bad_times_option_exits_2_with_one_line() -> None:
    result = CliRunner().invoke(cli, ["replay", BRUTE, "--times", "hours"])
    assert result.exit_code == 2 and "Traceback" not in result.output


TRAILING = {"window": {"kind": "trailing", "size": 10}, "aggregate": {"n": "count()"},
            "input": [{"ts": 1}, {"ts": 5}]}
IDLE = {"window": {"kind": "fixed", "size": 10, "idle_timeout": 100}, "aggregate": {"n": "count()"},
        "input": [{"ts": 1}, {"ts": 5}, {"advance": 500}, {"ts": 3}]}


def test_compare_counts_only_differences_among_profiles_that_ran() -> None:
    comparison = compare(TRAILING, ["tenzir", "ekuiper", "spark"])
    assert [r.profile for r in comparison.not_run] == ["spark"]
    assert comparison.differences == []
    assert comparison.to_json()["not_run"] == ["spark"]


def test_compare_lists_a_profile_not_run_apart_from_the_count(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(IDLE))
    result = CliRunner().invoke(cli, ["compare", str(path), "--profiles", "tenzir,timeplus,spark"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[-2].startswith("spark: not run: ")
    assert lines[-1].endswith(" across tenzir, timeplus (not run, not counted: spark)")
    marked = sum(1 for line in lines if line.startswith("*"))
    assert lines[-1].startswith(f"{marked} difference")


def test_compare_csv_has_one_row_per_key() -> None:
    result = CliRunner().invoke(
        cli, ["compare", str(EXAMPLES / "six-profiles.yaml"), "--profiles", "tenzir,kdb", "--format", "csv"])
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0] == ["", "window", "group", "tenzir", "kdb", "cause (vs tenzir)"]
    assert any(row[0] == "*" and "kdb: own operator" in row[-1] for row in rows[1:])


def test_profiles_csv_lists_every_rule_of_each_profile() -> None:
    result = CliRunner().invoke(cli, ["profiles", "tenzir", "spark", "--format", "csv"])
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0] == ["profile", "rule", "value", "source"]
    assert {r[0] for r in rows[1:]} == {"tenzir", "spark"}


GROUPED_LATE = {
    "group_by": ["k"],
    "aggregate": {"n": "count()"},
    "input": [{"ts": 100, "k": "a"}, {"ts": 1, "k": "a"}, {"ts": None, "k": "b"}],
}


@pytest.mark.parametrize(
    ("profile", "window"),
    [
        ("tenzir", {"kind": "fixed", "size": 10}),
        ("tenzir", {"kind": "fixed", "size": 10, "every": 5}),
        ("flink", {"kind": "session", "gap": 10}),
        ("spark", {"kind": "fixed", "size": 10}),
        ("timeplus", {"kind": "fixed", "size": 10}),
        ("kdb", {"kind": "fixed", "size": 10}),
    ],
)
def test_drops_carry_the_group_of_their_event(profile: str, window: dict[str, Any]) -> None:
    scenario = parse_scenario({**GROUPED_LATE, "profile": profile, "window": {**window, "on": "ts"}})
    drops = replay(scenario).drops
    assert drops, "the scenario drops something under every profile here"
    by_seq = {d.seq: d.group for d in drops}
    assert by_seq.get(1, "a") == "a" and by_seq.get(2, "b") == "b"


class _Query:
    def __init__(self, reports: list[dict[str, Any]]) -> None:
        self.id = "q1"
        self.recentProgress = reports


class _Streams:
    def __init__(self, query: _Query) -> None:
        self.active = [query]


class _Spark:
    def __init__(self, query: _Query) -> None:
        self.streams = _Streams(query)


def test_progress_reports_each_micro_batch_once_in_order() -> None:
    query = _Query([{"batchId": 0, "numInputRows": 5, "sink": {"numOutputRows": 0}}])
    said: list[str] = []
    with ProgressWatch(_Spark(query), said.append, [2, 1, 0]) as watch:
        watch.poll()
        query.recentProgress = [
            {"batchId": 0, "numInputRows": 5, "sink": {"numOutputRows": 0}},
            {"batchId": 1, "numInputRows": 3, "sink": {"numOutputRows": 1}},
            {"batchId": 2, "numInputRows": 4, "sink": {"numOutputRows": -1}},
        ]
    assert said == [
        "micro-batch 1/3: 2 events in, 0 outputs",
        "micro-batch 2/3: 1 event in, 1 output",
        "micro-batch 3/3: 0 events in",
    ]
