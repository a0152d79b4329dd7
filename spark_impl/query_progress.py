"""A streaming job's micro-batches as it reports them: rows in (from the source) and rows
out (counted by an ``observe`` metric the job attaches, so every sink reports them)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

OUT_METRIC = "windtunnel_rows_out"
"""The name of the ``DataFrame.observe`` metric counting a micro-batch's output rows."""


@dataclass(frozen=True, slots=True)
class BatchProgress:
    """One finished micro-batch: its id, rows read from the source, output rows written."""

    batch_id: int
    rows_in: int
    rows_out: int
    duration_ms: int


def collect_progress(
    query: Any, seen: list[BatchProgress], on_batch: Callable[[BatchProgress], None] | None
) -> bool:
    """Report new micro-batches with data; True when a micro-batch after the last reported
    one had neither input nor output."""
    done = {b.batch_id for b in seen}
    idle = False
    for progress in query.recentProgress:
        data = progress if isinstance(progress, dict) else json.loads(progress.json)
        batch_id = int(data.get("batchId", -1))
        if batch_id in done or batch_id < 0:
            continue
        read = rows_in(progress, data)
        written = rows_out(data)
        if read == 0 and written == 0:  # no-data batches are not reported
            idle = idle or (bool(seen) and batch_id > max(b.batch_id for b in seen))
            continue
        done.add(batch_id)
        entry = BatchProgress(
            batch_id,
            read,
            written,
            int((data.get("durationMs") or {}).get("triggerExecution", 0)),
        )
        seen.append(entry)
        if on_batch is not None:
            on_batch(entry)
    return idle


def rows_in(progress: Any, data: dict[str, Any]) -> int:
    """Rows read in a micro-batch (Spark Connect leaves the total empty: sum the sources)."""
    if data.get("numInputRows") is not None:
        return int(data["numInputRows"])
    return sum(int(source.get("numInputRows") or 0) for source in data.get("sources") or [])


def rows_out(data: dict[str, Any]) -> int:
    """Output rows of a micro-batch, from the ``observe`` metric run_job attaches."""
    metric = (data.get("observedMetrics") or {}).get(OUT_METRIC)
    if metric is None:
        return 0
    return count_in(metric)


def count_in(metric: Any) -> int:
    """The count inside an observed-metric value: a Row, a dict (``rows``), or Spark
    Connect's JSON form (``{"values": [n], "schema": ...}``)."""
    if hasattr(metric, "asDict"):
        metric = metric.asDict()
    if isinstance(metric, dict):
        for key in ("rows", "values"):
            if key in metric:
                return count_in(metric[key])
        return 0
    if isinstance(metric, list | tuple):
        return count_in(metric[0]) if metric else 0
    return int(metric or 0)
