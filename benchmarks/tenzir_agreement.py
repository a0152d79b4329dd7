"""Agreement between the real Tenzir engine and the default (tenzir) profile, per window kind.

Usage: python benchmarks/tenzir_agreement.py [--examples N] [--kinds fixed,session,...]
[--seed S] [--show K]

For each kind, a handful of specs (sizes, hops, tolerances, caps, grouping, aggregate
or pass-through) each get N/len(specs) generated streams (``windtunnel check``'s
generator); all run on the engine (one ``tenzir`` process per spec) and under the
oracle, and the script prints a markdown table: scenarios, agreeing, and the first K
disagreements per kind; it exits 1 when any scenario disagrees. It needs the ``[tenzir]`` extra. The table in docs/engines.md
comes from ``python benchmarks/tenzir_agreement.py --examples 200``. ``idle_timeout``
scenarios run paced in wall time (stable ones only, ``conformance/paced.py``): each call
takes about 20 s whatever its size.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator

from windtunnel.conformance.check import compare_run, describe_output
from windtunnel.conformance.generate import generate
from windtunnel.conformance.paced import Pacing, paced_variant
from windtunnel.conformance.targets import oracle_outputs
from windtunnel.conformance.targets.tenzir import tenzir_binary, tenzir_target, tenzir_version
from windtunnel.oracle.scenario import Scenario, parse_scenario

AGG = {"n": "count()", "s": "sum(x)", "xs": "collect(x)", "first_x": "first(x)", "m": "avg(x)"}

SPECS: dict[str, list[dict[str, object]]] = {
    "fixed": [
        {"window": {"kind": "fixed", "size": "10s"}, "aggregate": AGG},
        {"window": {"kind": "fixed", "size": "10s", "tolerance": "5s"}, "group_by": ["k"],
         "aggregate": AGG},
        {"window": {"kind": "fixed", "size": "10s"}, "group_by": ["k"]},
    ],
    "hopping": [
        {"window": {"kind": "fixed", "size": "10s", "every": "4s"}, "aggregate": AGG},
        {"window": {"kind": "fixed", "size": "10s", "every": "5s", "tolerance": "3s"},
         "group_by": ["k"], "aggregate": AGG},
        {"window": {"kind": "fixed", "size": "6s", "every": "3s"}, "group_by": ["k"]},
    ],
    "session": [
        {"window": {"kind": "session", "gap": "10s"}, "aggregate": AGG},
        {"window": {"kind": "session", "gap": "10s", "tolerance": "5s"}, "group_by": ["k"],
         "aggregate": AGG},
        {"window": {"kind": "session", "gap": "10s", "max_duration": "15s"}, "aggregate": AGG},
        {"window": {"kind": "session", "gap": "10s", "max_events": 3}, "group_by": ["k"],
         "aggregate": AGG},
        {"window": {"kind": "session", "gap": "5s"}, "group_by": ["k"]},
    ],
    "count": [
        {"window": {"kind": "count", "count": 3}, "aggregate": AGG},
        {"window": {"kind": "count", "count": 4, "every": 2}, "group_by": ["k"], "aggregate": AGG},
        {"window": {"kind": "count", "count": 2}, "group_by": ["k"]},
    ],
    "trailing": [
        {"window": {"kind": "trailing", "size": "10s"}, "aggregate": AGG},
        {"window": {"kind": "trailing", "size": "10s", "every": "4s"}, "group_by": ["k"],
         "aggregate": AGG},
        {"window": {"kind": "trailing", "size": "5s"}, "group_by": ["k"]},
        {"window": {"kind": "trailing", "size": "10s", "tolerance": "4s"}, "group_by": ["k"],
         "aggregate": AGG},
        {"window": {"kind": "trailing", "size": "10s", "every": "3s", "trigger": "x >= 3"},
         "aggregate": AGG},
    ],
    "trailing_count": [
        {"window": {"kind": "trailing", "count": 3}, "aggregate": AGG},
        {"window": {"kind": "trailing", "count": 4, "every": 2}, "group_by": ["k"],
         "aggregate": AGG},
        {"window": {"kind": "trailing", "count": 3, "every": 2, "trigger": "x != 4"},
         "aggregate": AGG},
        {"window": {"kind": "trailing", "count": 2, "trigger": "x > 2"}, "group_by": ["k"]},
    ],
    # paced through `delay` in wall time (conformance/paced.py): fewer, slower scenarios
    "idle_timeout": [
        {"window": {"kind": "fixed", "size": "10s", "idle_timeout": "300ms"}, "group_by": ["k"],
         "aggregate": AGG},
        {"window": {"kind": "fixed", "size": "10s", "every": "5s", "tolerance": "2s",
                    "idle_timeout": "300ms"}, "group_by": ["k"], "aggregate": AGG},
        {"window": {"kind": "session", "gap": "5s", "idle_timeout": "300ms"}, "group_by": ["k"],
         "aggregate": AGG},
        {"window": {"kind": "session", "gap": "5s", "tolerance": "3s", "max_events": 3,
                    "idle_timeout": "300ms"}, "group_by": ["k"], "aggregate": AGG},
    ],
}
PACING = Pacing(300)


def specs(kind: str) -> Iterator[Scenario]:
    for index, block in enumerate(SPECS[kind]):
        yield parse_scenario({"name": f"{kind}-{index}", **block, "input": []})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=60, help="scenarios per kind")
    parser.add_argument("--kinds", default=",".join(SPECS), help="comma-separated kinds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=2, help="disagreements shown per kind")
    args = parser.parse_args(argv)
    binary = tenzir_binary()
    if binary is None:
        print("the tenzir engine is not installed: pip install 'windtunnel[tenzir]'", file=sys.stderr)
        return 2
    target = tenzir_target()
    print(f"Tenzir {tenzir_version(binary)}, seed {args.seed}, {args.examples} scenarios per kind\n")
    print("| kind | scenarios | agree | rate |")
    print("|---|---:|---:|---:|")
    shown: list[str] = []
    total = agreeing = 0
    started = time.monotonic()
    for kind in args.kinds.split(","):
        kind_specs = list(specs(kind))
        per_spec = max(1, args.examples // len(kind_specs))
        count = agree = 0
        for spec in kind_specs:
            scenarios = list(generate(spec, per_spec, args.seed))
            if kind == "idle_timeout":
                paced = (paced_variant(s, PACING) for s in scenarios)
                scenarios = [s for s in paced if s is not None]
            runs = target.run_many(scenarios)
            for scenario, got in zip(scenarios, runs, strict=True):
                want = oracle_outputs(scenario)
                mismatch = compare_run(want, [None] * len(want), got, drops=True, timing=False)
                count += 1
                if not mismatch:
                    agree += 1
                elif sum(s.startswith(f"{kind}:") for s in shown) < args.show:
                    lines = [f"{kind}: {scenario.name} {describe(scenario)}"]
                    lines += [f"    oracle only: {describe_output(o)}" for o in mismatch.missing]
                    lines += [f"    tenzir only: {describe_output(o)}" for o in mismatch.unexpected]
                    shown.append("\n".join(lines))
        total += count
        agreeing += agree
        print(f"| {kind} | {count} | {agree} | {100 * agree / max(count, 1):.0f}% |")
    seconds = time.monotonic() - started
    print(f"\n{agreeing}/{total} agree; {total * 60 / seconds:.0f} scenarios/min (engine and oracle)")
    for text in shown:
        print("\n" + text)
    if agreeing < total:
        print(f"the tenzir profile disagrees with Tenzir on {total - agreeing} of {total} scenarios",
              file=sys.stderr)
        return 1
    return 0


def describe(scenario: Scenario) -> str:
    from windtunnel.oracle.model.stream import Batch, Event

    parts = []
    for item in scenario.items:
        for event in item.events if isinstance(item, Batch) else [item]:
            if isinstance(event, Event):
                parts.append(str(dict(event.payload)))
    return "[" + ", ".join(parts) + "]"


if __name__ == "__main__":
    sys.exit(main())
