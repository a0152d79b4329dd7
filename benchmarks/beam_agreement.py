"""Agreement of the ``beam`` profile with Beam's own trigger driver, per window kind and
trigger family.

For every cell of :mod:`windtunnel.conformance.beam.families` (fixed, sliding, sessions and
global windows x default, watermark, count, processing-time and composite triggers; each cell
rotating accumulation modes, allowed lateness, timestamp combiners and watermark rules) draws
``--examples`` random streams (disorder, late data, bundles, watermark items, processing
time, several keys), runs each on Beam's ``GeneralTriggerDriver`` (``--target beam``) and on
the oracle, and compares every pane. Prints one line per cell (agreeing / streams), the
streams that disagree (first three per cell), and the rate of the whole check (generation,
Beam and the oracle) in scenarios/min.

Run: python benchmarks/beam_agreement.py [--examples 200] [--seed 1]
"""

from __future__ import annotations

import argparse
import sys
import time

from windtunnel.conformance.beam.families import TRIGGER_FAMILIES, WINDOW_KINDS, cell_specs
from windtunnel.conformance.check import compare_run
from windtunnel.conformance.generate import generate
from windtunnel.conformance.targets.base import oracle_micro_batches_of, oracle_outputs
from windtunnel.conformance.targets.beam import beam_target

SPECS_PER_CELL = 8


def run_cell(kind: str, family: str, examples: int, seed: int) -> tuple[int, int, list[str]]:
    """(agreeing streams, streams, descriptions of the first disagreements) for one cell."""
    target = beam_target()
    specs = cell_specs(kind, family, SPECS_PER_CELL)
    per_spec = [examples // len(specs) + (i < examples % len(specs)) for i in range(len(specs))]
    agree, total, problems = 0, 0, []
    for spec, count in zip(specs, per_spec, strict=True):
        scenarios = list(generate(spec, count, seed))
        for scenario, run in zip(scenarios, target.run_many(scenarios), strict=True):
            want = oracle_outputs(scenario)
            mismatch = compare_run(want, oracle_micro_batches_of(scenario, want), run,
                                   drops=False, timing=True)
            total += 1
            if mismatch:
                problems.append(f"{scenario.name}: {mismatch}")
            else:
                agree += 1
    return agree, total, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200, help="streams per cell")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    started = time.monotonic()
    total = agreeing = 0
    print(f"{'window kind':10} {'trigger family':16} {'agree':>11}")
    for kind in WINDOW_KINDS:
        for family in TRIGGER_FAMILIES:
            agree, count, problems = run_cell(kind, family, args.examples, args.seed)
            total, agreeing = total + count, agreeing + agree
            print(f"{kind:10} {family:16} {agree:>5}/{count:<5}")
            for problem in problems[:3]:
                print(f"  {problem}")
    minutes = (time.monotonic() - started) / 60
    print(f"{agreeing}/{total} streams agree; {total / minutes:,.0f} scenarios/min")
    return 0 if agreeing == total else 1


if __name__ == "__main__":
    sys.exit(main())
