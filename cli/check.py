"""``windtunnel check SPEC``: hold a target to the spec on generated streams; shrink what fails."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from windtunnel.cli.errors import EXIT_MISMATCH, friendly
from windtunnel.cli.progress import Progress, duration_text
from windtunnel.conformance.check import COMPARES, DEFAULT_BATCH_SIZE, DETECT, check
from windtunnel.conformance.counterexample import DEFAULT_OUT, write_counterexample
from windtunnel.conformance.generate import MAX_EVENTS
from windtunnel.conformance.report import input_lines, render, summary
from windtunnel.conformance.targets import known_targets, stand_in_of, target_named
from windtunnel.oracle.model.errors import InvalidScenario
from windtunnel.oracle.model.stream import End
from windtunnel.oracle.scenario import load_spec, load_yaml

SHOWN_ITEMS = 8
SHOWN_WIDTH = 110
"""The failing stream before shrinking is shown this far (items, characters a line)."""


def _spec_data(path: str) -> Any:
    text = Path(path).read_text(encoding="utf-8")
    return json.loads(text) if path.endswith(".json") else load_yaml(text)


TIME_BUDGET_S = 600.0
"""A check estimated to take longer than this says so before it starts."""
TYPICAL_RATES = {
    "oracle": 1000.0, "python": 1000.0, "spark": 600.0, "tenzir": 300.0,
    "beam": 1000.0, "beam-direct": 50.0, "beam-transform": 50.0,
}
"""About how many scenarios a minute a target checks on a 2-core machine, by its name (or
the part before ':'); anything else (a Spark job, spark-stock, spark-fast): :data:`JOB_RATE`.
Their measurements: docs/conformance.md, "Progress and time"."""
JOB_RATE = 120.0
"""About how many scenarios a minute a Spark job checks on a 2-core machine (a
deduplicating job fewer: a query per stream); docs/conformance.md, "Check settings"."""


def typical_rate(target: str, is_job: bool) -> float:
    """About how many scenarios a minute ``target`` checks (see :data:`TYPICAL_RATES`)."""
    if is_job:
        return JOB_RATE
    return TYPICAL_RATES.get(target, TYPICAL_RATES.get(target.split(":")[0], JOB_RATE))


def examples_warning(examples: int, target: str, is_job: bool) -> str | None:
    """A line estimating the time of ``examples`` when it passes :data:`TIME_BUDGET_S`,
    with the ``--examples`` that fits; None when it fits."""
    rate = typical_rate(target, is_job)
    seconds = examples * 60.0 / rate
    if seconds <= TIME_BUDGET_S:
        return None
    fits = int(TIME_BUDGET_S * rate / 60)
    return (f"--examples {examples:,} takes about {duration_text(seconds)} at about "
            f"{rate:g} scenarios/min (typical for {target} here); --examples {fits} fits "
            f"{duration_text(TIME_BUDGET_S)} (Ctrl-C stops a check: exit 130)")


@click.command("check")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--job", default=None, metavar="MODULE:FUNCTION",
              help="Your Spark job: job(events: DataFrame) -> DataFrame.")
@click.option("--flink-sql", "flink_sql", default=None, metavar="QUERY.sql",
              help="Your Flink SQL job: CREATE TABLE ... WATERMARK FOR ...; SELECT ... over a "
              "windowing TVF (the [flink] extra).")
@click.option("--beam-transform", "beam_transform", default=None, metavar="MODULE:FUNCTION",
              help="Your Beam transform: function(keyed PCollection of (key, event)) -> your "
              "windowed, triggered, combined PCollection of (key, value); run on the "
              "DirectRunner with TestStream, one pipeline per stream (the [beam] extra).")
@click.option("--target", default=None, metavar="NAME",
              help=f"What to check: {', '.join(known_targets())} (default: spark; beam for a "
              "profile: beam spec).")
@click.option("--profile", default=None, help="Profile the target is held to (default: SPEC's).")
@click.option("--examples", type=click.IntRange(min=0), default=100, show_default=True,
              help="Generated streams to check after SPEC's own input.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the generated streams (same seed, same streams).")
@click.option("--out", "out_dir", default=DEFAULT_OUT, show_default=True,
              type=click.Path(file_okay=False), help="Directory for the counterexample file.")
@click.option("--batch-size", type=click.IntRange(min=1), default=DEFAULT_BATCH_SIZE,
              show_default=True,
              help="Scenarios per target call (a Spark target runs them in one query).")
@click.option("--stand-in", default=None, metavar="PROFILE",
              help="Shrink against the oracle under PROFILE, then confirm on the target "
              "(default: spark for spark-stock; for --job, 'detect': the spec's variant the "
              "job matches on the failing stream; 'none' to shrink on the target).")
@click.option("--shrink-seconds", type=click.FloatRange(min=0), default=60.0, show_default=True,
              help="Time budget for shrinking; the smallest failure so far is kept.")
@click.option("--max-events", type=click.IntRange(min=1), default=MAX_EVENTS, show_default=True,
              help="Events per generated stream, at most.")
@click.option("--compare", type=click.Choice(COMPARES), default="rows", show_default=True,
              help="rows: every emitted row, in its micro-batch; final: the last row per "
              "window (a sink that keeps one row per key, e.g. update mode into a merge).")
@friendly
def check_command(
    spec: str,
    job: str | None,
    flink_sql: str | None,
    beam_transform: str | None,
    target: str | None,
    profile: str | None,
    examples: int,
    seed: int,
    out_dir: str,
    batch_size: int,
    stand_in: str | None,
    shrink_seconds: float,
    max_events: int,
    compare: str,
) -> None:
    """Check a target against SPEC (a scenario file: its window, group_by, aggregate
    and profile are the spec): SPEC's own input first, then --examples generated
    streams (disorder, late events, idle gaps, batches, several keys, nulls).

    Exit 0: no divergence. Exit 1: a divergence; the shrunk counterexample is written
    as a scenario file (path printed) with a report. Exit 2: invalid input.
    """
    given = [(o, v) for o, v in (("--job", job), ("--flink-sql", flink_sql),
                                 ("--beam-transform", beam_transform), ("--target", target))
             if v is not None]
    if len(given) > 1:
        raise InvalidScenario(given[0][0], given[0][1], f"cannot be given with {given[1][0]}",
                              "give one of them")
    if job is not None and ":" not in job:
        raise InvalidScenario(
            "--job", job, "lacks :function (the job function in the module)",
            f"write --job {job}:FUNCTION, naming your job(events) -> DataFrame in {job}",
        )
    scenario = load_spec(spec)
    name = job if job is not None else target or (
        "beam" if scenario.profile.name == "beam" else "spark")
    rerun = f"--job {job}" if job is not None else f"--target {name}"
    chosen_stand_in = stand_in if stand_in is not None else (
        DETECT if job is not None else stand_in_of(name))
    if flink_sql is not None:  # a user's Flink SQL job (windtunnel.conformance.targets.flink)
        from windtunnel.conformance.targets.flink import flink_sql_target

        rerun, chosen_stand_in = f"--flink-sql {flink_sql}", stand_in
        implementation: Any = flink_sql_target(flink_sql)
    elif beam_transform is not None:  # a user's Beam transform (windtunnel.conformance.targets.beam)
        from windtunnel.conformance.targets.beam import beam_transform_target

        rerun, chosen_stand_in = f"--beam-transform {beam_transform}", stand_in
        implementation = beam_transform_target(beam_transform)
    else:
        implementation = target_named(name)
    if compare != "rows":
        rerun += f" --compare {compare}"
    # a target whose every scenario is a pipeline of its own shrinks in small rounds
    batch_size = min(batch_size, getattr(implementation, "preferred_batch_size", batch_size))
    if chosen_stand_in == "none":
        chosen_stand_in = None
    color = sys.stdout.isatty()
    total = examples + (1 if any(not isinstance(i, End) for i in scenario.items) else 0)
    warning = examples_warning(examples, implementation.name, job is not None)
    if warning:
        click.echo(f"windtunnel: {warning}", err=True)
    with Progress(f"checking {implementation.name}", total, "scenarios", per_minute=True,
                  warm_up=True) as bar:

        def shrinking(diverging: Any) -> None:
            bar.note(f"{diverging.name} diverges; shrinking it (up to {shrink_seconds:g} s)")

        result = check(
            scenario, implementation, profile=profile, examples=examples, seed=seed,
            batch_size=batch_size, stand_in=chosen_stand_in, shrink_seconds=shrink_seconds,
            max_events=max_events, progress=bar.advance, on_shrinking=shrinking,
            compare=compare,
        )
    failure = result.failure
    for stall in getattr(implementation, "stalls", ())[:SHOWN_ITEMS]:
        click.echo(f"note: {stall} (the outputs until then are compared)")
    if failure is None:
        click.echo(summary(result))
        return
    click.echo(render(result, failure, color=color))
    if hasattr(implementation, "whose"):
        if implementation.whose(failure.scenario, failure.run) == "engine":
            click.echo("engine divergence: the spec's own WindowInto on the DirectRunner gives "
                       "these panes too: the DirectRunner departs from Beam's model here "
                       "(docs/engines.md, Beam), not your transform")
        else:
            click.echo("your transform diverges: the spec's own WindowInto on the DirectRunner "
                       "gives the profile's panes on this stream")
    path = write_counterexample(
        failure, _spec_data(spec), target=implementation.name, profile=result.profile,
        rerun=rerun, out_dir=out_dir,
    )
    click.echo("")
    click.echo("failing stream before shrinking:" if failure.original is not scenario
               else "SPEC's own input failed; before shrinking:")
    lines = input_lines(failure.original.items, failure.original.time_unit_ms)
    for line in lines[:SHOWN_ITEMS]:
        click.echo(line if len(line) <= SHOWN_WIDTH else line[: SHOWN_WIDTH - 3] + "...")
    if len(lines) > SHOWN_ITEMS:
        click.echo(f"  ... {len(lines) - SHOWN_ITEMS} more item(s)")
    click.echo(f"counterexample written to {path}")
    click.echo(f"  replay it: windtunnel replay {path}  |  again: windtunnel check {path} "
               f"{rerun} --examples 0")
    click.echo(summary(result))
    sys.exit(EXIT_MISMATCH)

