"""The production operator's state lives on the checkpoint and is never silently lost.

A job over six micro-batches (two files of a Parquet stream each run), stopped after three
and resumed: from the same checkpoint, from a copy in another folder opened from another
working directory, through a ``file://`` URI; and with the state removed, corrupted, written
in another format or for another spec, where it must stop with one line naming the
checkpoint instead of starting from empty state.
"""

from __future__ import annotations

import os
import shutil
import struct
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from windtunnel.oracle import Aggregation, FixedWindows, Query
from windtunnel.oracle.engine import run
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.stream import Event
from windtunnel.spark_impl.schema import OUTPUT_DDL, canonical_lines, outputs_in_order

pytestmark = pytest.mark.spark

QUERY = Query(
    FixedWindows(10_000, on="ts", every_ms=5_000, tolerance_ms=2_000),
    group_by=("user",),
    aggregate=(Aggregation("n", "count"), Aggregation("total", "sum", "amount")),
)
BATCHES = 6
PER_BATCH = 40


def _table(batch: int) -> pa.Table:
    rng = np.random.default_rng(batch)
    seq = np.arange(batch * PER_BATCH, (batch + 1) * PER_BATCH, dtype=np.int64)
    arrival = 1_000 * seq
    ts = arrival - rng.integers(0, 8_000, PER_BATCH) * (rng.random(PER_BATCH) < 0.3)
    users = [f"u{int(k)}" for k in rng.integers(0, 5, PER_BATCH)]
    return pa.table({"seq": seq, "arrival_ms": arrival, "ts": ts, "user": users,
                     "amount": rng.integers(0, 100, PER_BATCH)})


def _write(directory: Path, batches: range) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for batch in batches:
        path = directory / f"b{batch:03d}.parquet"
        pq.write_table(_table(batch), path)
        os.utime(path, (1_700_000_000 + batch, 1_700_000_000 + batch))


def _oracle(batches: int) -> Counter[str]:
    events = []
    for batch in range(batches):
        for row in _table(batch).to_pylist():
            events.append(Event(row["seq"], {k: row[k] for k in ("ts", "user", "amount")},
                                row["arrival_ms"]))
    # a plain stream never ends: no end-of-input flush (the oracle's run implies one)
    kept = [o for o in run(QUERY, events).outputs if getattr(o, "reason", "") != "end_of_input"]
    return Counter(canonical_lines(kept))


def _run(spark: Any, source: Path, out: Path, checkpoint: str, query: Query = QUERY) -> Any:
    from windtunnel.spark_impl.job import Sink, run_job
    from windtunnel.spark_impl.jobs.sources import dataframe_source

    stream = spark.readStream.schema(
        "seq long, arrival_ms long, ts long, user string, amount long"
    ).option("maxFilesPerTrigger", 1).parquet(str(source))
    return run_job(query, dataframe_source(stream), Sink("parquet", path=str(out)),
                   checkpoint=checkpoint)


def _outputs(spark: Any, *dirs: Path) -> Counter[str]:
    rows = []
    for directory in dirs:
        rows += [r.asDict() for r in spark.read.schema(OUTPUT_DDL).parquet(str(directory)).collect()]
    return Counter(canonical_lines(outputs_in_order(rows)))


