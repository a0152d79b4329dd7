"""``windtunnel check --target flink`` speed: scenarios/min and the time to a shrunk
counterexample, against the harness as it ran before (one JVM per target call, every
cumulating scenario on a Flink SQL query of its own), in one process.

For the tumbling, hopping, session and cumulating specs of ``examples/flink/``
(``--examples`` generated streams, default batch size): "before" runs every target call on a fresh JVM (the harness JVM is
stopped after each call) and, for the cumulating spec, each scenario on its own query (kind
``c``); "now" is the target as it is (one JVM for the process, started by the first call:
each "now" run starts cold too). Then ``examples/flink/session-old-watermark.yaml`` (the
old watermark reading, ``max - tolerance``) diverges from Flink, and both modes shrink it:
seconds to the counterexample and target calls. Prints one line per spec and the ratios.
Both modes must pass every spec and catch the old reading (an AssertionError otherwise).

Run: python benchmarks/flink_check_rate.py [--examples 500] [--seed 0]
     [--specs tumbling,hopping,session,cumulate] [--shrink both|now|none]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from windtunnel.conformance.check import CheckResult, check
from windtunnel.conformance.flink import server
from windtunnel.conformance.flink.runtime import run_harness
from windtunnel.conformance.flink.windows import outputs_of, parse, prepare
from windtunnel.conformance.targets.base import TargetRun
from windtunnel.conformance.targets.flink import FlinkTarget, flink_target
from windtunnel.oracle.model.stream import Batch, Event
from windtunnel.oracle.scenario import Scenario, load_scenario

SPECS = Path(__file__).resolve().parent.parent / "examples" / "flink"
KINDS = ("tumbling", "hopping", "session", "cumulate")


@dataclass(frozen=True)
class Before:
    """The harness before: a fresh JVM per call, a Flink SQL query per cumulating scenario."""

    name: str = "flink"
    reports_drops: bool = True
    reports_timing: bool = False

    def run_many(self, scenarios: Sequence[Scenario]) -> list[TargetRun]:
        prepared = [prepare(scenario, sid) for sid, scenario in enumerate(scenarios)]
        lines = [line.replace("\tC\t", "\tc\t", 1) if line.startswith("S\t") else line
                 for p in prepared for line in p.lines]
        try:
            firings, late = parse(run_harness("WindowHarness", lines))
        finally:
            server.shutdown()
        return [
            TargetRun(tuple(outputs_of(s.query, p, firings.get(sid, []), late.get(sid, []))))
            for sid, (s, p) in enumerate(zip(scenarios, prepared, strict=True))
        ]


def events(scenario: Scenario) -> int:
    return sum(len(i.events) if isinstance(i, Batch) else isinstance(i, Event)
               for i in scenario.items)


def timed(spec: Scenario, target: FlinkTarget | Before, examples: int, seed: int) -> CheckResult:
    server.shutdown()  # both modes start cold
    return check(spec, target, examples=examples, seed=seed, stand_in=None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--specs", default=",".join(KINDS), help="comma-separated specs of examples/flink")
    parser.add_argument("--shrink", choices=("both", "now", "none"), default="both",
                        help="the modes that shrink session-old-watermark.yaml")
    args = parser.parse_args(argv)
    now_target = flink_target()
    print(f"{'spec':24} {'before /min':>12} {'now /min':>10} {'ratio':>7}")
    for name in args.specs.split(","):
        spec = load_scenario(SPECS / f"{name}.yaml")
        before = timed(spec, Before(), args.examples, args.seed)
        now = timed(spec, now_target, args.examples, args.seed)
        assert before.failure is None and now.failure is None, name
        print(f"{name + '.yaml':24} {before.rate_per_min:12.0f} {now.rate_per_min:10.0f} "
              f"{now.rate_per_min / before.rate_per_min:6.1f}x", flush=True)
    spec = load_scenario(SPECS / "session-old-watermark.yaml")
    results = {}
    modes = {"both": ("before", "now"), "now": ("now",), "none": ()}[args.shrink]
    if modes:
        print("\ntime to a shrunk counterexample (session-old-watermark.yaml):")
    for label, target in (("before", Before()), ("now", now_target)):
        if label not in modes:
            continue
        started = time.monotonic()
        found = timed(spec, target, args.examples, args.seed)
        assert found.failure is not None
        results[label] = time.monotonic() - started
        failure = found.failure
        print(f"  {label:6} {results[label]:6.1f} s ({failure.shrink_seconds:.1f} s shrinking in "
              f"{failure.shrink_calls} target calls, down to {events(failure.scenario)} "
              "events)", flush=True)
    if len(results) == 2:
        print(f"  ratio {results['before'] / results['now']:.1f}x")
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
