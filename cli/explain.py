"""``windtunnel explain FILE [--seq N ...] [--drops] [--profile P]``: a true account of a run.

Without ``--seq``: one line per input item (the clock or watermark before and after, the
windows each event went into or why it went into none, what was emitted), then the
windows never emitted. With ``--seq``: only those events; ``--drops``: only dropped ones.
"""

from __future__ import annotations

import json

import click

from windtunnel.cli.errors import friendly
from windtunnel.oracle.explain import explain
from windtunnel.oracle.profiles import PROFILES
from windtunnel.oracle.scenario import load_scenario


@click.command("explain")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--seq", "seqs", type=int, multiple=True, help="Only this event seq (repeatable).")
@click.option("--drops", is_flag=True, help="Only the dropped events, each with why.")
@click.option("--profile", default=None,
              help=f"Explain under this profile instead of the scenario's own ({', '.join(PROFILES)}).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@friendly
def explain_command(
    file: str, seqs: tuple[int, ...], drops: bool, profile: str | None, fmt: str
) -> None:
    """Explain what happened to the events of scenario FILE, item by item: the clock or
    watermark (as the profile names it), the windows each event reached or why it reached
    none, what was emitted and when, and the windows never emitted."""
    scenario = load_scenario(file)
    explanation = explain(scenario, profile)
    if fmt == "json":
        data = explanation.to_json(seqs, drops=drops)
        click.echo(json.dumps(data, indent=2, default=str))
        return
    for line in explanation.lines(seqs, drops=drops):
        click.echo(line)
