"""`windtunnel generate --columns` (typed columns) and `--truth-profile` on the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner, Result

from windtunnel.cli.main import cli

BASE = ("-n", "800", "-s", "2", "--null-fraction", "0.02", "--invalid-fraction", "0.01",
        "--late-fraction", "0.05", "-q")  # fmt: skip


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_parquet_columns_are_typed(tmp_path: Path) -> None:
    out = tmp_path / "p.parquet"
    result = invoke("generate", "payments", *BASE, "--format", "parquet", "--columns", "--out", str(out))
    assert result.exit_code == 0, result.output
    table = pq.read_table(out)
    schema = table.schema
    assert schema.names == [
        "ts", "user_id", "txn_id", "payee", "amount_paise", "status",
        "seq", "arrival_ms", "truth", "tag",
    ]  # fmt: skip
    assert schema.field("ts").type == pa.int64()
    assert schema.field("amount_paise").type == pa.int64()
    for name in ("user_id", "txn_id", "payee", "status", "truth", "tag"):
        assert schema.field(name).type == pa.string(), name
    rows = table.to_pylist()
    assert len(rows) == 800
    assert [r["seq"] for r in rows] == list(range(800))
    # null and invalid times are null in the int64 column; truth says which
    nulls = {r["truth"] for r in rows if r["ts"] is None}
    assert nulls == {"null_time", "not_a_time"}
    assert all(isinstance(r["ts"], int) for r in rows if r["truth"] in ("deliver", "late"))


def test_jsonl_columns_match_the_kafka_shaped_records(tmp_path: Path) -> None:
    kafka, columns = tmp_path / "k.jsonl", tmp_path / "c.jsonl"
    assert invoke("generate", "auth", *BASE, "--format", "jsonl", "--out", str(kafka)).exit_code == 0
    result = invoke("generate", "auth", *BASE, "--format", "jsonl", "--columns", "--out", str(columns))
    assert result.exit_code == 0, result.output
    shaped = [json.loads(line) for line in kafka.read_text().splitlines()]
    flat = [json.loads(line) for line in columns.read_text().splitlines()]
    assert len(flat) == len(shaped) == 800
    for record, row in zip(shaped, flat, strict=True):
        assert {k: row[k] for k in ("seq", "arrival_ms", "truth", "tag")} == {
            k: record[k] for k in ("seq", "arrival_ms", "truth", "tag")
        }
        payload = {k: v for k, v in row.items() if k not in ("seq", "arrival_ms", "truth", "tag")}
        assert payload == json.loads(record["value"])


def test_spark_dir_columns(tmp_path: Path) -> None:
    out = tmp_path / "dir"
    result = invoke("generate", "bare", *BASE, "--format", "spark-dir", "--columns",
                    "--batch-size", "300", "--out", str(out))  # fmt: skip
    assert result.exit_code == 0, result.output
    files = sorted(out.glob("batch-*.jsonl"))
    assert len(files) == 3
    first = json.loads(files[0].read_text().splitlines()[0])
    assert list(first) == ["ts", "key", "seq", "arrival_ms", "truth", "tag"]


def test_truth_profile_labels_and_summary(tmp_path: Path) -> None:
    default, spark = tmp_path / "d.jsonl", tmp_path / "s.jsonl"
    args = ("generate", "bare", "-n", "1500", "--late-fraction", "0.05", "--max-out-of-order",
            "2s", "--batch-size", "50", "--format", "jsonl", "--columns")  # fmt: skip
    assert invoke(*args, "--out", str(default)).exit_code == 0
    result = invoke(*args, "--truth-profile", "spark", "--out", str(spark))
    assert result.exit_code == 0, result.output
    assert "dropped by design (profile spark): " in result.stderr
    labels = [json.loads(line)["truth"] for line in spark.read_text().splitlines()]
    late = labels.count("late")
    assert f"(late {late}, null_time 0, not_a_time 0)" in result.stderr
    assert labels != [json.loads(line)["truth"] for line in default.read_text().splitlines()]


def test_truth_profile_tenzir_writes_the_default_bytes(tmp_path: Path) -> None:
    args = ("generate", "iot", "-n", "600", "--late-fraction", "0.05", "--null-fraction", "0.01", "-q")
    assert invoke(*args, "--out", str(tmp_path / "a.yaml")).exit_code == 0
    assert invoke(*args, "--truth-profile", "tenzir", "--out", str(tmp_path / "b.yaml")).exit_code == 0
    assert (tmp_path / "a.yaml").read_bytes() == (tmp_path / "b.yaml").read_bytes()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--columns",), "--columns='scenario': applies to jsonl, parquet, spark-dir only"),
        (("--truth-profile", "nope"), "unknown profile"),
    ],
)
def test_bad_options_are_one_line_errors(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    result = invoke("generate", "bare", "-n", "100", *args, "--out", str(tmp_path / "x.yaml"))
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output
