"""``windtunnel run SPEC SOURCE``: a windowed Spark job from a spec and a source to a sink."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import click

from windtunnel.cli.errors import friendly
from windtunnel.cli.progress import Progress
from windtunnel.cli.run_source import end_notes, look_at_source, make_out_dir
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.extras import requires_extra
from windtunnel.oracle.model.timeparse import parse_duration_ms

KAFKA_PREFIX = "kafka://"
KAFKA_READER_NAMES = {
    "connector": "Spark's Kafka connector (format kafka)",
    "python": "windtunnel's Python Kafka source (no connector jar on the classpath)",
}


def parse_kafka(source: str) -> tuple[str, str]:
    """``kafka://HOST:PORT[,HOST:PORT]/TOPIC`` -> (bootstrap servers, topic)."""
    rest = source.removeprefix(KAFKA_PREFIX)
    bootstrap, _, topic = rest.partition("/")
    if not bootstrap or not topic or "/" in topic:
        raise InvalidInput("SOURCE", source, "not a Kafka address", "write kafka://HOST:PORT/TOPIC")
    return bootstrap, topic


@click.command("run")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.argument("source")
@click.option(
    "--sink",
    type=click.Choice(["json", "parquet", "console"]),
    default=None,
    help="Where outputs go [default: json with --out, else console].",
)
@click.option("--out", "-o", default=None, help="Output directory for the json/parquet sink.")
@click.option("--checkpoint", default=None, help="Checkpoint directory (resume after a stop).")
@click.option(
    "--trigger",
    default="availableNow",
    show_default=True,
    help="availableNow (consume the input present at start, then stop) or an interval (5s).",
)
@click.option(
    "--clock",
    type=click.Choice(["arrival", "system"]),
    default="arrival",
    show_default=True,
    help="Wall clock: the records' arrival_ms (virtual) or the system clock (timers).",
)
@click.option("--tick", default="1s", show_default=True, help="System clock: timer interval.")
@click.option(
    "--rows-per-batch",
    type=click.IntRange(min=1),
    default=10_000,
    show_default=True,
    help="jsonl/parquet sources: records per micro-batch (spark-dir: one file each).",
)
@click.option(
    "--no-end",
    is_flag=True,
    help="Files: do not end the input after the last record (open windows stay open).",
)
@click.option("--timeout", default=None, help="Stop after this long (needed with an interval).")
@click.option("--master", default=None, help="Spark master, e.g. spark://127.0.0.1:7077.")
@click.option("--remote", default=None, help="Spark Connect server, e.g. sc://localhost:15002.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
@click.option(
    "--explain",
    is_flag=True,
    help="Print which path the job takes (the production operator, the general one or "
    "stock Spark) and why; run nothing.",
)
@friendly
def run_command(
    spec: str,
    source: str,
    sink: str | None,
    out: str | None,
    checkpoint: str | None,
    trigger: str,
    clock: str,
    tick: str,
    rows_per_batch: int,
    no_end: bool,
    timeout: str | None,
    master: str | None,
    remote: str | None,
    quiet: bool,
    explain: bool,
) -> None:
    """Run the window of SPEC (a scenario or spec file; its input is ignored) over SOURCE
    on Spark, exact per event (default profile: the production operator where it covers
    the query, else the general one; --explain says which and why), and write every
    emission and drop; a profile spark SPEC runs stock Spark (withWatermark + window;
    emissions).

    SOURCE is what `windtunnel generate` wrote (a spark-dir directory, a .jsonl or a
    .parquet file) or kafka://HOST:PORT/TOPIC (Spark's Kafka connector when it is on the
    classpath, else windtunnel's Python Kafka source; the [kafka] extra; an address
    nothing listens on fails at once). Progress goes to stderr (a bar on a terminal, a
    line per micro-batch with rate and ETA when piped); the end says which windows are
    still open (Kafka never ends) and if fewer records were read than the source held.
    --out is created. Exits 2 on invalid input or a failed job, 130 on Ctrl-C.
    """
    with requires_extra("spark", "windtunnel run"):
        from windtunnel.spark_impl.job import (
            Sink,
            choose_path,
            load_job_spec,
            records_format,
            trigger_options,
        )
        from windtunnel.spark_impl.jobs.path import STOCK

    job_spec = load_job_spec(spec)
    is_kafka = source.startswith(KAFKA_PREFIX)
    kafka = parse_kafka(source) if is_kafka else None
    if not is_kafka:
        records_format(source)
    options = trigger_options(trigger)
    tick_ms = parse_duration_ms(tick, "--tick")
    if tick_ms < 1:
        raise InvalidInput("--tick", tick, "must be positive", "give e.g. 1s")
    timeout_s = None if timeout is None else parse_duration_ms(timeout, "--timeout") / 1000
    if timeout_s is not None and timeout_s <= 0:
        raise InvalidInput("--timeout", timeout, "must be positive", "give e.g. 60s")
    if "processingTime" in options and timeout_s is None:
        raise InvalidInput(
            "--trigger", trigger, "an interval trigger runs until stopped", "also give --timeout"
        )
    kind = sink or ("json" if out else "console")
    if out is not None and kind == "console":
        raise InvalidInput("--out", out, "the console sink writes no files", "drop --out")
    if out is not None and Path(out).exists() and not Path(out).is_dir():
        raise InvalidInput("--out", out, "is a file", "give a directory")
    target = Sink(kind, path=out)
    # the path as far as it is known before Spark starts (input errors now; stock or not)
    known = choose_path(job_spec, spark=None, sink_kind=kind, clock=clock, checkpoint=checkpoint)
    stock = known.path == STOCK

    def say(line: str) -> None:
        if not quiet:
            click.echo(line, err=True)

    held = look_at_source(source, kafka, stock, "availableNow" in options, say)
    if out is not None:
        make_out_dir(out)

    from windtunnel.spark_impl.job import (
        job_path,
        kafka_job_rows,
        kafka_records,
        records_source,
        run_job,
    )
    from windtunnel.spark_impl.session import spark_session

    ended = kafka is None and not no_end and not stock  # stock Spark has no end of input
    spark = spark_session(master, remote)
    _quiet_logs(spark)
    if kafka is not None:
        raw, reader = kafka_records(spark, bootstrap=kafka[0], topic=kafka[1], reader="auto")
        rows = kafka_job_rows(raw)
        say(f"kafka: reading topic {kafka[1]} with {KAFKA_READER_NAMES[reader]}")
    else:
        rows = records_source(spark, source, rows_per_batch=rows_per_batch, end_of_input=ended)
    if explain:
        click.echo(job_path(job_spec, rows, target, clock=clock, checkpoint=checkpoint)
                   .explain(checkpoint))
        return
    if stock:
        say("profile spark: stock Spark's withWatermark + window(); late rows are dropped "
            "without a trace (no drop rows)")
    total = None
    if held.records is not None and "availableNow" in options:
        total = held.records + (1 if ended else 0)  # and the end row
    out_rows = [0]

    with Progress(job_spec.name, total, "rows", enabled=not quiet) as bar:

        def show(batch: Any) -> None:
            out_rows[0] += batch.rows_out
            bar.advance(
                max(batch.rows_in, 0),
                f"batch {batch.batch_id}: {batch.rows_in} rows in, {batch.rows_out} out "
                f"({batch.duration_ms} ms; total {bar.done + max(batch.rows_in, 0)} in, "
                f"{out_rows[0]} out)",
            )

        report = run_job(
            job_spec, rows, target, clock=clock, tick_ms=tick_ms, trigger=trigger,
            checkpoint=checkpoint, timeout_s=timeout_s, on_batch=show, sample=held.sample,
        )
    where = f" to {out}" if out else ""
    kept = (f"checkpoint {report.checkpoint}" if report.checkpoint
            else "no checkpoint kept: give --checkpoint DIR to resume")
    click.echo(
        f"{job_spec.name}: {len(report.batches)} micro-batches, {report.rows_in} rows in, "
        f"{report.rows_out} outputs{where} ({report.path} path; {kept})",
        err=True,
    )
    for line in end_notes(report, held, ended=ended, kafka=kafka is not None,
                          stock=report.path == STOCK, available_now="availableNow" in options):
        click.echo(line, err=True)


def _quiet_logs(spark: Any) -> None:
    with contextlib.suppress(Exception):  # Connect sessions have no SparkContext
        spark.sparkContext.setLogLevel("ERROR")
