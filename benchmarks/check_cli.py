"""``windtunnel check`` on a user's job as a user runs it: one cold command per job shape.

Each shape of ``examples/spark_jobs`` (docs/conformance.md, "Job shapes") is checked with the
documented command, ``--examples 100``, in a process of its own (a new JVM: JIT warm-up and
the session's start count, as they do for a user). The baseline runs the same commands with
settings switched back in a wrapper, so both sides run on this machine in this run:
``--baseline agent`` (the default) without the closure checks agent alone; ``--baseline
all`` also with the optimizing JIT, Spark's code generation in the feeding session and two
lanes. Each command must pass (the job agrees with its spec: exit 0) and both sides check
as many scenarios, else the script stops. Prints seconds and scenarios/min per shape and
the ratio:

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

BASELINES = {
    "agent": """
import sys
from windtunnel.spark_impl import session
session.closure_checks_conf = lambda conf: {}
""",
    "all": """
import sys
from windtunnel.spark_impl import session
from windtunnel.spark_impl.harness import job_lanes, memory_feed
session.closure_checks_conf = lambda conf: {}
session.CHECK_CONF.clear()
memory_feed.FEEDING_CONF.pop("spark.sql.codegen.wholeStage")
memory_feed.FEEDING_CONF.pop("spark.sql.codegen.factoryMode")
job_lanes.DEFAULT_LANES = 2
""",
}
"""The baselines: the CLI with these settings switched back."""

RUN_CLI = """
from windtunnel.cli.main import main
sys.argv[0] = "windtunnel"
main()
"""


def _tree_cpu_s(root: int, seen: dict[int, float]) -> None:
    """Record the CPU seconds (user + system) of ``root`` and its descendants in ``seen``
    (the last value read per process: a process's time only grows)."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        times[pid] = (int(fields[11]) + int(fields[12])) / tick
    stack = [root]
    while stack:
        pid = stack.pop()
        if pid in times:
            seen[pid] = times[pid]
        stack.extend(children.get(pid, []))


def run(job: str, examples: int, baseline: str | None) -> tuple[float, float, int]:
    """Seconds of one cold ``windtunnel check`` of ``job`` (with ``baseline``'s settings
    switched back, if given), the CPU seconds of its processes (the JVM's included, read
    from ``/proc`` every half second: 0 where there is none) and the scenarios it checked."""
    spec, extra = COMMANDS[job]
    args = ["check", str(SHAPES / spec), "--job", f"spark_shapes:{job}",
            "--examples", str(examples), *extra]
    command = ([sys.executable, "-c", BASELINES[baseline] + RUN_CLI, *args] if baseline
               else [str(Path(sys.executable).with_name("windtunnel")), *args])
    env = {**os.environ, "PYTHONPATH": str(SHAPES)}
    start = time.perf_counter()
    cpu: dict[int, float] = {}
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as process:
        while process.poll() is None:
            if Path("/proc/self/stat").is_file():
                _tree_cpu_s(process.pid, cpu)
            time.sleep(0.5)
        stdout, stderr = process.communicate()
    took = time.perf_counter() - start
    found = re.search(r"checked (\d+) scenarios", stdout)
    if process.returncode != 0 or not found:
        raise SystemExit(f"{job}: exit {process.returncode}\n{stdout}\n{stderr}")
    return took, sum(cpu.values()), int(found.group(1))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=",".join(COMMANDS))
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--baseline", choices=sorted(BASELINES), default="agent")
    args = parser.parse_args(argv)
    print(f"windtunnel check --examples {args.examples}, one cold process per command "
          f"(baseline: {args.baseline}):")
    for job in args.shapes.split(","):
        before, before_cpu, checked = run(job, args.examples, args.baseline)
        now, now_cpu, checked_now = run(job, args.examples, None)
        assert checked_now == checked, f"{job}: {checked_now} scenarios checked, the baseline {checked}"
        print(f"  {job}: {now:.1f} s ({60 * checked / now:.0f} scenarios/min, {now_cpu:.0f} CPU-s); "
              f"before {before:.1f} s ({60 * checked / before:.0f}/min, {before_cpu:.0f} CPU-s); "
              f"{before / now:.2f}x wall, {before_cpu / max(now_cpu, 1e-9):.2f}x CPU", flush=True)


if __name__ == "__main__":
    main()
