"""Running the operator's bucket step the way Spark does, without Spark (for fast tests).

Per micro-batch, each bucket's rows are shuffled (Spark guarantees no order inside a
micro-batch) and fed to the bucket's driver, which is pickled and unpickled between
micro-batches exactly as the Spark processor stores it in its ValueState.
"""

from __future__ import annotations

import random
from typing import Any

import pandas as pd

from windtunnel.oracle.model.results import Output
from windtunnel.oracle.scenario import Scenario
from windtunnel.spark_impl.general.processor import BucketStep, dump_driver, load_driver
from windtunnel.spark_impl.harness.feed import Feed
from windtunnel.spark_impl.schema import CLOCK, END, INPUT_COLUMNS, output_of, print_order


def spread(fed: Feed, buckets: int) -> list[dict[int, list[tuple[Any, ...]]]]:
    """Each micro-batch's rows by bucket, control rows copied to every bucket (as prepare does)."""
    out = []
    for batch in fed.batches:
        by: dict[int, list[tuple[Any, ...]]] = {}
        for row in batch:
            targets = range(buckets) if row[1] in (CLOCK, END) else [row[0]]
            for bucket in targets:
                by.setdefault(bucket, []).append((bucket, *row[1:]))
        out.append(by)
    return out


def run_locally(scenario: Scenario, fed: Feed, buckets: int, seed: int = 0) -> list[Output]:
    rng = random.Random(seed)
    step = BucketStep(
        scenario.query,
        scenario.rules,
        time_unit_ms=scenario.time_unit_ms,
        start_wall_ms=scenario.start_wall_ms,
    )
    state: dict[int, bytes] = {}
    records: list[dict[str, Any]] = []
    for by in spread(fed, buckets):
        for bucket, rows in by.items():
            rows = list(rows)
            rng.shuffle(rows)
            frame = pd.DataFrame(rows, columns=list(INPUT_COLUMNS))
            for name in ("seq", "arrival_ms", "after_seq"):
                frame[name] = frame[name].astype("Int64")
            driver = load_driver(state[bucket]) if bucket in state else step.new_driver()
            records += step.run(driver, [frame])
            state[bucket] = dump_driver(driver)
    return [output_of(r) for r in sorted(records, key=print_order)]
