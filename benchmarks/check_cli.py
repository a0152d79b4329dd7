"""``windtunnel check`` on a user's job as a user runs it: one cold command per job shape.

Each shape of ``examples/spark_jobs`` (docs/conformance.md, "Job shapes") is checked with the
documented command, ``--examples 100``, in a process of its own (a new JVM: JIT warm-up and
the session's start count, as they do for a user). The baseline runs the same commands with
the check settings of before (the optimizing JIT, Spark's code generation in the feeding
session, two lanes) switched back in a wrapper, so both sides run on this machine in this
run. Prints seconds and scenarios/min per shape and the ratio:

    python benchmarks/check_cli.py [--shapes logins_per_user,merchant_stats] [--examples 100]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHAPES = ROOT / "examples" / "spark_jobs"

COMMANDS = {
    "logins_per_user": ("logins.yaml", []),
    "logins_sql": ("logins.yaml", []),
    "merchant_stats": ("payments.yaml", []),
    "device_sessions": ("sessions.yaml", []),
    "clicks_deduplicated": ("clicks.yaml", []),
    "merchant_totals": ("totals-update.yaml", []),
    "totals_for_upsert": ("totals-update.yaml", ["--compare", "final"]),
}
"""Job -> (spec, extra options): the table of docs/conformance.md."""

BEFORE = """
import sys
from windtunnel.spark_impl import session
from windtunnel.spark_impl.harness import job_lanes, memory_feed
session.CHECK_CONF.clear()
memory_feed.FEEDING_CONF.pop("spark.sql.codegen.wholeStage")
memory_feed.FEEDING_CONF.pop("spark.sql.codegen.factoryMode")
job_lanes.DEFAULT_LANES = 2
from windtunnel.cli.main import main
sys.argv[0] = "windtunnel"
main()
"""
"""The baseline: the CLI with the settings of before this benchmark's change."""


def run(job: str, examples: int, before: bool) -> tuple[float, int]:
    """Seconds of one cold ``windtunnel check`` of ``job`` and the scenarios it checked."""
    spec, extra = COMMANDS[job]
    args = ["check", str(SHAPES / spec), "--job", f"spark_shapes:{job}",
            "--examples", str(examples), *extra]
    command = ([sys.executable, "-c", BEFORE, *args] if before
               else [str(Path(sys.executable).with_name("windtunnel")), *args])
    env = {**os.environ, "PYTHONPATH": str(SHAPES)}
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    found = re.search(r"checked (\d+) scenarios", done.stdout)
    if done.returncode != 0 or not found:
        raise SystemExit(f"{job}: exit {done.returncode}\n{done.stdout}\n{done.stderr}")
    return took, int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=",".join(COMMANDS))
    parser.add_argument("--examples", type=int, default=100)
    args = parser.parse_args()
    print(f"windtunnel check --examples {args.examples}, one cold process per command:")
    for job in args.shapes.split(","):
        before, checked = run(job, args.examples, before=True)
        now, _ = run(job, args.examples, before=False)
        print(f"  {job}: {now:.1f} s ({60 * checked / now:.0f} scenarios/min); before "
              f"{before:.1f} s ({60 * checked / before:.0f}/min); {before / now:.2f}x", flush=True)


if __name__ == "__main__":
    main()
