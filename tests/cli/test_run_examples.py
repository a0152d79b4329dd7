"""`windtunnel run --explain` is the truth: for every spec in examples/ that `windtunnel run`
accepts, the path `--explain` names is the path the job then runs on (its summary line says
which), over the spec's own input or, for a spec without one, a few generated events."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli
from windtunnel.oracle.model.errors import WindtunnelError
from windtunnel.oracle.model.stream import Advance, Batch, Event, Item
from windtunnel.oracle.scenario import Scenario, load_spec

ROOT = Path(__file__).resolve().parents[2]


def accepted(path: Path) -> bool:
    from windtunnel.spark_impl.job import load_job_spec

    try:
        load_job_spec(path)
    except WindtunnelError:
        return False
    return True


SPECS = sorted(p for p in (ROOT / "examples").rglob("*.yaml") if accepted(p))


def stream_of(spec: Scenario) -> list[Item]:
    """The spec's own input, or (none) the longest of a few streams generated for it."""
    if any(isinstance(i, Event | Batch) for i in spec.items):
        return list(spec.items)
    from windtunnel.conformance.generate import generate

    drawn = [list(s.items) for s in generate(spec, 10, seed=1, max_events=8)]
    return max(drawn, key=lambda items: len(records(items, spec.start_wall_ms)))


def records(items: list[Item], start_wall_ms: int) -> list[dict[str, Any]]:
    """The events of ``items`` as `windtunnel generate` writes records: seq, arrival, value."""
    wall, out = start_wall_ms, []
    for item in items:
        if isinstance(item, Advance):
            wall = max(wall, item.to_ms)
        for event in item.events if isinstance(item, Batch) else (item,) if isinstance(item, Event) else ():
            wall = max(wall, event.at_ms) if event.at_ms is not None else wall
            out.append({"seq": len(out), "arrival_ms": wall, "value": json.dumps(dict(event.payload))})
    return out


@pytest.fixture(scope="module")
def spark() -> Any:
    """The run's shared local session (the command's getOrCreate reuses it)."""
    from windtunnel.spark_impl.session import spark_session

    return spark_session(shuffle_partitions=2)


def test_the_examples_hold_every_path() -> None:
    from windtunnel.spark_impl.job import choose_path, load_job_spec

    paths = {choose_path(load_job_spec(p), spark=None).path for p in SPECS}
    assert paths == {"production", "general", "stock"}


@pytest.mark.spark
@pytest.mark.parametrize("path", SPECS, ids=[str(p.relative_to(ROOT / "examples")) for p in SPECS])
def test_explain_names_the_path_the_job_runs_on(spark: Any, path: Path, tmp_path: Path) -> None:
    spec = load_spec(path)
    lines = records(stream_of(spec), spec.start_wall_ms)
    assert lines, "a stream with events"
    source = tmp_path / "records.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in lines))
    args = ["run", str(path), str(source), "--out", str(tmp_path / "out"),
            "--checkpoint", str(tmp_path / "checkpoint"), "--rows-per-batch", "100", "--quiet"]
    explained = CliRunner().invoke(cli, [*args, "--explain"])
    assert explained.exit_code == 0, explained.output
    named = re.match(r"path: (\w+) \(", explained.stdout)
    assert named is not None, explained.stdout
    ran = CliRunner().invoke(cli, args)
    assert ran.exit_code == 0, ran.output
    summary = re.search(r"outputs to .* \((\w+) path; checkpoint ", ran.stderr)
    assert summary is not None, ran.stderr
    assert summary.group(1) == named.group(1)
