"""Agreement of the ``flink`` profile with real Flink 2.3, per window kind, before and after
issue 22.

Draws ``--examples`` random streams per kind (small integer times, so the 1 ms edges are
hit; several keys, disorder, null times, scripted watermarks in the "watermark items" kinds),
runs them on Flink's own window operator (``--target flink``: one job per kind on one JVM;
cumulating windows through Flink SQL's ``CUMULATE`` window aggregation, which the DataStream
API lacks) and compares every scenario with the oracle, emissions and drops. "before" is the
profile's old reading (rule overrides ``watermark_formula: minus_tolerance``,
``no_window_late: no_window``: the watermark ``max - tolerance``; ``-`` for cumulating
windows, a kind the oracle did not have); "after" is the profile as it is. Prints one line
per kind and the rate; exits 1 when a stream disagrees "after" (the profile as it is must
agree with Flink on every one).

Run: python benchmarks/flink_agreement.py [--examples 200] [--seed 1] [--kinds tumbling,session,...]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace

from windtunnel.conformance.check import compare_run
from windtunnel.conformance.generate import generate
from windtunnel.conformance.targets.base import oracle_outputs
from windtunnel.conformance.targets.flink import flink_target
from windtunnel.oracle.model.stream import Event, Watermark
from windtunnel.oracle.scenario import Scenario, parse_scenario

AGG = {"n": "count()", "s": "sum(v)", "vs": "collect(v)"}
KINDS = {
    "tumbling": {"kind": "fixed", "size": 10, "tolerance": 2},
    "hopping": {"kind": "fixed", "size": 10, "every": 3, "tolerance": 1},
    "gapped (every > size)": {"kind": "fixed", "size": 4, "every": 10, "tolerance": 1},
    "session": {"kind": "session", "gap": 5, "tolerance": 2},
    "tumbling + allowed_lateness": {"kind": "fixed", "size": 10, "tolerance": 1,
                                    "allowed_lateness": 6},
    "hopping + allowed_lateness": {"kind": "fixed", "size": 10, "every": 5,
                                   "allowed_lateness": 4},
    "session + allowed_lateness": {"kind": "session", "gap": 5, "tolerance": 1,
                                   "allowed_lateness": 7},
    "tumbling + watermark items": {"kind": "fixed", "size": 10, "tolerance": 3},
    "cumulate": {"kind": "cumulate", "step": 3, "size": 12, "tolerance": 2},
    "cumulate + watermark items": {"kind": "cumulate", "step": 2, "size": 10, "tolerance": 1},
}
BEFORE = {"watermark_formula": "minus_tolerance", "no_window_late": "no_window"}


def with_watermarks(scenario: Scenario) -> Scenario:
    """Every third event followed by a ``{watermark: t - 2}`` item (t: that event's time)."""
    items = []
    for item in scenario.items:
        items.append(item)
        if isinstance(item, Event) and item.seq % 3 == 2 and item.payload.get("ts") is not None:
            items.append(Watermark(int(item.payload["ts"]) - 2))
    return replace(scenario, items=tuple(items))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated kinds (default all)")
    args = parser.parse_args(argv)
    chosen = args.kinds.split(",")
    unknown = sorted(set(chosen) - set(KINDS))
    if unknown:
        parser.error(f"--kinds: unknown {unknown}; use some of {', '.join(KINDS)}")
    target = flink_target()
    total, seconds, disagree = 0, 0.0, 0
    print(f"{'kind':30} {'before':>9} {'after':>9}")
    for name in chosen:
        window = KINDS[name]
        spec = parse_scenario({"profile": "flink", "window": window, "group_by": ["k"],
                               "aggregate": AGG, "input": []})
        scenarios = list(generate(spec, args.examples, args.seed))
        if "watermark items" in name:
            scenarios = [with_watermarks(s) for s in scenarios]
        started = time.monotonic()
        runs = target.run_many(scenarios)
        seconds += time.monotonic() - started
        total += len(scenarios)
        counts = [] if window["kind"] != "cumulate" else ["-"]
        for overrides in (BEFORE, {}) if not counts else ({},):
            agree = 0
            for scenario, got in zip(scenarios, runs, strict=True):
                old = replace(scenario, rule_overrides={**scenario.rule_overrides, **overrides})
                if not compare_run(oracle_outputs(old, "flink"), (), got, drops=True, timing=False):
                    agree += 1
            counts.append(f"{agree}/{len(scenarios)}")
        disagree += len(scenarios) - agree  # the last count is the profile as it is
        print(f"{name:30} {counts[0]:>9} {counts[1]:>9}", flush=True)
    print(f"{total} scenarios on Flink in {seconds:.1f} s ({total * 60 / seconds:.0f} scenarios/min, "
          "engine calls only)")
    if disagree:
        print(f"the flink profile disagrees with Flink on {disagree} of {total} streams", file=sys.stderr)
        return 1
    print(f"check: the flink profile agrees with Flink on all {total} streams")
    return 0


if __name__ == "__main__":
    sys.exit(main())
