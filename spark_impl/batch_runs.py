"""Running the fast path's query: start it, follow its micro-batches, wait for its end.

Split from :mod:`windtunnel.spark_impl.batch_exact` (which re-exports these names).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from windtunnel.spark_impl.batch_state import BatchStateStore

STATE_DIR = "windtunnel-batch-state"
"""The state versions' directory inside the query's checkpoint directory."""


@dataclass(frozen=True, slots=True)
class BatchRun:
    """One finished micro-batch of the fast path (rows in from Spark's progress)."""

    batch_id: int
    rows_in: int
    rows_out: int
    duration_ms: int


def start(
    df: Any,
    batches: Callable[[Any, int], None],
    checkpoint: str,
    trigger: dict[str, Any] | None = None,
) -> Any:
    """Start the streaming query running ``batches`` (an :class:`ExactBatches`) per
    micro-batch (default trigger ``availableNow``)."""
    writer = (
        df.writeStream.foreachBatch(batches)
        .option("checkpointLocation", checkpoint)
        .trigger(**(trigger or {"availableNow": True}))
    )
    return writer.start()


def state_dir_of(checkpoint: str) -> str:
    """Where the state versions of the query checkpointed at ``checkpoint`` live."""
    return str(Path(checkpoint) / STATE_DIR)


def progress(query: Any, state_dir: str, seen: set[int]) -> list[BatchRun]:
    """Micro-batches finished since ``seen`` (updated), with data or output."""
    store = BatchStateStore(state_dir)
    found: list[BatchRun] = []
    for item in query.recentProgress:
        data = item if isinstance(item, dict) else json.loads(item.json)
        batch_id = int(data.get("batchId", -1))
        if batch_id < 0 or batch_id in seen:
            continue
        rows_in = data.get("numInputRows")
        if rows_in is None:
            rows_in = sum(int(s.get("numInputRows") or 0) for s in data.get("sources") or [])
        try:
            rows_out, read = store.counts(batch_id)
        except FileNotFoundError:  # ran no micro-batch function (no new data)
            rows_out, read = 0, None
        if read is not None:  # the rows the step read: Spark counts the rows of a micro-batch
            rows_in = read  # read twice (a JVM task declined it, a Python step ran it) twice
        seen.add(batch_id)
        if rows_in or rows_out:
            duration = int((data.get("durationMs") or {}).get("triggerExecution", 0))
            found.append(BatchRun(batch_id, int(rows_in), rows_out, duration))
    return found


def follow(query: Any, timeout_s: float | None, collect: Callable[[], bool]) -> bool:
    """Poll ``query`` every half second until it ends, ``collect()`` (after each poll)
    returns True, or ``timeout_s`` passes; then ``collect()`` once more. Returns True when
    it timed out. The caller stops the query."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    timed_out = False
    while query.isActive:
        if deadline is not None and time.monotonic() >= deadline:
            timed_out = True
            break
        query.awaitTermination(0.5)
        if collect():
            break
    collect()
    return timed_out


def wait(
    query: Any, state_dir: str, timeout_s: float | None, on_batch: Callable[[BatchRun], None] | None
) -> tuple[list[BatchRun], bool, Any]:
    """Wait for ``query`` to end (or ``timeout_s``); (micro-batches, timed out, error)."""
    seen: set[int] = set()
    runs: list[BatchRun] = []

    def collect() -> bool:
        for run in progress(query, state_dir, seen):
            runs.append(run)
            if on_batch is not None:
                on_batch(run)
        return False

    try:
        timed_out = follow(query, timeout_s, collect)
        error = query.exception()
    finally:
        query.stop()
    return runs, timed_out, error


__all__ = ["STATE_DIR", "BatchRun", "follow", "progress", "start", "state_dir_of", "wait"]