def test_a_copied_checkpoint_resumed_from_another_directory_continues_exactly(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "in"
    _write(source, range(3))
    first = _run(spark, source, tmp_path / "out-a", str(tmp_path / "ckpt"))
    assert [b.rows_in for b in first.batches] == [PER_BATCH] * 3
    moved = tmp_path / "elsewhere" / "ckpt-copy"
    shutil.copytree(tmp_path / "ckpt", moved)
    shutil.rmtree(tmp_path / "ckpt")  # nothing of the first run's folder is left to read
    _write(source, range(3, BATCHES))
    monkeypatch.chdir(tmp_path / "elsewhere")
    second = _run(spark, source, tmp_path / "out-b", "ckpt-copy")
    assert [b.batch_id for b in second.batches] == [3, 4, 5]
    assert _outputs(spark, tmp_path / "out-a", tmp_path / "out-b") == _oracle(BATCHES)
    assert not list(Path.cwd().glob("file*")), "state written beside the working directory"


def test_a_file_uri_checkpoint_keeps_the_state_inside_it(spark: Any, tmp_path: Path) -> None:
    source = tmp_path / "in"
    _write(source, range(BATCHES))
    checkpoint = (tmp_path / "ckpt").as_uri()
    _run(spark, source, tmp_path / "out", checkpoint)
    assert (tmp_path / "ckpt" / "windtunnel" / "FORMAT").is_file()
    assert _outputs(spark, tmp_path / "out") == _oracle(BATCHES)


def _slice_file(data: bytes) -> tuple[int, int, str, int, int, bytes]:
    """A slice file read by its documented layout (docs/spark.md, "State on the checkpoint"):
    magic, format, fingerprint, version, slice, the payload's length, the payload, and a
    CRC32 of the payload, big-endian; the file holds nothing after it."""
    magic, form = struct.unpack_from(">II", data, 0)
    (text_length,) = struct.unpack_from(">H", data, 8)
    at = 10 + text_length
    fingerprint = data[10:at].decode()
    version, slice_, length = struct.unpack_from(">qii", data, at)
    payload = data[at + 16: at + 16 + length]
    (crc,) = struct.unpack_from(">q", data, at + 16 + length)
    assert len(data) == at + 16 + length + 8, "bytes after the CRC"
    assert crc == zlib.crc32(payload)
    return magic, form, fingerprint, version, slice_, payload


def test_slice_files_keep_their_layout(spark: Any, tmp_path: Path) -> None:
    """Each slice file written per micro-batch (its payload built in place, lengths filled in
    afterwards) has the layout earlier versions wrote and read: a checkpoint of either reads
    in the other."""
    source = tmp_path / "in"
    _write(source, range(3))
    _run(spark, source, tmp_path / "out", str(tmp_path / "ckpt"))
    files = sorted((tmp_path / "ckpt" / "windtunnel" / "state").glob("*/slice-*"))
    assert files
    for path in files:
        magic, form, fingerprint, version, slice_, payload = _slice_file(path.read_bytes())
        assert (magic, form) == (0x5754534C, 1)
        assert fingerprint and version == int(path.parent.name)
        assert slice_ == int(path.name.removeprefix("slice-"))
        (lanes,) = struct.unpack_from(">i", payload, 0)
        at = 4
        for _ in range(lanes):  # per lane: its id, its state's length, its state
            _lane, length = struct.unpack_from(">qi", payload, at)
            at += 12 + length
        assert at == len(payload)


def test_local_files_have_no_side_files_and_a_copy_with_them_resumes_exactly(
    spark: Any, tmp_path: Path
) -> None:
    """On a local file system the state and output files are written without Hadoop's
    ``.crc`` side files (each costs a child process there); a checkpoint that has them, as
    one copied with Hadoop's own tools has, still resumes exactly."""
    source = tmp_path / "in"
    _write(source, range(3))
    _run(spark, source, tmp_path / "out-a", str(tmp_path / "ckpt"))
    assert not list((tmp_path / "ckpt" / "windtunnel").rglob("*.crc"))
    assert not list((tmp_path / "out-a").glob(".*.crc"))
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    local = jvm.org.apache.hadoop.fs.FileSystem.getLocal(conf)
    hadoop_path = jvm.org.apache.hadoop.fs.Path
    jvm.org.apache.hadoop.fs.FileUtil.copy(
        local, hadoop_path(str(tmp_path / "ckpt")), local, hadoop_path(str(tmp_path / "copy")),
        False, conf,
    )
    assert list((tmp_path / "copy" / "windtunnel").rglob(".slice-*.crc"))
    _write(source, range(3, BATCHES))
    _run(spark, source, tmp_path / "out-b", str(tmp_path / "copy"))
    assert _outputs(spark, tmp_path / "out-a", tmp_path / "out-b") == _oracle(BATCHES)


def test_a_finished_query_leaves_no_slice_state_in_the_tasks_memory(
    spark: Any, tmp_path: Path
) -> None:
    """Tasks keep their slices' state in memory between micro-batches; once the query stops
    they are dropped (in local mode the tasks' copy of that cache is not the driver's)."""
    from windtunnel.spark_impl.jvm.binding import load

    source = tmp_path / "in"
    _write(source, range(3))
    _run(spark, source, tmp_path / "out", str(tmp_path / "ckpt"))
    jvm = load(spark).jvm
    assert jvm is not None
    assert jvm.call("cachedSlices", spark._jsparkSession, str(tmp_path / "ckpt")) == 0


def _damaged(spark: Any, tmp_path: Path, damage: Any, query: Query = QUERY) -> str:
    source = tmp_path / "in"
    _write(source, range(3))
    _run(spark, source, tmp_path / "out", str(tmp_path / "ckpt"))
    damage(tmp_path / "ckpt" / "windtunnel")
    _write(source, range(3, BATCHES))
    with pytest.raises(InvalidInput) as caught:
        _run(spark, source, tmp_path / "out", str(tmp_path / "ckpt"), query)
    line = str(caught.value)
    assert "\n" not in line
    return line


def _corrupt(root: Path) -> None:
    newest = max((root / "state").iterdir(), key=lambda p: int(p.name))
    target = next(newest.glob("slice-*"))
    data = bytearray(target.read_bytes())
    data[-12] ^= 0xFF
    target.write_bytes(bytes(data))


def _other_format(root: Path) -> None:
    """FORMAT as another windtunnel version would write it (with a checksum of its own)."""
    text = (root / "FORMAT").read_text()
    (root / "FORMAT").write_text(text.replace("format=1", "format=99"))
    (root / ".FORMAT.crc").unlink(missing_ok=True)


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda root: shutil.rmtree(root), "but no windtunnel state"),
        (lambda root: shutil.rmtree(max((root / "state").iterdir(), key=lambda p: int(p.name))),
         "state of that micro-batch is missing"),
        (_corrupt, "corrupt"),
        (_other_format, "format 99"),
    ],
    ids=["state-removed", "version-removed", "corrupt", "other-format"],
)
def test_a_resume_without_usable_state_stops_with_one_line(
    spark: Any, tmp_path: Path, damage: Any, says: str
) -> None:
    line = _damaged(spark, tmp_path, damage)
    assert says in line
    assert str(tmp_path / "ckpt") in line


