"""The production operator on the system clock: the wall clock is read once per micro-batch;
event time, late drops and the end-of-input flush are the oracle's; idle windows close on
the system clock even when no data arrives (a ``rate`` source makes the trigger run)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from windtunnel.oracle import Aggregation, FixedWindows, Query
from windtunnel.spark_impl.schema import OUTPUT_COLUMNS

pytestmark = pytest.mark.spark


def _rows(directory: Path) -> list[dict[str, Any]]:
    rows = []
    for path in sorted(directory.glob("part-*.json")):
        rows += [dict.fromkeys(OUTPUT_COLUMNS) | json.loads(line)
                 for line in path.read_text().splitlines() if line]
    return rows


def test_idle_windows_close_on_the_system_clock_while_no_data_arrives(
    spark: Any, tmp_path: Path
) -> None:
    from windtunnel.spark_impl.job import Sink, job_path, run_job
    from windtunnel.spark_impl.jobs.sources import dataframe_source

    # one micro-batch of three events in a day-long window: only the idle timeout (1 s of
    # system time without delivery) can close it, while the stream stays silent
    source = tmp_path / "in"
    source.mkdir()
    pq.write_table(pa.table({"seq": [0, 1, 2], "arrival_ms": [0, 0, 0], "ts": [5, 6, 7],
                             "user": ["a", "b", "a"]}), source / "b0.parquet")
    query = Query(FixedWindows(86_400_000, on="ts", idle_timeout_ms=1000), group_by=("user",),
                  aggregate=(Aggregation("n", "count"),))
    stream = spark.readStream.schema("seq long, arrival_ms long, ts long, user string").parquet(str(source))
    rows = dataframe_source(stream)
    sink = Sink("json", path=str(tmp_path / "out"))
    assert job_path(query, rows, sink, clock="system").production
    started_ms = int(time.time() * 1000)
    report = run_job(query, rows, sink, clock="system", tick_ms=250, trigger="300ms",
                     timeout_s=12, checkpoint=str(tmp_path / "ckpt"))
    assert report.timed_out
    emitted = sorted((r["group"], r["row"], r["reason"], r["partial"]) for r in _rows(tmp_path / "out"))
    assert emitted == [('"a"', '{"n": 2}', "idle_timeout", True), ('"b"', '{"n": 1}', "idle_timeout", True)]
    walls = [r["wall_ms"] for r in _rows(tmp_path / "out")]
    assert min(walls) >= started_ms + 1000
    closing = [b for b in report.batches if b.rows_out]
    assert closing and closing[0].rows_in == 0, "the idle windows closed in a micro-batch without data"
    assert os.listdir(tmp_path / "ckpt" / "windtunnel")
