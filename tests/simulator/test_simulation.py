"""The stream builder: determinism, ground truth against the oracle, and every knob's effect."""

from __future__ import annotations

import math
import tracemalloc
from typing import Any

import numpy as np
import pytest

from windtunnel.oracle.engine import run
from windtunnel.oracle.model.results import Drop
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Aggregation, FixedWindows, Query
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, checked, events_of
from windtunnel.simulator.items import stream_items
from windtunnel.simulator.payloads import payload_dicts
from windtunnel.simulator.simulation import BRIDGE, DUPLICATE, LATE_INJECTED, Simulation
from windtunnel.simulator.truth import TRUTH_NAMES
from windtunnel.simulator.workloads import simulate


def table_of(sim: Simulation) -> dict[str, np.ndarray]:
    chunks = list(sim.chunks())
    return {name: np.concatenate([c[name] for c in chunks]) for name in chunks[0]}


def oracle_drops(sim: Simulation) -> dict[int, str]:
    """Run the oracle (default profile) with the simulation's late spec over its items."""
    spec = sim.late_spec
    workload = sim.workload
    query = Query(
        FixedWindows(
            spec.size_ms,
            on=workload.time_field,
            every_ms=spec.every_ms,
            tolerance_ms=spec.tolerance_ms,
        ),
        group_by=tuple(workload.group_by()) if spec.clock_scope == "key" else (),
        aggregate=(Aggregation("n", "count"),),
    )
    result = run(
        query,
        stream_items(sim),
        rules=Rules(clock_scope=spec.clock_scope),
        start_wall_ms=sim.knobs.start_ms,
    )
    return {o.seq: o.reason for o in result.outputs if isinstance(o, Drop)}


def labelled(workload: str, **knobs: Any) -> dict[int, str]:
    table = table_of(simulate(workload, **knobs))
    return {
        s: TRUTH_NAMES[t]
        for s, t in zip(table["seq"].tolist(), table["truth"].tolist(), strict=True)
        if t
    }


GROUND_TRUTH_CASES = [
    ("bare", {"late_fraction": 0.05}),
    ("bare", {"late_fraction": 0.1, "delay": "uniform", "max_out_of_order": "3s"}),
    ("iot", {"late_fraction": 0.05, "delay": "exponential", "delay_mean": "800"}),
    ("payments", {"late_fraction": 0.02, "null_fraction": 0.01, "invalid_fraction": 0.01}),
    ("plays", {"late_fraction": 0.05, "late_window": "1min/20s+5s", "duplicate_fraction": 0.02}),
    ("auth", {"late_fraction": 0.05, "clock_skew": "2s", "sparse_keys": 10}),
    ("bare", {"outlier_fraction": 0.001, "batch_size": 50, "heartbeat": "1s"}),
    ("iot", {"late_fraction": 0.05, "late_window": "5s+1s@stream", "delay": "lognormal"}),
    ("bare", {"late_fraction": 0.05, "idle_partitions": 1, "idle_every": "3s", "idle_gap": "2s"}),
]


@pytest.mark.parametrize(("workload", "knobs"), GROUND_TRUTH_CASES)
def test_oracle_drops_equal_the_labelled_set(workload: str, knobs: dict[str, Any]) -> None:
    options = {"events": 6_000, "seed": 11, "rate": "2000", **knobs}
    assert oracle_drops(simulate(workload, **options)) == labelled(workload, **options)


@pytest.mark.parametrize(
    ("workload", "p", "knobs"),
    [
        ("bare", 0.05, {"keys": 50}),
        ("bare", 0.2, {"keys": 50, "seed": 6}),
        ("auth", 0.05, {}),  # 10min every 1min + 2min tolerance, clock per (user, src_ip)
        ("plays", 0.02, {"late_window": "1min/20s+5s"}),
        ("iot", 0.05, {"late_window": "5s+1s@stream"}),  # one clock for the stream
    ],
)
def test_late_fraction_matches_the_request_within_tolerance(
    workload: str, p: float, knobs: dict[str, Any]
) -> None:
    # stated tolerance (docs/simulator.md): 4 standard errors plus one record per group
    n = 40_000
    sim = simulate(workload, events=n, late_fraction=p, **{"seed": 5, **knobs})
    table = table_of(sim)
    groups = len(np.unique(sim.group_codes(table)))
    measured = sim.summary.late / n
    assert abs(measured - p) <= 4 * math.sqrt(p * (1 - p) / n) + groups / n
    # every record placed late on purpose is labelled late
    injected = table["tag"] == LATE_INJECTED
    assert (table["truth"][injected] == 1).all()
    # in-order arrivals within tolerance: nothing else is late
    assert sim.summary.late == int(injected.sum())