def test_a_resume_with_another_spec_stops_with_one_line(spark: Any, tmp_path: Path) -> None:
    other = Query(FixedWindows(20_000, on="ts"), group_by=("user",),
                  aggregate=(Aggregation("n", "count"),))
    line = _damaged(spark, tmp_path, lambda root: None, other)
    assert "written for another query" in line


def _chains(root: Path, back: int = 0) -> list[list[int]]:
    """A COMMIT's chains (the newest's, or the one ``back`` before it): per slice, the versions
    of its files, its snapshot first."""
    commits = sorted((p for p in (root / "state").iterdir() if (p / "COMMIT").is_file()),
                     key=lambda p: int(p.name))
    text = (commits[-1 - back] / "COMMIT").read_text()
    line = next(x for x in text.splitlines() if x.startswith("chains="))
    return [[int(v) for v in part.split(":") if v] for part in line.removeprefix("chains=").split(",")]


def _lose_a_delta(root: Path) -> Path:
    slice_, chain = next((i, c) for i, c in enumerate(_chains(root)) if len(c) > 2)
    target = root / "state" / str(chain[1]) / f"slice-{slice_}"
    target.unlink()
    return target


def _corrupt_a_delta(root: Path) -> Path:
    slice_, chain = next((i, c) for i, c in enumerate(_chains(root)) if len(c) > 2)
    target = root / "state" / str(chain[1]) / f"slice-{slice_}"
    data = bytearray(target.read_bytes())
    data[-12] ^= 0xFF
    target.write_bytes(bytes(data))
    return target


@pytest.mark.parametrize(("damage", "says"), [(_lose_a_delta, "is missing"),
                                             (_corrupt_a_delta, "is corrupt")],
                         ids=["lost", "corrupt"])
def test_a_lost_or_corrupt_delta_stops_the_resume_with_one_line_naming_it(
    spark: Any, tmp_path: Path, damage: Any, says: str
) -> None:
    """A slice's state is its snapshot and every delta after it: one missing or damaged
    delta (not the newest) is never skipped."""
    damaged: list[Path] = []
    line = _damaged(spark, tmp_path, lambda root: damaged.append(damage(root)))
    assert f"{damaged[0]} {says}" in line


def test_snapshots_fold_the_deltas_and_what_they_cover_is_removed(
    spark: Any, tmp_path: Path
) -> None:
    """With a snapshot every second delta a run crosses several snapshots, resumes exactly,
    and keeps only the files the last two versions' chains hold."""
    setting = "spark.windtunnel.state.deltasPerSnapshot"
    spark.conf.set(setting, "2")
    try:
        source = tmp_path / "in"
        _write(source, range(3))
        _run(spark, source, tmp_path / "out-a", str(tmp_path / "ckpt"))
        _write(source, range(3, BATCHES))
        _run(spark, source, tmp_path / "out-b", str(tmp_path / "ckpt"))
    finally:
        spark.conf.unset(setting)
    assert _outputs(spark, tmp_path / "out-a", tmp_path / "out-b") == _oracle(BATCHES)
    root = tmp_path / "ckpt" / "windtunnel"
    chains = _chains(root)
    assert all(1 <= len(chain) <= 3 for chain in chains)
    assert any(chain[0] > 0 for chain in chains), "no snapshot after the first"
    kept = {f"{version}/slice-{slice_}" for back in (0, 1)
            for slice_, chain in enumerate(_chains(root, back)) for version in chain}
    assert {f"{p.parent.name}/{p.name}" for p in (root / "state").glob("*/slice-*")} == kept
