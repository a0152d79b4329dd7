"""Nexmark's window stages and the realistic shape on three engines, same files, one process.

Stages (each a stream of JSON lines files written by ``windtunnel generate nexmark --columns
--format spark-dir``, ``--files`` per micro-batch, 10 micro-batches; the realistic shape's
stream from ``benchmarks/spark_jobs.py`` written as JSON lines the same way):

- ``q5``: examples/nexmark/q5-hot-items.yaml: bids per auction, 10 s windows every 2 s;
- ``q7``: examples/nexmark/q7-highest-bid.yaml: the highest bid price, 10 s tumbling;
- ``q8``: examples/nexmark/q8-new-sellers.yaml: new auctions per seller, 10 s tumbling,
  over a stream of auctions alone;
- ``realistic``: ``spark_jobs.py``'s realistic shape (string users, 10-minute windows every
  minute, count + sum + avg, tolerance one minute).

Sides:

- ``production``: ``run_job`` into Parquet (``spark_jobs.run_production``), ``local[2]``;
- ``stock``: ``withWatermark`` + ``window`` into ``noop`` (``spark_jobs.run_stock``);
- ``flink-p1``, ``flink-p2``: the real Flink engine (the ``flink`` extra's jars, Java 17):
  the stage as Flink SQL (a ``filesystem`` + ``json`` table with ``WATERMARK FOR rowtime AS
  rowtime - tolerance`` and a ``HOP``/``TUMBLE`` window TVF aggregation, as Nexmark's own
  Flink queries) into a ``blackhole`` sink, on one MiniCluster at parallelism 1 and 2
  (``benchmarks/jvm/windtunnel/flink/NexmarkBench.java``, compiled against the harness jar).

Before any timing, each side runs ``--check-events`` events of every stage through its
conformance target and is compared with the oracle under its own profile (production:
``tenzir``, the ``spark`` target; stock: ``spark``, ``spark-stock``; Flink: ``flink``, the
stage's SQL through ``--flink-sql``'s target); a disagreement stops the benchmark (exit 1).

Each side is timed from query start to its end, best of ``--repeat`` after a warm run on
20,000 events. Prints events/s and events/s per core (Spark: the session's 2 task slots;
Flink: its parallelism) and the ratios: production/stock (events/s) and production's per-core
rate over each Flink run's.

Run: python benchmarks/nexmark.py [--stages q5,q7,q8,realistic] [--events N]
     [--check-events N] [--repeat R] [--files F] [--sides production,stock,flink-p1,flink-p2]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import spark_jobs

from windtunnel.oracle.loading import read_scenario_data
from windtunnel.oracle.model.spec import FixedWindows, Query
from windtunnel.oracle.scenario import Scenario, parse_scenario

ROOT = Path(__file__).resolve().parent.parent
SPARK_CORES = 2
CHECK_BATCHES = 4
"""Micro-batches (files) of the checked runs."""
WARM_EVENTS = 20_000
BENCH_JAVA = Path(__file__).resolve().parent / "jvm" / "windtunnel" / "flink" / "NexmarkBench.java"
LABELS = ("seq", "arrival_ms", "truth", "tag")
"""The label columns ``generate --columns`` adds to each record (not event fields)."""

REALISTIC = {
    "name": "realistic",
    "profile": "tenzir",
    "time_unit": "ms",
    "start_wall": spark_jobs.EPOCH,
    "window": {"kind": "fixed", "size": "10min", "every": "1min", "tolerance": "1min", "on": "ts"},
    "group_by": "user",
    "aggregate": {"n": "count()", "total": "sum(amount)", "mean": "avg(amount)"},
}


@dataclass(frozen=True, slots=True)
class Stage:
    """A benchmark stage: its spec (no input), the events it reads, their columns."""

    name: str
    spec: dict[str, Any]
    source: str
    """``bid`` or ``auction`` (Nexmark kinds), or ``realistic``."""
    columns: dict[str, str]
    """The fields the stage reads and their Spark types (``long``, ``string``, ``double``)."""

    @property
    def query(self) -> Query:
        return parse_scenario({**self.spec, "input": []}).query

    def shape(self, events: int) -> spark_jobs.Shape:
        """The stage as ``spark_jobs``'s shape over its JSON lines files."""
        window = self.query.window
        assert isinstance(window, FixedWindows)
        fields = ", ".join(f"{name} {kind}" for name, kind in self.columns.items())
        return spark_jobs.Shape(self.name, events, 0, self.query, window.tolerance_ms,
                                self.columns.get("user") == "string",
                                f"seq long, arrival_ms long, {fields}", "json")


