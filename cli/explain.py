"""``windtunnel explain FILE --seq N``: what happened to one event, and why."""

from __future__ import annotations

import click

from windtunnel.cli.errors import friendly
from windtunnel.oracle.explain import explain
from windtunnel.oracle.scenario import load_scenario


@click.command("explain")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--seq", "seqs", type=int, multiple=True, required=True, help="Event seq to explain (repeatable).")
@friendly
def explain_command(file: str, seqs: tuple[int, ...]) -> None:
    """Explain the fate of events of scenario FILE: the windows each reached, whether it was
    dropped and why, and when those windows were emitted."""
    scenario = load_scenario(file)
    for seq in seqs:
        click.echo("\n".join(explain(scenario, seq).lines()))
