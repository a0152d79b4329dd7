"""Turning an oracle stream (scenario items) into the operator's input rows, micro-batch by micro-batch.

Micro-batches: each scenario ``Batch`` is one micro-batch; runs of lone events between
batches are cut into micro-batches of ``micro_batch`` events. ``Advance`` items join the
micro-batch being built; end of input rides in the last micro-batch.

Wall clock rows: with ``clock="exact"`` every wall-clock movement of the stream (an
``Advance`` or an event arriving later than the current wall clock) becomes a ``clock``
row at its stream position, so every bucket sees the wall clock move exactly where the
oracle does. With ``clock="batch"`` one ``clock`` row per micro-batch carries the
wall clock at its end (the granularity rule is in docs/spark.md). Every event row carries
the wall clock at its arrival (the stream's ``at`` or the current wall clock).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.fields import getter
from windtunnel.oracle.model.stream import (
    Advance,
    Batch,
    End,
    Event,
    Item,
    checked,
    without_watermarks,
)
from windtunnel.spark_impl.schema import CLOCK, END, EVENT, to_json_text

Row = tuple[int | None, str, int | None, int | None, int | None, str | None]
"""(bucket, kind, seq, arrival_ms, after_seq, payload): schema.INPUT_COLUMNS."""

CLOCK_MODES = ("exact", "batch")


def _canonical(value: Any) -> Any:
    """Scalars that Python treats as equal group keys written the same way (1, 1.0, True)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def bucket_of(values: Sequence[Any], buckets: int) -> int:
    """Stable hash bucket (0 .. buckets-1) of a group key's values; equal keys, equal bucket."""
    text = json.dumps([_canonical(v) for v in values], sort_keys=True, default=str)
    return zlib.crc32(text.encode()) % buckets


@dataclass(frozen=True, slots=True)
class Feed:
    """Micro-batches of input rows plus, for each, the seqs it holds (``seq_ranges``)."""

    batches: tuple[tuple[Row, ...], ...]
    seq_ranges: tuple[tuple[int, int], ...]
    """Half-open ``[first_seq, end_seq)`` of the events of each micro-batch."""
    items: tuple[tuple[Item, ...], ...]
    """The stream items of each micro-batch."""

    def batch_of_seq(self, seq: int | None) -> int | None:
        """Index of the micro-batch holding event ``seq`` (None for None)."""
        if seq is None:
            return None
        for index, (first, end) in enumerate(self.seq_ranges):
            if first <= seq < end:
                return index
        return None


def feed(
    items: Iterable[Item],
    group_by: Sequence[str],
    *,
    buckets: int,
    micro_batch: int = 1,
    start_wall_ms: int = 0,
    clock: str = "exact",
) -> Feed:
    """Input rows for ``items`` (validated; ``End`` implied), cut into micro-batches.

    Raises InvalidSpec for a bad ``micro_batch``, ``buckets`` or ``clock``, and
    InvalidStream (from :func:`checked`) for a malformed stream.
    """
    if isinstance(micro_batch, bool) or not isinstance(micro_batch, int) or micro_batch < 1:
        raise InvalidSpec("--micro-batch", micro_batch, "must be an integer >= 1", "give e.g. 10")
    if isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 1:
        raise InvalidSpec("buckets", buckets, "must be an integer >= 1", "give e.g. 4")
    if clock not in CLOCK_MODES:
        raise InvalidSpec("clock", clock, "unknown clock mode", f"use one of {CLOCK_MODES}")
    getters = [getter(p) for p in group_by]
    batches: list[tuple[Row, ...]] = []
    ranges: list[tuple[int, int]] = []
    current: list[Row] = []
    item_groups: list[tuple[Item, ...]] = []
    current_items: list[Item] = []
    events_in_current = 0
    first_seq = 0
    wall = start_wall_ms
    last_seq: int | None = None

    def close_batch() -> None:
        nonlocal current, events_in_current, first_seq, current_items
        if clock == "batch":
            current.append((None, CLOCK, None, wall, last_seq, None))
        batches.append(tuple(current))
        item_groups.append(tuple(current_items))
        current_items = []
        end_seq = first_seq + events_in_current
        ranges.append((first_seq, end_seq))
        first_seq = end_seq
        current = []
        events_in_current = 0

    def add_event(event: Event) -> None:
        nonlocal wall, last_seq, events_in_current
        if event.at_ms is not None and event.at_ms > wall:
            wall = event.at_ms
            if clock == "exact":
                current.append((None, CLOCK, None, wall, last_seq, None))
        payload = event.payload
        bucket = bucket_of([g(payload) for g in getters], buckets) if getters else 0
        current.append((bucket, EVENT, event.seq, wall, None, to_json_text(dict(payload))))
        last_seq = event.seq
        events_in_current += 1

    for item in without_watermarks(checked(items, start_wall_ms), "Spark"):
        if isinstance(item, End) and not current and batches:
            current_items = list(item_groups.pop()) + current_items
        if isinstance(item, Batch) and current:
            close_batch()
        current_items.append(item)
        if isinstance(item, Batch):
            for event in item.events:
                add_event(event)
            close_batch()
        elif isinstance(item, Event):
            add_event(item)
            if events_in_current >= micro_batch:
                close_batch()
        elif isinstance(item, Advance):
            if item.to_ms > wall:
                wall = item.to_ms
                if clock == "exact":
                    current.append((None, CLOCK, None, wall, last_seq, None))
        elif isinstance(item, End):
            if not current and batches:
                # ride in the last micro-batch: no extra micro-batch just for the end
                current = list(batches.pop())
                first_seq, _ = ranges.pop()
                events_in_current = sum(1 for r in current if r[1] == EVENT)
                if clock == "batch":
                    current.pop()
            current.append((None, END, None, wall, last_seq, None))
            close_batch()
    return Feed(tuple(batches), tuple(ranges), tuple(item_groups))
