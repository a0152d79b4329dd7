"""The warm-up whose driver JVM writes the class archive (:mod:`.class_archive`) as it exits.

``python -m windtunnel.spark_impl.jvm.warm_up OPTIONS CONF_JSON`` starts a local session with
the settings ``CONF_JSON`` (the session's that asked for the archive) and the driver's Java
options ``OPTIONS`` (``-XX:ArchiveClassesAtExit=...``), and runs what a windowed job loads: a
streaming query over Spark's JSON file source (the ``spark-dir`` reader) with an event-time
watermark and a window aggregation kept in the session's state store, micro-batches handed to
``foreachBatch`` and written as Parquet and JSON, then a batch read back. Its own files live
in a temporary folder, removed at the end; nothing is printed.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FILES = 3
EVENTS_PER_FILE = 200
KEYS = 20


def write_input(folder: Path) -> None:
    """``FILES`` JSON lines files of ``EVENTS_PER_FILE`` events (``ts`` ms, ``key``, ``amount``),
    one second of event time each, their modification times increasing."""
    folder.mkdir(parents=True)
    for index in range(FILES):
        path = folder / f"batch-{index:08d}.jsonl"
        lines = []
        for offset in range(EVENTS_PER_FILE):
            seq = index * EVENTS_PER_FILE + offset
            ts_ms = 1_767_225_600_000 + seq * (1000 // EVENTS_PER_FILE + 1)
            lines.append(json.dumps({"ts": ts_ms, "key": f"k{seq % KEYS}", "amount": seq % 97}))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        os.utime(path, ns=(1_700_000_000_000_000_000 + index * 10**9,) * 2)


def workload(spark: Any, folder: Path) -> int:
    """The streaming query and the read back (see the module docstring); the rows read back."""
    from pyspark.sql import functions as F

    write_input(folder / "in")
    events = (
        spark.readStream.schema("ts long, key string, amount long")
        .option("maxFilesPerTrigger", 1)
        .json(str(folder / "in"))
        .withColumn("time", F.timestamp_millis("ts"))
        .withWatermark("time", "2 seconds")
        .groupBy(F.window("time", "1 second"), "key")
        .agg(F.count("*").alias("n"), F.sum("amount").alias("total"), F.avg("amount"))
    )

    def write(batch: Any, batch_id: int) -> None:
        batch.collect()
        batch.write.mode("append").parquet(str(folder / "out-parquet"))
        batch.write.mode("append").json(str(folder / "out-json"))

    query = (
        events.writeStream.outputMode("append")
        .foreachBatch(write)
        .option("checkpointLocation", str(folder / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return int(spark.read.parquet(str(folder / "out-parquet")).count())


def warm_up(java_options: str, conf: Mapping[str, str]) -> int:
    """Run the workload in a local session with ``conf`` and the driver's ``java_options``;
    the JVM writes the archive when this process exits. Returns the rows read back."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]").appName("windtunnel-warm-up")
    settings = {**conf, "spark.sql.shuffle.partitions": "2"}  # a few tasks per stage
    settings["spark.driver.extraJavaOptions"] = " ".join(
        o for o in (conf.get("spark.driver.extraJavaOptions"), java_options) if o
    )
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory(prefix="windtunnel-warm-up-") as scratch:
        rows = workload(spark, Path(scratch))
    spark.stop()
    return rows


def start(java_options: str, conf: Mapping[str, str], wait: bool = False) -> int | None:
    """Run :func:`warm_up` in a new process with this interpreter: in the background at a low
    CPU priority (nice 10), detached and silent, or, with ``wait``, in the foreground (its exit
    status is returned; the JVM may still be writing the archive)."""
    command = [sys.executable, "-m", "windtunnel.spark_impl.jvm.warm_up", java_options,
               json.dumps(dict(conf))]
    quiet: dict[str, Any] = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL,
                             "stderr": subprocess.DEVNULL}
    if wait:
        return subprocess.run(command, check=False, **quiet).returncode
    posix = os.name == "posix"
    subprocess.Popen(command, start_new_session=posix,
                     preexec_fn=_lower_priority if posix else None, **quiet)
    return None


def _lower_priority() -> None:
    with contextlib.suppress(OSError):
        os.nice(10)


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    warm_up(sys.argv[1], json.loads(sys.argv[2]))
