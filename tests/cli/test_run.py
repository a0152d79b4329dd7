"""`windtunnel run`: bad input exits 2 with one line before Spark starts; a real run writes
the oracle's outputs and shows its micro-batches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli

SPEC = """
name: tiny
window: {size: 10s, on: ts, idle_timeout: 5s}
group_by: k
aggregate: {n: count()}
"""

# Two micro-batches (two spark-dir files); key a idles while b's records move the wall clock;
# b's [0,10s) also idled (since 2000), and [10s,20s) flushes at the end of input.
#   seq  ts     k  arrival
#   0    1000   a  1000
#   1    2000   b  2000      | file 0
#   2    12000  b  12000     | file 1: wall 12000 -> a and b idle (> 5 s): both [0,10s) close
#   3    3000   b  13000       late for b (b's clock is 12000, window [0,10s) closed)
RECORDS = [
    (0, 1000, "a", 1000),
    (1, 2000, "b", 2000),
    (2, 12000, "b", 12000),
    (3, 3000, "b", 13000),
]


def record_line(seq: int, ts: int, key: str, arrival: int) -> str:
    value = json.dumps({"ts": ts, "k": key})
    return json.dumps({"value": value, "seq": seq, "arrival_ms": arrival}) + "\n"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "spec.yaml").write_text(SPEC)
    stream = tmp_path / "stream"
    stream.mkdir()
    (stream / "batch-00000000.jsonl").write_text("".join(record_line(*r) for r in RECORDS[:2]))
    (stream / "batch-00000001.jsonl").write_text("".join(record_line(*r) for r in RECORDS[2:]))
    return tmp_path


@pytest.fixture(scope="module")
def spark() -> Any:
    """The run's shared local session (the command's getOrCreate reuses it)."""
    from windtunnel.spark_impl.session import spark_session

    return spark_session(shuffle_partitions=2)


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--trigger", "whenever"], "trigger='whenever': unknown trigger"),
        (["--trigger", "5s"], "--trigger='5s': an interval trigger runs until stopped"),
        (["--tick", "0s"], "--tick='0s': must be positive"),
        (["--timeout", "soon"], "--timeout='soon'"),
        (["--sink", "console", "--out", "x"], "--out='x': the console sink writes no files"),
        (["--sink", "parquet"], "a parquet sink needs a directory"),
    ],
)
def test_bad_options_exit_2_with_one_line(files: Path, extra: list[str], message: str) -> None:
    result = invoke("run", str(files / "spec.yaml"), str(files / "stream"), *extra)
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1
    assert result.output.startswith("windtunnel: ")
    assert message in result.output


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("missing-dir", "source='{root}/missing-dir': does not exist"),
        ("spec.yaml", "unknown records format"),
        ("kafka://broker-only", "not a Kafka address"),
    ],
)
def test_bad_sources_exit_2(files: Path, source: str, message: str) -> None:
    where = source if source.startswith("kafka") else str(files / source)
    result = invoke("run", str(files / "spec.yaml"), where)
    assert result.exit_code == 2
    assert message.format(root=files) in result.output
    assert "Traceback" not in result.output


def test_bad_spec_exits_2(files: Path) -> None:
    (files / "bad.yaml").write_text("window: {size: -10s, on: ts}\n")
    result = invoke("run", str(files / "bad.yaml"), str(files / "stream"))
    assert result.exit_code == 2
    assert result.output.count("\n") == 1


def test_missing_spec_exits_2(files: Path) -> None:
    result = invoke("run", str(files / "nope.yaml"), str(files / "stream"))
    assert result.exit_code == 2
    assert "cannot be read" in result.output


@pytest.mark.spark
def test_run_writes_the_oracle_outputs_with_progress(spark: Any, files: Path) -> None:
    out = files / "out"
    result = invoke(
        "run",
        str(files / "spec.yaml"),
        str(files / "stream"),
        "--out",
        str(out),
        "--checkpoint",
        str(files / "checkpoint"),
    )
    assert result.exit_code == 0, result.output
    assert "batch 0: 2 rows in, 0 out" in result.output
    assert "batch 1: 3 rows in, 4 out" in result.output  # two records and the end row
    assert "tiny: 2 micro-batches, 5 rows in, 4 outputs" in result.output
    rows = [r.asDict() for r in spark.read.json(str(out)).collect()]
    summary = sorted((r["type"], r["reason"], r["group"], r["end_ms"], r["wall_ms"]) for r in rows)
    assert summary == [
        ("drop", "late", '"b"', 10000, None),
        ("emit", "end_of_input", '"b"', 20000, 13000),
        ("emit", "idle_timeout", '"a"', 10000, 12000),
        ("emit", "idle_timeout", '"b"', 10000, 12000),
    ]
    assert sorted(_oracle_lines()) == sorted(_lines(rows))


def _oracle_lines() -> list[str]:
    from windtunnel.oracle.engine import run
    from windtunnel.oracle.model.results import to_jsonl_line
    from windtunnel.oracle.model.stream import Event
    from windtunnel.oracle.scenario import load_yaml, parse_scenario

    query = parse_scenario(load_yaml(SPEC) | {"input": []}).query
    items = [Event(seq, {"ts": ts, "k": k}, at) for seq, ts, k, at in RECORDS]
    return [to_jsonl_line(o) for o in run(query, items)]


def _lines(rows: list[dict[str, Any]]) -> list[str]:
    from windtunnel.oracle.model.results import to_jsonl_line
    from windtunnel.spark_impl.schema import OUTPUT_COLUMNS, output_of

    return [to_jsonl_line(output_of({c: r.get(c) for c in OUTPUT_COLUMNS})) for r in rows]


STOCK_SPEC = """
name: stock
profile: spark
window: {size: 10s, on: ts, tolerance: 2s}
group_by: k
aggregate: {n: count(), total: sum(v)}
"""
# Three micro-batches (files); stock Spark's watermark is max event time - 2 s, used from
# the next micro-batch on, and a row is late when its window ended at the watermark of the
# micro-batch before (docs/semantics.md, "The spark profile"):
#   file 0: a@1000 b@2000           watermark for file 1: 0
#   file 1: a@15000                 watermark for file 2: 13000
#   file 2: b@5000 a@26000          b@5000 is not late (the watermark before was 0): it
#                                   joins b's [0,10s), which closes in this micro-batch
#   no-data micro-batch             watermark 24000: [10s,20s) of a closes
# [20s,30s) of a stays open: stock Spark has no end of input.
STOCK_FILES = [
    [(0, 1000, "a", 1), (1, 2000, "b", 2)],
    [(2, 15000, "a", 3)],
    [(3, 5000, "b", 4), (4, 26000, "a", 5)],
]


@pytest.mark.spark
def test_a_spark_profile_spec_runs_the_stock_mapping(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    from windtunnel.oracle.engine import replay
    from windtunnel.oracle.scenario import load_yaml, parse_scenario

    (tmp_path / "spec.yaml").write_text(STOCK_SPEC)
    stream = tmp_path / "stream"
    stream.mkdir()
    for index, records in enumerate(STOCK_FILES):
        lines = [json.dumps({"value": json.dumps({"ts": ts, "k": k, "v": v}), "seq": seq,
                             "arrival_ms": ts}) + "\n" for seq, ts, k, v in records]
        (stream / f"batch-{index:08d}.jsonl").write_text("".join(lines))
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # where a temporary checkpoint goes
    out = tmp_path / "deep" / "out"  # created by the run
    result = invoke("run", str(tmp_path / "spec.yaml"), str(stream), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "profile spark: stock Spark's withWatermark + window()" in result.stderr
    assert "1 window was still open when the input stopped" in result.stderr
    assert "no checkpoint kept" in result.stderr
    assert [p.name for p in temp.iterdir() if p.name != "windtunnel-spark.log"] == []  # no checkpoint
    rows = [r.asDict() for r in spark.read.json(str(out)).collect()]
    got = sorted((r["start_ms"], r["end_ms"], json.loads(r["group"]), json.loads(r["row"]))
                 for r in rows)
    items = [{"batch": [{"event": {"ts": ts, "k": k, "v": v}} for _, ts, k, v in records]}
             for records in STOCK_FILES]
    scenario = parse_scenario(load_yaml(STOCK_SPEC) | {"input": items})
    expected = sorted((o.window.start_ms, o.window.end_ms, o.group, dict(o.row))
                      for o in replay(scenario).outputs if o.reason == "close")
    assert got == expected == [
        (0, 10000, "a", {"n": 1, "total": 1}),
        (0, 10000, "b", {"n": 2, "total": 6}),
        (10000, 20000, "a", {"n": 1, "total": 3}),
    ]
