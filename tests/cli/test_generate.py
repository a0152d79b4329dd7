"""`windtunnel generate`: every format, the summary, and one-line errors with exit 2."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from windtunnel.cli.main import cli


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_generated_scenario_replays_with_its_ground_truth(tmp_path: Path) -> None:
    out = tmp_path / "auth.json"
    result = invoke(
        "generate", "auth", "--events", "1000", "--seed", "3", "--late-fraction", "0.05",
        "--delay", "uniform", "--max-out-of-order", "30s", "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "events: 1000" in result.stderr
    assert "late: " in result.stderr and "dropped by design (default profile):" in result.stderr
    replayed = invoke("replay", str(out), "--format", "jsonl")
    assert replayed.exit_code == 0, replayed.output
    assert "expectations held" in replayed.stderr


@pytest.mark.parametrize(("fmt", "name"), [("jsonl", "r.jsonl"), ("parquet", "r.parquet")])
def test_file_formats_and_summary_json(tmp_path: Path, fmt: str, name: str) -> None:
    summary = tmp_path / "summary.json"
    result = invoke(
        "generate", "payments", "-n", "1500", "-s", "1", "--format", fmt, "--out",
        str(tmp_path / name), "--null-fraction", "0.02", "--summary-json", str(summary),
        "--sparse-keys", "5", "--sparse-idle", "2s", "--sparse-active", "1s",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(summary.read_text())
    assert data["events"] == 1500
    assert data["truth"]["null_time"] == data["dropped_by_design"] > 0
    assert sum(data["partitions"].values()) == 1500
    assert data["idle_periods"] and data["idle_periods"][0]["scope"] == "key"
    assert (tmp_path / name).stat().st_size > 0


def test_nexmark_bids_alone_with_nexmarks_knobs(tmp_path: Path) -> None:
    out = tmp_path / "bids.jsonl"
    result = invoke(
        "generate", "nexmark", "-n", "2000", "--nexmark-kinds", "bid", "--rate", "1000",
        "--nexmark-hot-auction-ratio", "1", "--nexmark-occasional-delay", "0s",
        "--format", "jsonl", "--columns", "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["event_type"] for r in rows} == {"bid"} and len(rows) == 2000
    busiest = Counter(r["auction"] for r in rows).most_common(1)[0][1]
    assert busiest < 0.1 * len(rows)  # ratio 1: no hot auction, bids spread over 110 auctions
    assert all(r["arrival_ms"] == r["dateTime"] for r in rows)  # no delay
    assert "dropped by design (default profile): 0 (late 0" in result.stderr


def test_spark_dir_defaults_to_batches_of_1000(tmp_path: Path) -> None:
    result = invoke(
        "generate", "iot", "-n", "2500", "--format", "spark-dir", "-o", str(tmp_path / "d")
    )
    assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "d").glob("batch-*.jsonl"))) == 3
    assert "batches: 3" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["generate", "logs", "-o", "x"], "'logs' is not one of 'bare', 'auth'"),
        (["generate", "bare", "-o", "x", "--late-fraction", "2"], "late_fraction=2.0: must be in"),
        (["generate", "bare", "-o", "x", "--delay", "gamma"], "delay='gamma': not a known choice"),
        (["generate", "bare", "-o", "x", "--max-out-of-order", "5 parsecs"], "max_out_of_order="),
        (["generate", "bare", "--format", "jsonl"], "out=None: is required for this format"),
        (["generate", "bare", "--format", "kafka"], "bootstrap.servers=None: is required"),
        (["generate", "payments", "-o", "x", "--nexmark-kinds", "bid"],
         "--nexmark-kinds='bid': applies to the nexmark workload only"),
        (["generate", "nexmark", "-o", "x", "--nexmark-kinds", "bids"], "kinds='bids': must name"),
        (["generate", "nexmark", "-o", "x", "--nexmark-hot-auction-ratio", "0"],
         "hot_auction_ratio=0: must be a whole number of at least 1"),
        (["generate", "nexmark", "-o", "x", "--rate-shape", "sine"], "rate_shape='sine': nexmark"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str, monkeypatch) -> None:
    for name in [n for n in os.environ if n.startswith("WINDTUNNEL_KAFKA_")]:
        monkeypatch.delenv(name)
    result = invoke(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output
    if "is not one of" not in message:
        assert result.stderr.count("\n") == 1


@pytest.mark.process  # waits for the Kafka client's timeout
def test_unreachable_kafka_is_reported_not_hung(tmp_path: Path) -> None:
    result = invoke(
        "generate", "bare", "-n", "10", "--format", "kafka", "--bootstrap", "127.0.0.1:1",
        "--kafka-connect-timeout", "1",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "cannot reach the Kafka cluster" in result.stderr


def run_on_a_terminal(*args: str) -> tuple[int, str]:
    """Run the CLI in a child process whose stderr is a pseudo-terminal; its stderr text."""
    import pty
    import subprocess
    import sys

    main, child = pty.openpty()
    code = "from windtunnel.cli.main import cli; cli()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=child,
    )
    os.close(child)
    chunks = []
    while True:
        try:
            data = os.read(main, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    return proc.wait(), b"".join(chunks).decode()


@pytest.mark.process  # windtunnel on a terminal, in a fresh Python
@pytest.mark.parametrize(
    ("length", "total"), [(["-n", "100000"], 100000), (["--duration", "100s"], 100000)]
)
def test_progress_bar_on_a_terminal_for_long_runs(
    tmp_path: Path, length: list[str], total: int
) -> None:
    out = str(tmp_path / "r.jsonl")
    status, text = run_on_a_terminal("generate", "bare", *length, "--format", "jsonl", "-o", out)
    assert status == 0, text
    assert "bare -> jsonl" in text and "━" in text  # rich's bar
    assert f"{total}/{total}" in text and "events: " in text
    if length[0] == "-n":
        quiet = run_on_a_terminal("generate", "bare", *length, "-q", "--format", "jsonl", "-o", out)
        assert quiet == (0, "")


def test_summary_counts_records_per_partition(tmp_path: Path) -> None:
    few = invoke("generate", "bare", "-n", "900", "--partitions", "2", "-o", str(tmp_path / "a"))
    line = next(x for x in few.stderr.splitlines() if "partitions:" in x)
    counts = [int(part.split(": ")[1]) for part in line.split("partitions: ")[1].split(", ")]
    assert sum(counts) == 900 and len(counts) == 2
    many = invoke("generate", "bare", "-n", "900", "--partitions", "500", "-o", str(tmp_path / "b"))
    from windtunnel.simulator.murmur2 import partition_for

    used = {partition_for(f"k{i}".encode(), 500) for i in range(100)}  # bare's 100 keys
    assert f"partitions: {len(used)} of 500 have records, " in many.stderr


def test_rejected_kafka_setting_is_one_line_without_its_value(tmp_path: Path) -> None:
    config = tmp_path / "kafka.properties"
    config.write_text("bootstrap.servers=127.0.0.1:1\nsecurity.protocol=hunter2-secret\n")
    result = invoke(
        "generate", "bare", "-n", "5", "--format", "kafka", "--kafka-config", str(config)
    )
    assert result.exit_code == 2
    assert "kafka setting security.protocol='(hidden)': rejected by librdkafka" in result.stderr
    assert "hunter2" not in result.output and result.stderr.count("\n") == 1
