"""Replaying a generated scenario from YAML against the same scenario as JSON.

Writes one N-event scenario (default 250,000, ``windtunnel generate bare``) as YAML and
as JSON into a temporary directory, then times what ``windtunnel replay`` does with each
(load the file, run the oracle) in this process. Prints both times and the ratio
YAML/JSON (target: at most 3). Also times the reference loader (libyaml without the
JSON-lines fast path) on the YAML, to show what the fast path saves.

Run: python benchmarks/scenario_load.py [--events N] [--reference]
(``--events 2000``: a quick run, the YAML and JSON outputs still compared)
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import yaml

from windtunnel.oracle.engine import replay
from windtunnel.oracle.model.results import Output
from windtunnel.oracle.model.yaml_safe import SafeYamlLoader
from windtunnel.oracle.scenario import load_scenario
from windtunnel.simulator.outputs import write_scenario
from windtunnel.simulator.workloads import simulate


def timed_replay(path: Path) -> tuple[float, tuple[Output, ...]]:
    started = time.perf_counter()
    outputs = replay(load_scenario(path)).outputs
    return time.perf_counter() - started, outputs


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=250_000)
    parser.add_argument("--reference", action="store_true", help="also time the reference loader")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        yaml_path, json_path = Path(folder) / "s.yaml", Path(folder) / "s.json"
        write_scenario(simulate("bare", events=args.events, seed=0), yaml_path)
        write_scenario(simulate("bare", events=args.events, seed=0), json_path)
        json_s, json_outputs = timed_replay(json_path)
        yaml_s, yaml_outputs = timed_replay(yaml_path)
        assert yaml_outputs == json_outputs, "the YAML and JSON scenarios replay differently"
        print(f"events: {args.events:,}  outputs: {len(json_outputs):,}")
        print(f"json replay: {json_s:.2f} s")
        print(f"yaml replay: {yaml_s:.2f} s")
        print(f"ratio yaml/json: {yaml_s / json_s:.2f} (target <= 3)")
        if args.reference:
            started = time.perf_counter()
            yaml.load(yaml_path.read_text(encoding="utf-8"), Loader=SafeYamlLoader)
            print(f"reference loader (no fast path), load only: {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
