"""Output formats: scenario files replay with their ground truth; jsonl, Parquet, spark-dir."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from windtunnel.oracle.engine import replay
from windtunnel.oracle.expect import check
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.scenario import load_scenario
from windtunnel.simulator.murmur2 import partition_for
from windtunnel.simulator.outputs import WRITERS
from windtunnel.simulator.workloads import simulate

KNOBS: dict[str, Any] = {
    "events": 3_000,
    "seed": 21,
    "late_fraction": 0.05,
    "delay": "exponential",
    "delay_mean": "500",
    "null_fraction": 0.01,
    "duplicate_fraction": 0.01,
    "batch_size": 100,
}


def write(fmt: str, path: Path, workload: str = "iot", **knobs: Any) -> Path:
    WRITERS[fmt](simulate(workload, **{**KNOBS, **knobs}), path, lambda n: None)
    return path


def digest(path: Path) -> str:
    if not path.is_dir():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    h = hashlib.sha256()
    for f in sorted(path.iterdir()):
        h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
@pytest.mark.parametrize("workload", ["iot", "auth"])
def test_scenario_replays_and_its_ground_truth_holds(
    tmp_path: Path, suffix: str, workload: str
) -> None:
    path = write("scenario", tmp_path / f"s{suffix}", workload, events=600)
    scenario = load_scenario(path)
    assert scenario.expect is not None and scenario.expect.drops
    assert {r for _, r in scenario.expect.drops} == {"late", "null_time"}
    assert check(scenario.expect, replay(scenario).outputs) == []


@pytest.mark.parametrize(
    ("fmt", "suffix"),
    [
        ("scenario", ".yaml"),
        ("scenario", ".json"),
        ("jsonl", ""),
        ("parquet", ""),
        ("spark-dir", ""),
    ],
)
def test_same_seed_same_bytes(tmp_path: Path, fmt: str, suffix: str) -> None:
    a = write(fmt, tmp_path / f"a{suffix}")
    b = write(fmt, tmp_path / f"b{suffix}")
    c = write(fmt, tmp_path / f"c{suffix}", seed=22)
    assert digest(a) == digest(b)
    assert digest(a) != digest(c)


def test_jsonl_has_the_kafka_record_columns(tmp_path: Path) -> None:
    path = write("jsonl", tmp_path / "r.jsonl", "payments", timestamp_type="CreateTime")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 3_000
    assert list(rows[0]) == [
        "key", "value", "topic", "partition", "offset", "timestamp", "timestampType",
        "headers", "seq", "arrival_ms", "truth", "tag",
    ]  # fmt: skip
    offsets: dict[int, int] = {}
    for row in rows:
        assert row["partition"] == partition_for(row["key"].encode(), 3)
        assert row["offset"] == offsets.get(row["partition"], 0)
        offsets[row["partition"]] = row["offset"] + 1
        value = json.loads(row["value"])
        assert value["user_id"] == row["key"]
        assert row["timestamp"] == (value["ts"] if value["ts"] is not None else row["arrival_ms"])
        headers = {h["key"]: h["value"] for h in row["headers"]}
        assert headers["wt-seq"] == str(row["seq"]) and headers["wt-truth"] == row["truth"]
    assert [r["seq"] for r in rows] == list(range(3_000))
    assert any(r["tag"] == "duplicate" for r in rows)


def test_log_append_time_stamps_arrival(tmp_path: Path) -> None:
    path = write("jsonl", tmp_path / "r.jsonl", timestamp_type="LogAppendTime")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert all(r["timestamp"] == r["arrival_ms"] and r["timestampType"] == 1 for r in rows)


def test_parquet_matches_jsonl(tmp_path: Path) -> None:
    rows = [json.loads(x) for x in write("jsonl", tmp_path / "r.jsonl").read_text().splitlines()]
    table = pq.read_table(write("parquet", tmp_path / "r.parquet"))
    assert table.schema.field("key").type == "binary"
    assert str(table.schema.field("timestamp").type) == "timestamp[ms, tz=UTC]"
    data = table.to_pylist()
    assert len(data) == len(rows)
    for got, want in zip(data[:200], rows[:200], strict=True):
        assert got["key"].decode() == want["key"] and got["value"].decode() == want["value"]
        assert int(got["timestamp"].timestamp() * 1000) == want["timestamp"]
        assert [(h["key"], h["value"].decode()) for h in got["headers"]] == [
            (h["key"], h["value"]) for h in want["headers"]
        ]
        assert (got["seq"], got["arrival_ms"], got["offset"]) == (
            want["seq"], want["arrival_ms"], want["offset"],
        )  # fmt: skip


def test_spark_dir_has_one_file_per_batch_in_order(tmp_path: Path) -> None:
    out = write("spark-dir", tmp_path / "d")
    manifest = json.loads((out / "_batches.json").read_text())
    files = sorted(p for p in out.iterdir() if not p.name.startswith("_"))
    assert [m["file"] for m in manifest] == [p.name for p in files]
    assert len(files) == 30
    mtimes = [p.stat().st_mtime_ns for p in files]
    assert mtimes == sorted(set(mtimes))
    seqs = [json.loads(line)["seq"] for p in files for line in p.read_text().splitlines()]
    assert seqs == list(range(3_000))
    assert all(m["records"] == 100 for m in manifest)


def test_spark_dir_needs_batches_and_an_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as info:
        write("spark-dir", tmp_path / "d", batch_size=None)
    assert info.value.field == "batch_size"
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "x").write_text("")
    with pytest.raises(InvalidInput) as info:
        write("spark-dir", tmp_path / "e")
    assert info.value.field == "out"


SUFFIXES = {"scenario": ".yaml", "jsonl": ".jsonl", "parquet": ".parquet", "spark-dir": ""}


@pytest.mark.process  # a fresh Python
def test_same_bytes_in_another_process_with_another_hash_seed(tmp_path: Path) -> None:
    # determinism must not hang on this process: string hashing, set order, cached pools
    import os
    import subprocess
    import sys

    knobs = {**KNOBS, "sparse_keys": 20, "bridge_fraction": 0.01, "clock_skew": "1s"}
    script = (
        "import sys; from pathlib import Path\n"
        "from windtunnel.simulator.outputs import WRITERS\n"
        "from windtunnel.simulator.workloads import simulate\n"
        f"knobs = {knobs!r}\n"
        "for fmt, suffix in " + repr(SUFFIXES) + ".items():\n"
        "    WRITERS[fmt](simulate('auth', **knobs), Path(sys.argv[1]) / (fmt + suffix), print)\n"
    )
    (tmp_path / "there").mkdir()
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "there")],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    for fmt, suffix in SUFFIXES.items():
        here = write(fmt, tmp_path / f"{fmt}{suffix}", "auth", **knobs)
        assert digest(here) == digest(tmp_path / "there" / f"{fmt}{suffix}"), fmt
