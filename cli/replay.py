"""``windtunnel replay FILE``: run a scenario and check its expectations."""

from __future__ import annotations

import sys

import click

from windtunnel.cli.errors import EXIT_MISMATCH, friendly
from windtunnel.cli.output.outputs import jsonl, outputs_json, outputs_table, summary_line
from windtunnel.cli.output.table import echo_table
from windtunnel.cli.output.times import TimeStyle, closed_end, times_option
from windtunnel.cli.progress import Progress, is_terminal
from windtunnel.oracle.engine import replay
from windtunnel.oracle.expect import check
from windtunnel.oracle.model.extras import requires_extra
from windtunnel.oracle.scenario import load_scenario


@click.command("replay")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--engine",
    type=click.Choice(["oracle", "spark", "both"]),
    default="oracle",
    show_default=True,
    help="Which engine runs the scenario; both compares Spark with the oracle.",
)
@click.option(
    "--micro-batch",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Spark: lone events per micro-batch (scenario batches are micro-batches).",
)
@click.option("--master", default=None, help="Spark master, e.g. spark://127.0.0.1:7077.")
@click.option("--remote", default=None, help="Spark Connect server, e.g. sc://localhost:15002.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "jsonl", "csv", "json"]),
    default="table",
    show_default=True,
    help="table: rich on a terminal, plain when piped; jsonl: the contract's JSON lines.",
)
@times_option
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Spark: progress on stderr while it starts and per micro-batch (a bar on a "
    "terminal, a line per micro-batch with rate and ETA when piped; default: on).",
)
@friendly
def replay_command(
    file: str,
    engine: str,
    fmt: str,
    times: str,
    progress: bool | None,
    micro_batch: int,
    master: str | None,
    remote: str | None,
) -> None:
    """Replay a scenario FILE (YAML or JSON) and print every emission and drop; a table
    ends with a summary line (emissions and drops by reason), JSON holds it as "summary".

    Exits 1 when the scenario's expect block does not hold (or, with --engine both,
    when Spark and the oracle diverge), 2 on invalid input. On Spark, profile tenzir
    runs the path windtunnel run would take (the production operator where it covers
    the query, else the general one) and profile spark stock Spark (emissions only).
    """
    scenario = load_scenario(file)
    style = TimeStyle(times, scenario.time_unit_ms, closed_end(scenario.query.window, scenario.rules))
    divergence: list[str] = []
    if engine == "oracle":
        result = replay(scenario)
    else:
        with requires_extra("spark", f"--engine {engine}"):
            from windtunnel.spark_impl.harness.replay import (
                compare_with_oracle,
                micro_batch_count,
                replay_scenario,
            )

        total = micro_batch_count(scenario, micro_batch) if progress is not False else None
        label = f"replaying {scenario.name} on Spark"
        # Spark's start is said on a terminal or when asked (--progress); piped by default,
        # only the micro-batches, so a failure to start stays one line
        starting = progress is True or is_terminal(sys.stderr)
        with Progress(label, total, "micro-batches", enabled=progress is not False) as bar:

            def say(line: str) -> None:
                if line.startswith("micro-batch "):
                    bar.advance(1, line)
                elif starting:
                    bar.note(line)

            run = replay_scenario(
                scenario, micro_batch=micro_batch, master=master, remote=remote,
                progress=say if progress is not False else None,
            )
        result = run.result
        if engine == "both":
            divergence = compare_with_oracle(scenario, run)
    if fmt == "jsonl":
        click.echo(jsonl(result), nl=False)
    elif fmt == "json":
        click.echo(outputs_json(scenario.name, result.outputs), nl=False)
    else:
        echo_table(outputs_table(result.outputs, style), fmt)
        if fmt == "table":
            click.echo(summary_line(result.outputs))
    if engine == "both":
        if divergence:
            click.echo(f"spark and the oracle diverge for scenario {scenario.name!r}:", err=True)
            for problem in divergence:
                click.echo(f"  {problem}", err=True)
            sys.exit(EXIT_MISMATCH)
        if run.clock == "stock":
            click.echo(
                f"stock spark matches the oracle's spark profile ({len(result)} emissions, "
                f"{len(run.feed.batches)} micro-batches; drops not compared: stock Spark "
                "drops late rows silently)",
                err=True,
            )
        else:
            click.echo(
                f"spark matches the oracle ({len(result)} outputs, "
                f"{len(run.feed.batches)} micro-batches)",
                err=True,
            )
    if scenario.expect is not None:
        problems = check(scenario.expect, result.outputs)
        if problems:
            click.echo(f"expectation failed for scenario {scenario.name!r}:", err=True)
            for problem in problems:
                click.echo(f"  {problem}", err=True)
            sys.exit(EXIT_MISMATCH)
        click.echo(f"expectations held ({scenario.name})", err=True)
