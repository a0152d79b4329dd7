"""``windtunnel generate WORKLOAD``: write a simulated stream as a file, a directory or to Kafka."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from windtunnel.cli.errors import EXIT_MISMATCH, friendly
from windtunnel.cli.progress import Progress
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.extras import require_module
from windtunnel.simulator.atomic import atomic_output
from windtunnel.simulator.column_outputs import COLUMN_WRITERS
from windtunnel.simulator.knobs import KNOB_HELP
from windtunnel.simulator.nexmark.config import HELP as NEXMARK_HELP
from windtunnel.simulator.outputs import WRITERS
from windtunnel.simulator.profile_truth import simulate_under
from windtunnel.simulator.report import summary_json as summary_data
from windtunnel.simulator.report import summary_lines
from windtunnel.simulator.workloads import WORKLOADS, simulate

FORMATS = (*WRITERS, "kafka")
PROGRESS_FROM = 100_000
"""Streams of this many records or more show progress (a bar on a terminal, else lines)."""
PIPED_EVERY_S = 5.0
"""Piped progress: at most one line this often."""
_EXPLICIT = ("seed", "events")


def _option_name(knob: str) -> str:
    return knob.removesuffix("_ms").removesuffix("_per_s").replace("_", "-")


def _knob_options(command: Callable[..., Any]) -> Callable[..., Any]:
    for knob, (unit, default, meaning) in reversed(NEXMARK_HELP.items()):
        command = click.option(
            f"--nexmark-{_option_name(knob)}", f"nexmark_{knob}", default=None,
            help=f"nexmark: {meaning} [{unit}; default {default}]",
        )(command)
    for knob, (unit, meaning) in reversed(KNOB_HELP.items()):
        if knob in _EXPLICIT:
            continue
        command = click.option(
            f"--{_option_name(knob)}", f"knob_{knob}", default=None, help=f"{meaning} [{unit}]"
        )(command)
    return command


@click.command("generate")
@click.argument("workload", type=click.Choice(list(WORKLOADS)))
@click.option("--events", "-n", type=int, default=None, help="Records to generate [default 10000].")
@click.option("--seed", "-s", type=int, default=0, show_default=True, help="Random seed.")
@click.option("--out", "-o", "out", default=None, help="Output file or directory (not for kafka).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="scenario",
    show_default=True,
    help="scenario (YAML, or JSON for .json), jsonl, parquet, spark-dir, kafka (live).",
)
@click.option("--summary-json", type=click.Path(dir_okay=False), help="Also write the summary.")
@click.option("--bootstrap", help="kafka: bootstrap servers (else from config or environment).")
@click.option("--kafka-config", type=click.Path(dir_okay=False), help="kafka: librdkafka settings.")
@click.option(
    "--speed",
    type=float,
    default=None,
    help="kafka: replay the virtual clock this many times faster (default: as fast as possible).",
)
@click.option(
    "--kafka-connect-timeout",
    type=float,
    default=15.0,
    show_default=True,
    help="kafka: seconds to wait for the cluster before giving up.",
)
@click.option(
    "--truth-profile",
    default=None,
    metavar="PROFILE",
    help="Label records with what PROFILE does with them, decided by the oracle "
    "[default: the default profile's rule].",
)
@click.option(
    "--columns",
    is_flag=True,
    help="jsonl, parquet, spark-dir: the payload's fields as typed top-level columns "
    "(plus seq, arrival_ms, truth, tag) instead of Kafka-shaped records.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
@_knob_options
@friendly
def generate_command(
    workload: str,
    events: int | None,
    seed: int,
    out: str | None,
    fmt: str,
    summary_json: str | None,
    bootstrap: str | None,
    kafka_config: str | None,
    speed: float | None,
    kafka_connect_timeout: float,
    truth_profile: str | None,
    columns: bool,
    quiet: bool,
    **knob_values: str | None,
) -> None:
    """Generate a WORKLOAD stream (bare, auth, payments, iot, plays, nexmark) with
    out-of-order, late and idle records, labelled with ground truth. Durations take units
    (250ms, 10s, 5min); every knob is described in docs/simulator.md. The --nexmark-*
    options are Nexmark's generator parameters (e.g. --nexmark-kinds bid).

    Exits 1 when records could not be delivered to Kafka, 2 on invalid input.
    """
    if columns and fmt not in COLUMN_WRITERS:
        raise InvalidInput(
            "--columns", fmt, f"applies to {', '.join(COLUMN_WRITERS)} only",
            "drop --columns or choose one of those formats",
        )
    if fmt == "kafka":  # before generating: the stream may take long
        require_module("kafka", "confluent_kafka", "--format kafka")
    options: dict[str, Any] = {"seed": seed}
    if events is not None:
        options["events"] = events
    for name, value in knob_values.items():
        if value is None:
            continue
        if name.startswith("nexmark_") and workload != "nexmark":
            raise InvalidInput(
                "--" + name.replace("_", "-").removesuffix("-ms"), value,
                "applies to the nexmark workload only", "drop it, or generate nexmark",
            )
        options[name.removeprefix("knob_")] = value
    if fmt == "spark-dir" and "batch_size" not in options and "batch_interval_ms" not in options:
        options["batch_size"] = "1000"
    if out is not None and fmt != "kafka":  # refuse a bad path before generating anything
        check_out_path(Path(out), directory=fmt == "spark-dir")
    if summary_json is not None:
        check_out_path(Path(summary_json), directory=False, option="--summary-json")
    if truth_profile is None:
        simulation = simulate(workload, **options)
    else:
        simulation = simulate_under(lambda: simulate(workload, **options), truth_profile)
    knobs = simulation.knobs
    total = knobs.events
    if total is None and knobs.duration_ms is not None:  # expected records for the duration
        total = max(1, round(knobs.duration_ms * knobs.rate_per_s / 1000))
    label = f"{workload} -> {fmt}"
    long_run = not quiet and bool(total) and (total or 0) >= PROGRESS_FROM
    with Progress(label, total, "records", every_s=PIPED_EVERY_S, enabled=long_run) as bar:
        if fmt == "kafka":
            _to_kafka(simulation, bootstrap, kafka_config, speed, kafka_connect_timeout, bar.advance)
        else:
            if out is None:
                raise InvalidInput("out", None, "is required for this format", "give --out PATH")
            try:
                writer = COLUMN_WRITERS[fmt] if columns else WRITERS[fmt]
                with atomic_output(Path(out), directory=fmt == "spark-dir") as partial:
                    writer(simulation, partial, bar.advance)
            except OSError as exc:
                raise InvalidInput(
                    "--out", out, f"cannot be written ({exc.strerror or exc})", _WRITABLE
                ) from None
    if summary_json is not None:
        try:
            with atomic_output(Path(summary_json)) as partial:
                partial.write_text(
                    json.dumps(summary_data(simulation), indent=1) + "\n", encoding="utf-8"
                )
        except OSError as exc:
            raise InvalidInput(
                "--summary-json", summary_json, f"cannot be written ({exc.strerror})", _WRITABLE
            ) from None
    if not quiet:
        where = "kafka topic " + simulation.knobs.topic if fmt == "kafka" else out
        click.echo(f"wrote {workload} (seed {seed}) as {fmt} to {where}", err=True)
        for line in summary_lines(simulation):
            click.echo(f"  {line}", err=True)


_WRITABLE = "give a path in a directory you may write to"


def check_out_path(path: Path, *, directory: bool, option: str = "--out") -> None:
    """Refuse an output path whose parent is missing or is a file, a file output onto a
    directory, and a directory output (spark-dir) onto an existing file."""
    parent = path.parent
    if not parent.exists():
        raise InvalidInput(
            option, str(path), f"directory {parent} does not exist", "create it first"
        )
    if not parent.is_dir():
        raise InvalidInput(
            option, str(path), f"{parent} is a file, not a directory", "give a path in a directory"
        )
    if directory and path.exists() and not path.is_dir():
        raise InvalidInput(
            option, str(path), "is an existing file; spark-dir writes a directory",
            "give a new or empty directory",
        )
    if directory and path.is_dir() and any(path.iterdir()):
        raise InvalidInput(option, str(path), "directory is not empty", "give a new or empty directory")
    if not directory and path.is_dir():
        raise InvalidInput(
            option, str(path), "is a directory; this format writes a file", "give a file name"
        )


def _to_kafka(
    simulation: Any,
    bootstrap: str | None,
    kafka_config: str | None,
    speed: float | None,
    connect_timeout_s: float,
    progress: Callable[[int], None],
) -> None:
    from windtunnel.simulator.producer import load_kafka_config, produce

    environ = dict(os.environ)
    if bootstrap:
        environ["WINDTUNNEL_KAFKA_BOOTSTRAP_SERVERS"] = bootstrap
    config = load_kafka_config(kafka_config, environ)
    report = produce(
        simulation, config, speed=speed, progress=progress, connect_timeout_s=connect_timeout_s
    )
    click.echo(
        f"kafka: produced {report.produced}, delivered {report.delivered}, "
        f"failed {report.failed}, undelivered {report.undelivered}",
        err=True,
    )
    if report.errors:
        click.echo(
            "kafka errors: " + ", ".join(f"{k} x{v}" for k, v in report.errors.most_common()),
            err=True,
        )
    if not report.ok:
        click.echo("windtunnel: some records were not delivered (see counts above)", err=True)
        sys.exit(EXIT_MISMATCH)
