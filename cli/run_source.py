"""What ``windtunnel run`` says about its source before and after the job: the broker is
reachable (at once, not after the client's timeouts), how many records the source holds
(for progress, and to say if fewer were read), a payload sample for ``profile: spark``
(stock Spark needs typed columns), and, at the end, windows the run left open."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from windtunnel.oracle.model.errors import InvalidInput, MissingExtra
from windtunnel.oracle.model.extras import requires_extra

TANSU_NOTE = (
    "its offset listing stops at the start of each partition's last record batch (the local "
    "test broker, Tansu, does this; Apache Kafka does not); the run reads to the fetched end"
)


@dataclass(frozen=True, slots=True)
class Held:
    """What the source holds when the run starts: ``records`` (None: unknown) and a
    ``sample`` of payloads (only for ``profile: spark``)."""

    records: int | None = None
    sample: Sequence[Mapping[str, Any]] = field(default_factory=tuple)


def look_at_source(
    source: str,
    kafka: tuple[str, str] | None,
    stock: bool,
    available_now: bool,
    say: Callable[[str], None],
) -> Held:
    """Look at ``source`` before Spark starts (see the module docstring). Raises
    EngineUnavailable when nothing answers at the Kafka address, InvalidInput when an
    availableNow run's topic does not exist."""
    if kafka is None:
        from windtunnel.spark_impl.jobs.peek import records_sample, records_total

        return Held(records_total(source), records_sample(source) if stock else ())
    from windtunnel.spark_impl.jobs.kafka_ends import probe_broker

    bootstrap, topic = kafka
    probe_broker(bootstrap)
    try:
        with requires_extra("kafka", "counting the topic's records"):
            from windtunnel.spark_impl.jobs.kafka_ends import topic_ends

            ends = topic_ends(bootstrap, topic)
    except MissingExtra:  # Spark's connector may read it anyway: no count then
        return Held()
    if ends is None:
        if available_now:
            raise InvalidInput(
                "SOURCE", f"kafka://{bootstrap}/{topic}", f"topic {topic} does not exist on the broker",
                "produce to it first (windtunnel generate --format kafka --topic NAME) or fix the name",
            )  # fmt: skip
        say(f"kafka: topic {topic} does not exist yet; the run reads it once it does")
        return Held()
    say(f"kafka: topic {topic} holds {ends.records:,} records in {len(ends.fetched)} partitions")
    if ends.unlisted:
        say(f"kafka: the broker lists {ends.records - ends.unlisted:,} of them: {TANSU_NOTE}")
    sample: Sequence[Mapping[str, Any]] = ()
    if stock:
        from windtunnel.spark_impl.jobs.peek import kafka_sample

        sample = kafka_sample(bootstrap, topic)
    return Held(ends.records, sample)


def make_out_dir(out: str) -> None:
    """Create the output directory (and its parents) before the run."""
    try:
        Path(out).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(
            "--out", out, f"cannot be created ({exc.strerror or exc})", "give a writable directory"
        ) from None


def end_notes(
    report: Any, held: Held, *, ended: bool, kafka: bool, stock: bool, available_now: bool
) -> list[str]:
    """Lines after the run: records the source held but the run did not read, and windows
    still open (never for an input that ended: its end flushed them)."""
    notes = []
    records_in = report.rows_in - (1 if ended and report.rows_in else 0)  # the end row
    if available_now and held.records is not None and 0 <= records_in < held.records:
        notes.append(f"read {records_in:,} of the {held.records:,} records the source held at "
                     "the start")
    if ended or report.rows_in <= 0:
        return notes
    counted = getattr(report, "open_windows", None)
    if stock:
        what = ("windows were" if counted is None else
                f"{counted:,} window{' was' if counted == 1 else 's were'}")
        notes.append(
            f"{what} still open when the input stopped: stock Spark emits a window once the "
            "watermark passes its end and has no end of input, so they are not emitted"
        )
    else:
        why = "Kafka has no end of input" if kafka else "--no-end: the input has no end"
        what = ("windows still open when the run stopped (those of the latest events, at least) "
                "were" if counted is None else
                f"{counted:,} window{'' if counted == 1 else 's'} still open when the run stopped "
                f"{'was' if counted == 1 else 'were'}")
        notes.append(
            f"{what} not emitted: {why}; they close when later records move the clock past them"
        )
    if report.checkpoint:
        notes.append(f"their state is kept in {report.checkpoint}: run again with --checkpoint "
                     f"{report.checkpoint} to go on")
    else:
        notes.append("without --checkpoint their state went with this run")
    return notes