def example(name: str) -> dict[str, Any]:
    data = dict(read_scenario_data(ROOT / "examples" / "nexmark" / name))
    data.pop("input", None)
    data.pop("expect", None)
    return data


STAGES = {
    "q5": Stage("q5", example("q5-hot-items.yaml"), "bid", {"auction": "long", "dateTime": "long"}),
    "q7": Stage("q7", example("q7-highest-bid.yaml"), "bid", {"price": "long", "dateTime": "long"}),
    "q8": Stage("q8", example("q8-new-sellers.yaml"), "auction",
                {"seller": "long", "dateTime": "long"}),
    "realistic": Stage("realistic", REALISTIC, "realistic",
                       {"ts": "long", "user": "string", "amount": "double"}),
}


# ---------------------------------------------------------------- files


def write_source(source: str, events: int, directory: Path, batches: int, seed: int) -> None:
    """``events`` records of ``source`` as ``batches`` JSON lines files in ``directory``."""
    if source == "realistic":
        shape = spark_jobs.shapes(events, None)["realistic"]
        frame = shape.table(events, seed).to_pandas()
        directory.mkdir(parents=True)
        bounds = np.linspace(0, len(frame), batches + 1).astype(int)
        for index in range(batches):
            part = frame.iloc[bounds[index] : bounds[index + 1]]
            part.to_json(directory / f"batch-{index:08d}.jsonl", orient="records", lines=True)
        return
    from windtunnel.simulator.column_outputs import write_spark_dir_columns
    from windtunnel.simulator.workloads import simulate

    simulation = simulate("nexmark", events=events, seed=seed, nexmark_kinds=source,
                          batch_size=-(-events // batches))
    write_spark_dir_columns(simulation, directory)


def scenario_of(stage: Stage, directory: Path) -> Scenario:
    """The stage's spec with the records in ``directory`` as its input: one ``batch`` item
    (one micro-batch) per file, records in ``seq`` order."""
    batches = []
    for path in sorted(directory.glob("*.jsonl")):
        records = sorted((json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                          if line), key=lambda r: r["seq"])
        batches.append({"batch": [{"event": {k: v for k, v in r.items() if k not in LABELS},
                                   "at": r["arrival_ms"]} for r in records]})
    return parse_scenario({**stage.spec, "input": batches})


# ---------------------------------------------------------------- Flink


def interval(ms: int) -> str:
    """``ms`` as a Flink SQL interval literal (minutes when whole, else seconds)."""
    if ms and ms % 60_000 == 0:
        return f"INTERVAL '{ms // 60_000}' MINUTE"
    return f"INTERVAL '{ms / 1000:g}' SECOND"


def flink_sql(stage: Stage, path: Path) -> tuple[str, str]:
    """The stage as Flink SQL: a ``CREATE TABLE src`` over the JSON lines in ``path`` and
    the window TVF query over it."""
    query = stage.query
    window = query.window
    assert isinstance(window, FixedWindows)
    kinds = {"long": "BIGINT", "string": "STRING", "double": "DOUBLE"}
    columns = ", ".join(f"`{name}` {kinds[kind]}" for name, kind in stage.columns.items())
    ddl = (f"CREATE TABLE src ({columns}, rowtime AS TO_TIMESTAMP_LTZ(`{window.on}`, 3), "
           f"WATERMARK FOR rowtime AS rowtime - {interval(window.tolerance_ms)}) "
           f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json')")
    size = interval(window.size_ms)
    tvf = (f"HOP(TABLE src, DESCRIPTOR(rowtime), {interval(window.every_ms)}, {size})"
           if window.every_ms else f"TUMBLE(TABLE src, DESCRIPTOR(rowtime), {size})")
    aggregates = [("COUNT(*)" if a.function == "count" else f"{a.function.upper()}(`{a.field}`)")
                  + f" AS {a.name}" for a in query.aggregate or ()]
    groups = [f"`{g}`" for g in query.group_by]
    select = (f"SELECT {', '.join([*groups, *aggregates])}, window_start, window_end "
              f"FROM TABLE({tvf}) GROUP BY {', '.join([*groups, 'window_start', 'window_end'])}")
    return ddl, select


def compiled(cp: str) -> Path:
    """``NexmarkBench`` compiled against ``cp`` (once per source and class path)."""
    key = hashlib.sha256(BENCH_JAVA.read_bytes() + cp.encode()).hexdigest()[:16]
    classes = Path(tempfile.gettempdir()) / f"windtunnel-nexmark-bench-{key}"
    if not classes.is_dir():
        building = Path(tempfile.mkdtemp(prefix=classes.name + "-"))
        subprocess.run(["javac", "--release", "17", "-cp", cp, "-d", str(building),
                        str(BENCH_JAVA)], check=True)
        building.rename(classes)
    return classes


def flink_times(jobs: list[tuple[str, Stage, Path]], parallelism: int) -> dict[str, float]:
    """Seconds per job name, the jobs run in order on one MiniCluster at ``parallelism``."""
    from windtunnel.conformance.flink.runtime import classpath, java_or_fail

    cp = classpath()
    java = java_or_fail()
    classes = compiled(cp)
    with tempfile.TemporaryDirectory(prefix="nexmark-flink-") as tmp:
        arguments = []
        for name, stage, path in jobs:
            sql = Path(tmp) / f"{name}.sql"
            sql.write_text(";\n".join(flink_sql(stage, path)) + "\n", encoding="utf-8")
            arguments.append(f"{name}={sql}")
        done = subprocess.run(
            [java, "-Xmx2g", "-cp", f"{classes}:{cp}", "windtunnel.flink.NexmarkBench",
             str(parallelism), *arguments],
            capture_output=True, text=True, check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"the Flink benchmark failed:\n{done.stderr[-3000:]}")
    return {name: float(seconds) for name, seconds in
            (line.split("\t") for line in done.stdout.splitlines() if "\t" in line)}


# ---------------------------------------------------------------- checks


def targets(spark: Any, stage: Stage, directory: Path) -> dict[str, tuple[Any, str]]:
    """Each side's conformance target and the oracle profile it is held to."""
    from windtunnel.conformance.flink.sql import FlinkSql
    from windtunnel.conformance.targets.flink import FlinkSqlTarget
    from windtunnel.conformance.targets.spark import production_target, stock_target

    ddl, select = flink_sql(stage, directory)
    flink = FlinkSqlTarget(FlinkSql(f"{stage.name}.sql", ddl, "src", select))
    return {"production": (production_target(spark), "tenzir"),
            "stock": (stock_target(spark), "spark"),
            "flink": (flink, "flink")}


def check_sides(spark: Any, stage: Stage, directory: Path, sides: list[str]) -> None:
    """Each side's output on the records in ``directory`` against the oracle; exits 1 on the
    first disagreement."""
    from windtunnel.conformance.check import check

    scenario = scenario_of(stage, directory)
    events = sum(1 for path in directory.glob("*.jsonl")
                 for line in path.read_text(encoding="utf-8").splitlines() if line)
    wanted = {s.removesuffix("-p1").removesuffix("-p2") for s in sides}
    for side, (target, profile) in targets(spark, stage, directory).items():
        if side not in wanted:
            continue
        result = check(replace(scenario, name=f"nexmark-{stage.name}"), target, profile=profile,
                       examples=0, shrink_seconds=5.0)
        verdict = "agrees" if result.failure is None else "DISAGREES"
        print(f"check {stage.name:9s} {side:10s} ({events} events, profile "
              f"{profile}): {verdict} with the oracle", flush=True)
        if result.failure is not None:
            print(result.failure, flush=True)
            raise SystemExit(1)


# ---------------------------------------------------------------- timing and report


def spark_rates(spark: Any, stage: Stage, data: Path, warm: Path, events: int, repeat: int,
                sides: list[str]) -> dict[str, float]:
    runs = {"production": spark_jobs.run_production, "stock": spark_jobs.run_stock}
    chosen = [s for s in sides if s in runs]
    shape = stage.shape(events)
    for side in chosen:
        runs[side](spark, shape, warm)
    best: dict[str, float] = {}
    for _ in range(repeat):
        for side in chosen:
            seconds = runs[side](spark, shape, data)
            best[side] = min(best.get(side, seconds), seconds)
    return {side: events / seconds for side, seconds in best.items()}


CORES = {"production": SPARK_CORES, "stock": SPARK_CORES, "flink-p1": 1, "flink-p2": 2}


def report(results: dict[str, dict[str, float]]) -> None:
    flinks = [s for s in ("flink-p1", "flink-p2") if any(s in r for r in results.values())]
    head = f"{'stage':10s} {'side':11s} {'events/s':>10s} {'per core':>10s} {'prod/stock':>10s}"
    head += "".join(f" {'prod/' + s + ' per core':>24s}" for s in flinks)
    print(head)
    for name, rates in results.items():
        for side, rate in rates.items():
            per_core = rate / CORES[side]
            line = f"{name:10s} {side:11s} {rate:10,.0f} {per_core:10,.0f}"
            if side == "production":
                line += f" {rate / rates['stock']:9.2f}x" if "stock" in rates else f" {'':>10s}"
                for flink in flinks:
                    if flink in rates:
                        line += f" {per_core / (rates[flink] / CORES[flink]):23.2f}x"
            print(line, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stages", default="q5,q7,q8,realistic")
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--check-events", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--files", type=int, default=2, help="input files per micro-batch")
    parser.add_argument("--sides", default="production,stock,flink-p1,flink-p2")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    spark_jobs.FILES_PER_BATCH = args.files
    names = [n for n in args.stages.split(",") if n]
    sides = [s for s in args.sides.split(",") if s]
    for value, known, option in ((names, STAGES, "--stages"), (sides, CORES, "--sides")):
        unknown = sorted(set(value) - set(known))
        if unknown:
            parser.error(f"{option}: unknown {unknown}; use some of {', '.join(known)}")
    spark = None
    if {"production", "stock"} & set(sides):
        from windtunnel.spark_impl.session import spark_session

        spark = spark_session(master=f"local[{SPARK_CORES}]")
        spark.sparkContext.setLogLevel("ERROR")
    root = Path(tempfile.mkdtemp(prefix="bench-nexmark-"))
    batches = 10 * args.files
    files: dict[str, tuple[Path, Path]] = {}
    for source in dict.fromkeys(STAGES[n].source for n in names):
        sized = {"data": (args.events, batches), "warm": (min(WARM_EVENTS, args.events), batches),
                 "check": (args.check_events, CHECK_BATCHES)}
        for label, (count, files_of) in sized.items():
            write_source(source, count, root / f"{source}-{label}", files_of, args.seed)
        files[source] = (root / f"{source}-data", root / f"{source}-warm")
    for name in names:
        check_sides(spark, STAGES[name], root / f"{STAGES[name].source}-check", sides)
    results: dict[str, dict[str, float]] = {}
    for name in names:
        data, warm = files[STAGES[name].source]
        results[name] = {} if spark is None else spark_rates(spark, STAGES[name], data, warm, args.events, args.repeat, sides)
    for side in (s for s in sides if s.startswith("flink")):
        jobs = []
        for name in names:
            data, warm = files[STAGES[name].source]
            jobs.append((f"{name}#warm", STAGES[name], warm))
            jobs += [(f"{name}#{r}", STAGES[name], data) for r in range(args.repeat)]
        seconds = flink_times(jobs, int(side.removeprefix("flink-p")))
        for name in names:
            best = min(seconds[f"{name}#{r}"] for r in range(args.repeat))
            results[name][side] = args.events / best
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
