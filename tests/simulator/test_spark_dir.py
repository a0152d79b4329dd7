"""Spark's file source streams a spark-dir output one micro-batch per file, in order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from windtunnel.simulator.outputs import write_spark_dir
from windtunnel.simulator.workloads import simulate


@pytest.mark.spark
def test_spark_reads_one_micro_batch_per_file_in_order(tmp_path: Path) -> None:
    from windtunnel.spark_impl.session import spark_session

    spark = spark_session(shuffle_partitions=2)  # shared with other Spark tests; not stopped
    out = tmp_path / "stream"
    write_spark_dir(
        simulate("payments", events=1_000, seed=5, batch_size=250, late_fraction=0.05),
        out,
    )
    manifest = json.loads((out / "_batches.json").read_text())
    schema = "key STRING, value STRING, `partition` INT, `offset` LONG, `timestamp` LONG, seq LONG"
    stream = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(str(out))
    seen: list[tuple[int, list[int]]] = []

    def collect(frame: Any, batch_id: int) -> None:
        seen.append((batch_id, [row.seq for row in frame.orderBy("seq").collect()]))

    query = (
        stream.writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .start()
    )
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert [seqs for _, seqs in seen] == [
        list(range(m["first_seq"], m["last_seq"] + 1)) for m in manifest
    ]
