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

``--direct N`` also runs N streams per cell as pipelines on the DirectRunner with
``TestStream`` (``--target beam-direct``, one pipeline per stream), counts its agreement,
its stalls and failures and the kinds of its departures, and its rate.

``--jobs N`` checks N cells at a time in worker processes (default 1: the rate of one
``windtunnel check`` process).

Run: python benchmarks/beam_agreement.py [--examples 200] [--seed 1] [--jobs 1] [--direct 0]
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TypeVar

from windtunnel.conformance.beam.families import TRIGGER_FAMILIES, WINDOW_KINDS, cell_specs
from windtunnel.conformance.check import Mismatch, compare_run
from windtunnel.conformance.differential import DEFAULT_IGNORED, canonical
from windtunnel.conformance.generate import generate
from windtunnel.conformance.targets.base import oracle_micro_batches_of, oracle_outputs
from windtunnel.conformance.targets.beam import BeamPipelineTarget, beam_target
from windtunnel.oracle.model.results import Output, pane_of

IGNORED = (*DEFAULT_IGNORED, "reason", "partial")
T = TypeVar("T")
R = TypeVar("R")

SPECS_PER_CELL = 8


def departure(mismatch: Mismatch) -> str:
    """What kind of departure a DirectRunner mismatch is: the same panes with another
    timing, panes missing or extra, or other values."""
    def key(o: Output) -> str:
        pane = pane_of(o)
        return canonical(replace(o, pane=None) if pane else o, IGNORED) + (
            "" if pane is None else str((pane.index, pane.last)))

    missing = {key(o) for o in mismatch.missing}
    extra = {key(o) for o in mismatch.unexpected}
    if missing and missing == extra:
        return "pane timing (early/late)"
    if mismatch.missing and not mismatch.unexpected:
        return "panes missing"
    if mismatch.unexpected and not mismatch.missing:
        return "extra panes"
    return "other values"


def run_direct(kind: str, family: str, examples: int, seed: int,
               kinds: Counter[str]) -> tuple[int, int, int]:
    """(agreeing streams, streams, stalled or failed pipelines) on the DirectRunner."""
    target = BeamPipelineTarget()
    agree = total = 0
    specs = cell_specs(kind, family, min(SPECS_PER_CELL, max(1, examples)))
    for index, spec in enumerate(specs):
        count = examples // len(specs) + (index < examples % len(specs))
        for scenario in generate(spec, count, seed):
            (run,) = target.run_many([scenario])
            mismatch = compare_run(oracle_outputs(scenario), (), run, drops=False,
                                   timing=False, ignored=target.ignored)
            total += 1
            agree += not mismatch
            if mismatch:
                kinds[departure(mismatch)] += 1
    for stall in target.stalls:
        kinds["stall: " + stall.split(": ", 1)[1].split(":")[0].split(" (")[0]] += 1
    return agree, total, len(target.stalls)


def run_cell(kind: str, family: str, examples: int, seed: int) -> tuple[int, int, list[str]]:
    """(agreeing streams, streams, descriptions of the first disagreements) for one cell,
    and the CPU seconds it took."""
    cpu = time.process_time()
    agree, total, problems = _cell(kind, family, examples, seed)
    return agree, total, [*problems, f"cpu {time.process_time() - cpu}"]


def _cell(kind: str, family: str, examples: int, seed: int) -> tuple[int, int, list[str]]:
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
    parser.add_argument("--direct", type=int, default=0,
                        help="streams per cell on the DirectRunner (0: none)")
    parser.add_argument("--jobs", type=int, default=1, help="cells checked at a time")
    args = parser.parse_args(argv)
    started = time.monotonic()
    total = agreeing = 0
    cpu_seconds = 0.0
    cells = [(k, f, args.examples, args.seed) for k in WINDOW_KINDS for f in TRIGGER_FAMILIES]
    print(f"{'window kind':10} {'trigger family':16} {'agree':>11}")
    with multiprocessing.get_context("fork").Pool(args.jobs) if args.jobs > 1 else _Inline() as pool:
        for (kind, family, _, _), (agree, count, problems) in zip(
                cells, pool.imap(_run, cells), strict=True):
            total, agreeing = total + count, agreeing + agree
            cpu_seconds += float(problems.pop().split()[1])
            print(f"{kind:10} {family:16} {agree:>5}/{count:<5}", flush=True)
            for problem in problems[:3]:
                print(f"  {problem}")
    minutes, cpu_minutes = (time.monotonic() - started) / 60, cpu_seconds / 60
    print(f"{agreeing}/{total} streams agree with GeneralTriggerDriver; "
          f"{total / minutes:,.0f} scenarios/min ({total / cpu_minutes:,.0f} per CPU minute)")
    if args.direct:
        started, direct_total, direct_agree, kinds = time.monotonic(), 0, 0, Counter[str]()
        print(f"\nDirectRunner + TestStream, {args.direct} streams per cell:")
        for kind in WINDOW_KINDS:
            for family in TRIGGER_FAMILIES:
                agree, count, stalls = run_direct(kind, family, args.direct, args.seed, kinds)
                direct_total, direct_agree = direct_total + count, direct_agree + agree
                print(f"{kind:10} {family:16} {agree:>5}/{count:<5} stalled or failed {stalls}",
                      flush=True)
        minutes = (time.monotonic() - started) / 60
        print(f"{direct_agree}/{direct_total} streams agree on the DirectRunner; "
              f"{direct_total / minutes:,.0f} scenarios/min")
        for what, count in kinds.most_common():
            print(f"  {count:4}  {what}")
    return 0 if agreeing == total else 1


def _run(cell: tuple[str, str, int, int]) -> tuple[int, int, list[str]]:
    return run_cell(*cell)


class _Inline:
    """A one-process stand-in for a pool."""

    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def imap(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        return map(fn, items)


if __name__ == "__main__":
    sys.exit(main())