def test_same_seed_same_stream_other_seed_other_stream() -> None:
    options = {
        "events": 5_000,
        "delay": "exponential",
        "late_fraction": 0.05,
        "duplicate_fraction": 0.01,
        "null_fraction": 0.01,
    }
    a = table_of(simulate("auth", seed=1, **options))
    b = table_of(simulate("auth", seed=1, **options))
    c = table_of(simulate("auth", seed=2, **options))
    assert a.keys() == b.keys()
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["ts"], c["ts"])


def test_stream_items_are_a_valid_oracle_stream() -> None:
    sim = simulate(
        "plays", events=3_000, seed=3, delay="exponential", batch_size=7, heartbeat="50ms"
    )
    items = list(checked(stream_items(sim), sim.knobs.start_ms))
    assert isinstance(items[-1], End)
    events = list(events_of(items))
    assert [e.seq for e in events] == list(range(3_000))
    assert all(len(i.events) <= 7 for i in items if isinstance(i, Batch))
    assert any(isinstance(i, Advance) for i in items)
    assert not any(isinstance(i, Event) for i in items)  # batching: every event in a batch


def test_heartbeats_fill_idle_gaps() -> None:
    sim = simulate("bare", events=200, seed=0, rate="10", heartbeat="30ms")
    items = list(stream_items(sim))
    walls = []
    for item in items:
        if isinstance(item, Advance):
            walls.append(item.to_ms)
        elif isinstance(item, Event):
            assert item.at_ms is not None
            walls.append(item.at_ms)
    # 10 records/s: 100 ms apart, so a heartbeat every 30 ms in between
    assert max(np.diff(walls)) <= 30


def test_memory_stays_flat() -> None:
    def peak(events: int) -> int:
        tracemalloc.start()
        for _ in simulate("bare", events=events, seed=0, delay="exponential").chunks():
            pass
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    assert peak(800_000) < 1.5 * peak(200_000)


# --- rate -------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["constant", "poisson", "bursts", "sine"])
def test_rate_shapes_keep_the_mean_rate(shape: str) -> None:
    sim = simulate(
        "bare",
        events=None,
        duration="60s",
        rate="500",
        rate_shape=shape,
        burst_factor="4",
        burst_duty="0.25",
        burst_period="10s",
        sine_period="10s",
        seed=2,
    )
    table = table_of(sim)
    created = table["created"] - sim.knobs.start_ms
    assert created.max() < 60_000
    if shape == "constant":
        assert len(created) == 30_000
    elif shape == "poisson":
        assert abs(len(created) - 30_000) < 4 * math.sqrt(30_000)
    elif shape == "bursts":
        # a quarter of each 10 s at 4x the base rate: 4 / (0.25 * 4 + 0.75) of the base rate
        in_burst = (created % 10_000) < 2_500
        assert 3.5 < in_burst.sum() / 0.25 / ((~in_burst).sum() / 0.75) < 4.5
    else:
        first_half = (created % 10_000) < 5_000
        assert first_half.sum() > 1.4 * (~first_half).sum()


def test_duration_ends_the_stream_and_flushes_delayed_records() -> None:
    sim = simulate(
        "bare", events=None, duration="10s", rate="100", delay="uniform", max_out_of_order="5s"
    )
    table = table_of(sim)
    assert len(table["seq"]) == 1_000
    assert (np.diff(table["arrival"]) >= 0).all()


# --- keys -------------------------------------------------------------------------------


def test_zipf_skew_and_hot_keys() -> None:
    skewed = table_of(simulate("bare", events=20_000, keys=100, key_skew=1.0))
    counts = np.bincount(skewed["key"], minlength=100)
    assert counts[0] > 5 * counts[20]
    hot = table_of(simulate("bare", events=20_000, keys=100, hot_keys=2, hot_fraction=0.5))
    share = np.isin(hot["key"], [0, 1]).mean()
    assert 0.47 < share < 0.53


def test_sparse_keys_and_idle_partitions_send_nothing_while_idle() -> None:
    sim = simulate(
        "bare",
        events=30_000,
        rate="1000",
        keys=40,
        sparse_keys=4,
        sparse_active="2s",
        sparse_idle="3s",
        idle_partitions=1,
        partition_active="4s",
        partition_idle="2s",
    )
    table = table_of(sim)
    periods = sim.idle_periods()
    assert {p.scope for p in periods} == {"key", "partition"}
    names = sim.workload.keys.values
    for period in periods:
        inside = (table["arrival"] >= period.start_ms) & (table["arrival"] < period.end_ms)
        if period.scope == "key":
            assert not (names[table["key"][inside]] == period.name).any()
        else:
            assert not (table["partition"][inside] == int(period.name)).any()
    # sparse keys do send when active
    assert np.isin(table["key"], [36, 37, 38, 39]).any()


