"""``windtunnel compare FILE --profiles tenzir,flink,spark``: one stream through several profiles."""

from __future__ import annotations

import json
from pathlib import Path

import click

from windtunnel.cli.errors import friendly
from windtunnel.cli.format import render
from windtunnel.oracle.compare import Comparison, Line, compare
from windtunnel.oracle.loading import read_scenario_data
from windtunnel.oracle.model.errors import InvalidScenario
from windtunnel.oracle.scenario import parse_scenario


def _window(line: Line) -> str:
    kind, first, _ = line.key
    if kind == "drop":
        return f"event #{first}"
    window = json.loads(first)
    parts = []
    if "start_offset" in window:
        parts.append(f"#{window['start_offset']}..{window['end_offset']}")
    if "start_ms" in window:
        parts.append(f"{window['start_ms']}..{window['end_ms']}")
    return " ".join(parts)


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


def comparison_table(comparison: Comparison, only_differences: bool) -> str:
    """A table of keys by profile; ``*`` marks a difference, ``cause`` names its rules."""
    names = [r.profile for r in comparison.runs]
    rows = [("", "window", "group", *names, "cause (vs " + names[0] + ")")]
    for line in comparison.lines:
        if only_differences and not line.differs:
            continue
        group = "" if line.key[0] == "drop" else line.key[2]
        cause = "; ".join(_cause(p, rules, line.cause_kind[p]) for p, rules in line.causes.items())
        rows.append(
            (
                "*" if line.differs else "",
                _window(line),
                group,
                *(_cell(line.cells[n]) for n in names),
                cause,
            )
        )
    text = render(rows)
    for run in comparison.runs:
        if run.error:
            text += f"{run.profile}: not run: {run.error}\n"
    count = len(comparison.differences)
    text += f"{count} difference{'s' if count != 1 else ''} across {', '.join(names)}\n"
    return text


@click.command("compare")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--profiles",
    default="tenzir,flink,spark",
    show_default=True,
    help="Comma-separated profiles; the first is the baseline causes are named against.",
)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--rows-only", is_flag=True, help="Compare only rows, not when they are emitted.")
@click.option("--only-differences", is_flag=True, help="List only the keys that differ.")
@friendly
def compare_command(file: str, profiles: str, fmt: str, rows_only: bool, only_differences: bool) -> None:
    """Run the scenario FILE through several profiles and show every difference.

    Emissions are lined up by window and group, drops by event; each cell shows the
    rows with the emission reason and the last event consumed before it (``after #seq``).
    The scenario's ``rules:`` overrides apply to every profile; its ``expect`` is ignored.
    """
    data = read_scenario_data(file)
    parse_scenario(data, default_name=Path(file).stem)  # the file's own problems, as for replay
    names = [n.strip() for n in profiles.split(",") if n.strip()]
    if not names:
        raise InvalidScenario("--profiles", profiles, "names no profile", "write tenzir,flink,spark")
    comparison = compare(data, names, timing=not rows_only)
    if fmt == "json":
        click.echo(json.dumps(comparison.to_json(), indent=2, default=str))
    else:
        click.echo(comparison_table(comparison, only_differences), nl=False)
