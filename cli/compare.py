"""``windtunnel compare FILE --profiles tenzir,flink,spark``: one stream through several profiles."""

from __future__ import annotations

import json
from pathlib import Path

import click

from windtunnel.cli.errors import friendly
from windtunnel.cli.output.outputs import group_text
from windtunnel.cli.output.table import Table, echo_table
from windtunnel.cli.output.times import TimeStyle, closed_end, times_option
from windtunnel.oracle.compare import Comparison, Line, compare
from windtunnel.oracle.loading import read_scenario_data
from windtunnel.oracle.model.errors import InvalidScenario
from windtunnel.oracle.model.results import WindowRef
from windtunnel.oracle.scenario import parse_scenario


def _window(line: Line, style: TimeStyle) -> str:
    kind, first, _ = line.key
    if kind == "drop":
        return f"event #{first}"
    return style.window(WindowRef(**json.loads(first)))


def _cell(cell: tuple[str, ...]) -> str:
    if not cell:
        return "-"
    return " | ".join(cell)


def _cause(profile: str, rules: tuple[str, ...], how: str) -> str:
    """``kdb: end_of_input``; ``kdb: own operator + end_of_input``; ``x: a+b (interaction)``."""
    if how == "operator":
        return f"{profile}: own operator" + (f" + {'+'.join(rules)}" if rules else "")
    text = f"{profile}: {'+'.join(rules)}"
    return text if how in ("rule", "rules") else f"{text} ({how})"


def comparison_table(
    comparison: Comparison, only_differences: bool, style: TimeStyle | None = None
) -> Table:
    """Keys by profile; ``*`` marks a difference among the profiles that ran, ``cause``
    names its rules. Profile cells and causes wrap."""
    style = style or TimeStyle()
    names = [r.profile for r in comparison.runs]
    headers = ("", "window", "group", *names, f"cause (vs {names[0]})")
    rows = []
    for line in comparison.lines:
        if only_differences and not line.differs:
            continue
        group = "" if line.key[0] == "drop" else group_text(json.loads(line.key[2]))
        cause = "; ".join(_cause(p, rules, line.cause_kind[p]) for p, rules in line.causes.items())
        rows.append(
            (
                "*" if line.differs else "",
                _window(line, style),
                group,
                *(_cell(line.cells[n]) for n in names),
                cause,
            )
        )
    return Table(headers, tuple(rows), wrap=tuple(range(3, len(headers))), note=True)


def comparison_footer(comparison: Comparison) -> str:
    """The profiles not run (each with why), then the difference count among those that ran."""
    lines = [f"{run.profile}: not run: {run.error}" for run in comparison.not_run]
    count = len(comparison.differences)
    text = f"{count} difference{'s' if count != 1 else ''} across {', '.join(comparison.ran)}"
    if comparison.not_run:
        text += f" (not run, not counted: {', '.join(r.profile for r in comparison.not_run)})"
    return "\n".join([*lines, text]) + "\n"


@click.command("compare")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--profiles",
    default="tenzir,flink,spark",
    show_default=True,
    help="Comma-separated profiles; the first is the baseline causes are named against.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv"]),
    default="table",
    show_default=True,
    help="table: rich on a terminal, plain when piped (the count closes it); csv: the table's cells.",
)
@times_option
@click.option("--rows-only", is_flag=True, help="Compare only rows, not when they are emitted.")
@click.option("--only-differences", is_flag=True, help="List only the keys that differ.")
@friendly
def compare_command(
    file: str, profiles: str, fmt: str, times: str, rows_only: bool, only_differences: bool
) -> None:
    """Run the scenario FILE through several profiles and show every difference (among
    the profiles that ran: one that cannot run the scenario is listed, not counted).

    Emissions are lined up by window and group, drops by event; each cell shows the
    rows with the emission reason and the last event consumed before it (``after #seq``).
    The scenario's ``rules:`` overrides apply to every profile; its ``expect`` is ignored.
    """
    data = read_scenario_data(file)
    scenario = parse_scenario(data, default_name=Path(file).stem)  # its own problems, as for replay
    style = TimeStyle(times, scenario.time_unit_ms, closed_end(scenario.query.window, scenario.rules))
    names = [n.strip() for n in profiles.split(",") if n.strip()]
    if not names:
        raise InvalidScenario("--profiles", profiles, "names no profile", "write tenzir,flink,spark")
    comparison = compare(data, names, timing=not rows_only)
    if fmt == "json":
        click.echo(json.dumps(comparison.to_json(), indent=2, default=str))
        return
    echo_table(comparison_table(comparison, only_differences, style), fmt)
    click.echo(comparison_footer(comparison), nl=False, err=fmt != "table")