def test_global_idle_gaps_create_nothing() -> None:
    sim = simulate("bare", events=5_000, rate="1000", idle_every="1s", idle_gap="500ms")
    table = table_of(sim)
    offset = (table["created"] - sim.knobs.start_ms) % 1_500
    assert (offset < 1_000).all()
    assert [p.scope for p in sim.idle_periods()][:1] == ["stream"]


# --- disorder ---------------------------------------------------------------------------


def test_bounded_out_of_orderness() -> None:
    table = table_of(simulate("bare", events=20_000, delay="uniform", max_out_of_order="2s"))
    running_max = np.maximum.accumulate(table["ts"])
    assert (running_max - table["ts"]).max() <= 2_000
    assert (running_max - table["ts"]).max() > 1_000
    assert (table["arrival"] - table["created"]).max() <= 2_000


@pytest.mark.parametrize("delay", ["exponential", "lognormal"])
def test_delay_distributions_have_the_mean_and_the_cap(delay: str) -> None:
    table = table_of(simulate("bare", events=20_000, delay=delay, delay_mean="400", max_delay="5s"))
    delays = table["arrival"] - table["created"]
    assert delays.max() <= 5_000
    assert 340 < delays.mean() < 460


def test_outliers_are_stamped_ahead() -> None:
    table = table_of(simulate("bare", events=20_000, outlier_fraction=0.01, outlier_ahead="1h"))
    ahead = table["tag"] == 2
    assert 120 < ahead.sum() < 280
    assert ((table["ts"] - table["created"])[ahead] == 3_600_000).all()


def test_clock_skew_is_constant_per_key() -> None:
    table = table_of(simulate("bare", events=5_000, keys=10, clock_skew="500ms"))
    skew = table["ts"] - table["created"]
    for key in range(10):
        values = np.unique(skew[table["key"] == key])
        assert len(values) == 1 and abs(values[0]) <= 500


def test_nulls_invalid_and_duplicates() -> None:
    sim = simulate(
        "payments",
        events=20_000,
        null_fraction=0.02,
        invalid_fraction=0.01,
        duplicate_fraction=0.02,
    )
    chunks = list(sim.chunks())
    table = {name: np.concatenate([c[name] for c in chunks]) for name in chunks[0]}
    assert 0.015 < (table["status"] == 1).mean() < 0.025
    assert 0.007 < (table["status"] == 2).mean() < 0.013
    payloads = [p for c in chunks for p in payload_dicts(sim.workload, c)]
    duplicates = np.flatnonzero(table["tag"] == DUPLICATE)
    assert 300 < len(duplicates) < 500
    for row in duplicates.tolist():
        source = int(table["dup_of"][row])
        assert source < table["seq"][row]
        assert payloads[source] == payloads[row]  # same record, txn_id included
    assert sum(p["ts"] is None for p in payloads) == int((table["status"] == 1).sum())


def test_bridges_join_two_sessions_of_a_key_late() -> None:
    sim = simulate(
        "plays", events=4_000, keys=20, rate="0.5", bridge_fraction=0.02, session_gap="30s"
    )
    table = table_of(sim)
    bridges = np.flatnonzero(table["tag"] == BRIDGE)
    assert len(bridges) >= 20
    for row in bridges.tolist():
        key, ts = table["key"][row], table["ts"][row]
        earlier = (table["key"] == key) & (table["seq"] < table["seq"][row]) & (table["tag"] == 0)
        times = np.sort(table["ts"][earlier])
        after = times[times > ts]
        before = times[times < ts]
        # within one gap of a session on each side, which were more than a gap apart
        assert len(after) and len(before)
        assert after[0] - ts <= 30_000 and ts - before[-1] <= 30_000
        assert after[0] - before[-1] > 30_000


def test_bridges_are_exactly_what_tenzir_session_windows_drop() -> None:
    # timeline of one viewer (gap 30 s):  a ........ b      then a bridge at (a+b)/2 arrives
    #   session [a, a] is final once the clock passes a + 30 s; b > a + 30 s got there first
    from windtunnel.oracle.model.spec import SessionWindows

    options = {"events": 3_000, "keys": 20, "rate": "0.5", "bridge_fraction": 0.02}
    table = table_of(simulate("plays", session_gap="30s", **options))
    bridges = set(table["seq"][table["tag"] == BRIDGE].tolist())
    sim = simulate("plays", session_gap="30s", **options)
    query = Query(
        SessionWindows(gap_ms=30_000), group_by=("viewer",), aggregate=(Aggregation("n", "count"),)
    )
    result = run(query, stream_items(sim), start_wall_ms=sim.knobs.start_ms)
    assert bridges and {d.seq for d in result.drops if d.reason == "late"} == bridges
