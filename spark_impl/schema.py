"""The operator's row formats: what goes into the window operator and what comes out.

Input rows (after :func:`windtunnel.spark_impl.general.operator.apply_window` prepared them):

==========  ======  ==========================================================================
column      type    meaning
==========  ======  ==========================================================================
bucket      int     hash bucket of the group key (control rows: one copy per bucket)
kind        string  ``event``, ``clock`` (the wall clock moves) or ``end`` (end of input)
seq         long    stream order of an event, 0, 1, 2, ... (null for control rows)
arrival_ms  long    wall clock (epoch ms) when the row arrived
after_seq   long    control rows: seq of the last event before them (null if none)
payload     string  the event's fields as a JSON object (null for control rows)
==========  ======  ==========================================================================

Output rows (:data:`OUTPUT_SCHEMA`), one per emission or drop, the contract's JSON
lines fields flattened: ``type`` (``emit``/``drop``), window bounds ``start_ms``/``end_ms``
(half-open ``[start_ms, end_ms)``) and ``start_offset``/``end_offset`` (count windows),
``group`` and ``row`` as JSON text, ``reason``, ``after_seq``, ``wall_ms``, ``partial``
(emissions), ``seq``, ``windows`` (JSON list of the missed windows) and ``message``
(drops); then three ordering columns: ``step`` (stream position of the input row that
produced the output: ``2*seq+1`` for an event, ``2*(after_seq+1)`` for a control row),
``group_first_seq`` (seq of the first event of the output's group) and ``emit_index``
(position among the outputs of that step in its bucket).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from windtunnel.oracle.model.results import (
    INT_COLUMNS,
    Drop,
    Emission,
    Output,
    WindowRef,
    to_jsonl_line,
)

EVENT = "event"
CLOCK = "clock"
END = "end"
KINDS = (EVENT, CLOCK, END)

CONSTANT = {"windtunnel_constant": True}
"""Metadata of a job input column that holds one value on every row because the source has
no such column (``kind``: every row an event; ``arrival_ms``, ``after_seq``: null). The
production operator leaves such a column out of the rows it reads; a column computed from
it loses the mark (Spark keeps metadata only through plain column references)."""

FIELD_PREFIX = "wt_field_"
"""Typed event columns kept beside the JSON payload (``dataframe_source`` in jobs/sources.py);
the production operator reads them directly."""

INPUT_COLUMNS = ("bucket", "kind", "seq", "arrival_ms", "after_seq", "payload")
INPUT_DDL = (
    "bucket int, kind string, seq long, arrival_ms long, after_seq long, payload string"
)
"""The prepared input rows (see the module docstring)."""

OUTPUT_COLUMNS = (
    "type",
    "start_ms",
    "end_ms",
    "start_offset",
    "end_offset",
    "group",
    "row",
    "reason",
    "after_seq",
    "wall_ms",
    "partial",
    "seq",
    "windows",
    "message",
    "step",
    "group_first_seq",
    "emit_index",
)
OUTPUT_DDL = (
    "type string, start_ms long, end_ms long, start_offset long, end_offset long, "
    "group string, row string, reason string, after_seq long, wall_ms long, partial boolean, "
    "seq long, windows string, message string, step long, group_first_seq long, emit_index long"
)
"""The Spark schema of the operator's output (see the module docstring)."""
OUTPUT_SCHEMA = OUTPUT_DDL


def to_json_text(value: Any) -> str:
    """JSON text as the oracle's JSON lines write values (``default=str``)."""
    return json.dumps(value, separators=(", ", ": "), default=str)


def event_step(seq: int) -> int:
    """Stream position of event ``seq``: events sit at odd positions."""
    return 2 * seq + 1


def control_step(after_seq: int | None) -> int:
    """Stream position of a control row after event ``after_seq`` (None: before any)."""
    return 0 if after_seq is None else 2 * (after_seq + 1)


def output_record(output: Output, step: int, group_first_seq: int | None, index: int) -> dict[str, Any]:
    """One output as a dict of :data:`OUTPUT_COLUMNS`."""
    record: dict[str, Any] = dict.fromkeys(OUTPUT_COLUMNS)
    record["type"] = output.type
    record["reason"] = output.reason
    record["step"] = step
    record["group_first_seq"] = group_first_seq
    record["emit_index"] = index
    if isinstance(output, Emission):
        ref = output.window
        record["start_ms"] = ref.start_ms
        record["end_ms"] = ref.end_ms
        record["start_offset"] = ref.start_offset
        record["end_offset"] = ref.end_offset
        record["group"] = to_json_text(output.group)
        record["row"] = to_json_text(dict(output.row))
        record["after_seq"] = output.after_seq
        record["wall_ms"] = output.wall_ms
        record["partial"] = output.partial
    else:
        record["seq"] = output.seq
        record["group"] = to_json_text(output.group)
        record["windows"] = to_json_text([w.to_json() for w in output.windows])
        record["message"] = output.message
        if output.windows:
            first = output.windows[0]
            record["start_ms"] = first.start_ms
            record["end_ms"] = first.end_ms
            record["start_offset"] = first.start_offset
            record["end_offset"] = first.end_offset
    return record


def output_of(record: Mapping[str, Any]) -> Output:
    """Rebuild an Emission or Drop from one output row (a Row's ``asDict()`` or a dict)."""
    if record["type"] == "emit":
        return Emission(
            window=WindowRef(
                record["start_ms"], record["end_ms"], record["start_offset"], record["end_offset"]
            ),
            group=json.loads(record["group"]),
            row=json.loads(record["row"]),
            reason=record["reason"],
            after_seq=record["after_seq"],
            wall_ms=record["wall_ms"],
            partial=bool(record["partial"]),
        )
    return Drop(
        seq=record["seq"],
        reason=record["reason"],
        windows=tuple(WindowRef(**w) for w in json.loads(record["windows"])),
        message=record["message"] or "",
        group=None if record["group"] is None else json.loads(record["group"]),
    )


def print_order(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """Sort key putting output rows into the oracle's order where it is defined.

    By stream step; inside an event's step (one bucket) by emission index; inside a
    control step (every bucket) by window end, window start, group first-seen, index.
    """
    step = record["step"]
    if step % 2 == 1:
        return (step, 0, 0, 0, record["emit_index"])
    return (
        step,
        _or_min(record["end_ms"] if record["end_ms"] is not None else record["end_offset"]),
        _or_min(record["start_ms"] if record["start_ms"] is not None else record["start_offset"]),
        _or_min(record["group_first_seq"]),
        record["emit_index"],
    )


def _or_min(value: int | None) -> int:
    return -(2**63) if value is None else value


def outputs_in_order(records: Iterable[Mapping[str, Any]]) -> list[Output]:
    """Output rows as Emission/Drop values, sorted by :func:`print_order`."""
    return [output_of(r) for r in sorted(records, key=print_order)]


def canonical_lines(outputs: Iterable[Output]) -> list[str]:
    """Each output as its contract JSON line (values as the oracle prints them)."""
    return [to_jsonl_line(o) for o in outputs]


INT_OUTPUT_COLUMNS = frozenset((*INT_COLUMNS, "step", "group_first_seq", "emit_index"))
"""Output columns holding integers (nullable ``Int64`` in pandas)."""
