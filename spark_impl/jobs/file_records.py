"""A ``spark-dir`` input read by Spark's own JSON file source, on the JVM (no Python workers).

``windtunnel generate --format spark-dir`` writes one JSON lines file per micro-batch, each
file's modification time strictly later than the one before, listed in ``_batches.json``.
Spark's file source with ``maxFilesPerTrigger=1`` reads files oldest first, one per
micro-batch: the micro-batches of the Python data source (one file each, in name order).
That holds only when the times increase in name order and every file is listed; then
:func:`jvm_records` stages the input (:func:`staged_dir`) and reads it, else it returns None
and the caller reads with the Python data source.

The end row (``kind = end``, ``after_seq`` the last record's ``seq``, ``arrival_ms`` the
largest arrival of the last file, as the Python source sends it) is appended to the staged
copy of the last file, so it rides in the last micro-batch.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from windtunnel.spark_impl.schema import END, EVENT

MANIFEST = "_batches.json"
RAW_DDL = "kind string, seq long, arrival_ms long, after_seq long, value string"
"""The columns read from each line: a record's ``seq``, ``arrival_ms`` and ``value`` (the
payload as JSON text); ``kind`` and ``after_seq`` only on the end row."""
NEVER_TOO_OLD = "365000d"
"""Spark's file source skips files older than ``maxFileAge`` (7 days) before the newest;
arrival times may span more."""


def ordered_files(path: Path) -> list[Path] | None:
    """The ``*.jsonl`` files of a ``spark-dir`` directory in name order when the file source
    reads them in that order, one per micro-batch: the manifest lists exactly these files,
    their modification times (ms, as Spark sees them) strictly increase in name order, and
    the first line of the first file is a record with a ``value``. Else None."""
    manifest = path / MANIFEST
    files = sorted(p for p in path.glob("*.jsonl") if not p.name.startswith(("_", ".")))
    if not files or not manifest.is_file():
        return None
    try:
        listed = [entry["file"] for entry in json.loads(manifest.read_text(encoding="utf-8"))]
        times = [p.stat().st_mtime_ns // 1_000_000 for p in files]
        with files[0].open("rb") as first:
            record = json.loads(first.readline() or b"{}")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if listed != [p.name for p in files] or not isinstance(record, dict) or "value" not in record:
        return None
    if any(later <= earlier for earlier, later in itertools.pairwise(times)):
        return None
    return files


def end_line(last: Path) -> bytes:
    """The end row after the records of ``last`` (their largest ``seq`` and ``arrival_ms``)."""
    seqs, arrivals = [], []
    with last.open("rb") as lines:
        for line in lines:
            if line.strip():
                record = json.loads(line)
                seqs.append(record.get("seq"))
                arrivals.append(record.get("arrival_ms"))
    seq = max((s for s in seqs if s is not None), default=None)
    arrival = max((a for a in arrivals if a is not None), default=None)
    row = {"kind": END, "after_seq": seq, "arrival_ms": arrival}
    return (json.dumps(row) + "\n").encode()


def staged_dir(files: list[Path], end_of_input: bool) -> Path | None:
    """A directory the file source reads: hard links to ``files`` (the same modification
    times), the last one copied with the end row appended when ``end_of_input``. Its path
    depends only on the files (names, sizes, times) and ``end_of_input``, so a run resumed
    from its checkpoint finds the files it read under the same paths. None when the files
    cannot be linked (another file system)."""
    identity = hashlib.sha256(repr((
        end_of_input, [(str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns) for p in files]
    )).encode()).hexdigest()[:20]
    target = Path(tempfile.gettempdir()) / f"windtunnel-records-{identity}"
    if target.is_dir():
        return target
    building = Path(tempfile.mkdtemp(prefix=target.name + "-", dir=target.parent))
    try:
        for index, source in enumerate(files):
            staged = building / source.name
            if end_of_input and index == len(files) - 1:
                shutil.copyfile(source, staged)
                with staged.open("ab") as out:
                    out.write(end_line(source))
                stamp = source.stat().st_mtime_ns
                os.utime(staged, ns=(stamp, stamp))
            else:
                os.link(source, staged)
        os.rename(building, target)
    except OSError:  # not linkable (another file system), or staged meanwhile by another run
        shutil.rmtree(building, ignore_errors=True)
        return target if target.is_dir() else None
    return target


def jvm_records(spark: Any, path: Path, *, end_of_input: bool) -> Any:
    """Job input rows (``sources.JOB_INPUT_DDL``) of the ``spark-dir`` directory ``path``
    read by Spark's JSON file source, or None when that would not give the Python data
    source's micro-batches (see the module docstring)."""
    from pyspark.sql import functions as F

    files = ordered_files(path)
    staged = None if files is None else staged_dir(files, end_of_input)
    if staged is None:
        return None
    raw = (
        spark.readStream.schema(RAW_DDL)
        .option("maxFilesPerTrigger", 1)
        .option("maxFileAge", NEVER_TOO_OLD)
        .json(str(staged))
    )
    return raw.select(
        F.coalesce(F.col("kind"), F.lit(EVENT)).alias("kind"),
        F.when(F.col("kind").isNull(), F.col("seq")).alias("seq"),
        "arrival_ms",
        F.when(F.col("kind").isNotNull(), F.col("after_seq")).alias("after_seq"),
        F.col("value").alias("payload"),
    )
