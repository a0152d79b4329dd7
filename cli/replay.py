"""``windtunnel replay FILE``: run a scenario and check its expectations."""

from __future__ import annotations

import sys

import click

from windtunnel.cli.errors import EXIT_MISMATCH, friendly
from windtunnel.cli.format import jsonl, table
from windtunnel.oracle.engine import replay
from windtunnel.oracle.expect import check
from windtunnel.oracle.scenario import load_scenario


@click.command("replay")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--engine",
    type=click.Choice(["oracle"]),
    default="oracle",
    show_default=True,
    help="Which engine runs the scenario.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "jsonl"]), default="table", show_default=True
)
@friendly
def replay_command(file: str, engine: str, fmt: str) -> None:
    """Replay a scenario FILE (YAML or JSON) and print every emission and drop.

    Exits 1 when the scenario's expect block does not hold, 2 on invalid input.
    """
    scenario = load_scenario(file)
    result = replay(scenario)
    click.echo(jsonl(result) if fmt == "jsonl" else table(result.outputs), nl=False)
    if scenario.expect is not None:
        problems = check(scenario.expect, result.outputs)
        if problems:
            click.echo(f"expectation failed for scenario {scenario.name!r}:", err=True)
            for problem in problems:
                click.echo(f"  {problem}", err=True)
            sys.exit(EXIT_MISMATCH)
        click.echo(f"expectations held ({scenario.name})", err=True)
