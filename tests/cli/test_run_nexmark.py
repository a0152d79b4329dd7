"""`windtunnel run` of the Nexmark Q5 example over bids written by `windtunnel generate
nexmark --nexmark-kinds bid --format spark-dir`: the oracle's outputs, row for row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli
from windtunnel.oracle.engine import run
from windtunnel.oracle.model.results import to_jsonl_line
from windtunnel.oracle.scenario import load_yaml, parse_scenario
from windtunnel.simulator.items import stream_items
from windtunnel.simulator.workloads import simulate

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "nexmark" / "q5-hot-items.yaml"
KNOBS: dict[str, Any] = {"events": 1_500, "seed": 3, "rate": 300, "nexmark_kinds": "bid"}


def oracle_lines() -> list[str]:
    data = load_yaml(SPEC.read_text(encoding="utf-8"))
    spec = parse_scenario({k: v for k, v in data.items() if k != "expect"} | {"input": []})
    sim = simulate("nexmark", **KNOBS, batch_size=500)
    outputs = run(spec.query, stream_items(sim), rules=spec.rules, start_wall_ms=spec.start_wall_ms)
    return sorted(to_jsonl_line(o) for o in outputs)


@pytest.mark.spark
def test_q5_over_generated_bids_writes_the_oracles_outputs(tmp_path: Path) -> None:
    from windtunnel.spark_impl.schema import OUTPUT_COLUMNS, output_of

    options = [f"--{name.replace('_', '-')}={value}" for name, value in KNOBS.items()]
    made = CliRunner().invoke(
        cli,
        [
            "generate",
            "nexmark",
            *options,
            "--format",
            "spark-dir",
            "--batch-size",
            "500",
            "--out",
            str(tmp_path / "bids"),
            "-q",
        ],
    )
    assert made.exit_code == 0, made.output
    result = CliRunner().invoke(
        cli,
        [
            "run",
            str(SPEC),
            str(tmp_path / "bids"),
            "--out",
            str(tmp_path / "out"),
            "--checkpoint",
            str(tmp_path / "ck"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "nexmark-q5-hot-items: 3 micro-batches, 1501 rows in" in result.output
    rows = [json.loads(line) for f in sorted((tmp_path / "out").glob("part-*.json"))
            for line in f.read_text().splitlines()]  # fmt: skip
    got = sorted(to_jsonl_line(output_of({c: r.get(c) for c in OUTPUT_COLUMNS})) for r in rows)
    assert got == oracle_lines()
