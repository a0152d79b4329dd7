"""The Flink harness JVM (``conformance/flink/server.py``): one per Python process, reused by
every run, replaced when it dies, stopped at exit; a failing job is one error and leaves the
JVM usable; a batch of any size runs (scenarios in chunks, one task each); cumulating
scenarios sharing one Flink SQL query get the rows each gets alone. Skipped without the
``[flink]`` extra or Java."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from windtunnel.conformance.check import compare_run
from windtunnel.conformance.differential import canonical
from windtunnel.conformance.flink import runtime, server
from windtunnel.conformance.flink.runtime import run_harness
from windtunnel.conformance.flink.windows import outputs_of, parse, prepare
from windtunnel.conformance.generate import generate
from windtunnel.conformance.targets import oracle_outputs
from windtunnel.oracle.model.errors import EngineUnavailable
from windtunnel.oracle.model.stream import Watermark, numbered
from windtunnel.oracle.scenario import Scenario, parse_scenario

AVAILABLE = runtime.flink_lib() is not None and runtime.java_binary() is not None
pytestmark = [
    pytest.mark.flink,
    pytest.mark.skipif(not AVAILABLE, reason="needs the [flink] extra and a Java runtime"),
]

SPEC = parse_scenario({
    "profile": "flink", "window": {"kind": "fixed", "size": 10, "tolerance": 1},
    "group_by": ["k"], "aggregate": {"n": "count()"},
    "input": [{"ts": 1, "k": "a"}, {"ts": 12, "k": "b"}, {"ts": 3, "k": "a"}],
})


def agrees(scenarios: list[Scenario]) -> bool:
    from windtunnel.conformance.targets.flink import flink_target

    runs = flink_target().run_many(scenarios)
    return all(
        not compare_run(oracle_outputs(s, "flink"), (), r, drops=True, timing=False)
        for s, r in zip(scenarios, runs, strict=True)
    )


def test_runs_share_one_jvm_and_a_dead_one_is_replaced() -> None:
    assert agrees([SPEC])
    pid = server.running_pid()
    assert pid is not None
    assert agrees([SPEC])
    assert server.running_pid() == pid
    os.kill(pid, signal.SIGTERM)  # the JVM this test's process started (its hooks clean up)
    deadline = time.monotonic() + 60
    while server.running_pid() == pid:  # until it is gone, polled
        assert time.monotonic() < deadline, "the stopped JVM is still the server after 60 s"
        time.sleep(0.1)
    assert agrees([SPEC])
    assert server.running_pid() not in (None, pid)


def test_a_failing_job_is_one_error_and_the_jvm_stays_usable(tmp_path: Path) -> None:
    from windtunnel.conformance.targets.flink import flink_sql_target

    query = tmp_path / "q.sql"
    query.write_text("CREATE TABLE t (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
                     "WITH ('connector' = 'x');\nSELECT window_start, k, COUNT(*) AS n FROM "
                     "TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k;\n",
                     encoding="utf-8")
    assert agrees([SPEC])
    pid = server.running_pid()
    with pytest.raises(EngineUnavailable, match=r"the Flink harness failed: .*Exception") as caught:
        flink_sql_target(str(query)).run_many([SPEC])
    assert "\n" not in str(caught.value)
    assert server.running_pid() == pid
    assert agrees([SPEC])


def test_a_batch_runs_in_chunks_of_scenarios() -> None:
    # one branch per scenario, CHUNK branches per task: 1,000 branches chained into one task
    # overflowed the JVM's stack when the job finished; 120 make three tasks
    scenarios = [replace(SPEC, items=numbered([{"ts": n % 23, "k": "ab"[n % 2]}]))
                 for n in range(120)]
    assert agrees(scenarios)


def test_the_jvm_stops_when_python_exits() -> None:
    code = ("from windtunnel.conformance.flink import runtime, server\n"
            "runtime.run_harness('WindowHarness', [])\nprint(server.running_pid())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    pid = int(done.stdout.strip())
    assert not Path(f"/proc/{pid}").exists()


def test_cumulating_scenarios_sharing_one_query_get_the_rows_each_gets_alone() -> None:
    # CumulateHarness runs scenarios with one window on one Flink SQL query, one after
    # another, each moved to a time range of its own; kind c runs each on a query of its own
    spec = parse_scenario({
        "profile": "flink", "window": {"kind": "cumulate", "step": 3, "size": 12, "tolerance": 2},
        "group_by": ["k"], "aggregate": {"n": "count()", "vs": "collect(v)"}, "input": [],
    })
    scenarios = list(generate(spec, 24, seed=5))
    scenarios.append(replace(spec, items=(*numbered([{"ts": -30, "k": "a", "v": 1},
                                                     {"ts": 40, "k": "a", "v": 2}]),
                                          Watermark(-100), Watermark(35))))

    def outputs(kind: str) -> list[list[str]]:
        prepared = [prepare(s, sid) for sid, s in enumerate(scenarios)]
        lines = [line.replace("\tC\t", f"\t{kind}\t", 1) if line.startswith("S\t") else line
                 for p in prepared for line in p.lines]
        firings, late = parse(run_harness("WindowHarness", lines))
        return [sorted(canonical(o) for o in outputs_of(s.query, p, firings.get(sid, []),
                                                         late.get(sid, [])))
                for sid, (s, p) in enumerate(zip(scenarios, prepared, strict=True))]

    shared, alone = outputs("C"), outputs("c")
    assert sum(map(len, alone)) > 100
    assert shared == alone
