"""Workloads: Faker payloads, seeded; auth's attacks are what Tenzir's detections find."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from windtunnel.oracle.engine import run
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.spec import Aggregation, FixedWindows, Query
from windtunnel.oracle.model.stream import Event, events_of
from windtunnel.simulator.items import stream_items
from windtunnel.simulator.nexmark.workload import FIELDS as NEXMARK_FIELDS
from windtunnel.simulator.payloads import payload_dicts, payload_json
from windtunnel.simulator.simulation import Simulation
from windtunnel.simulator.workloads import WORKLOADS, simulate

FIELDS = {
    "bare": {"ts", "key"},
    "auth": {"ts", "user", "src_ip", "host", "action", "outcome", "failed"},
    "payments": {"ts", "user_id", "txn_id", "payee", "amount_paise", "status"},
    "iot": {"event_time", "device", "cpu_usage"},
    "plays": {"ts", "viewer", "session_id", "video_id", "action", "position_s"},
}


def fields_of(name: str, payload: dict[str, Any]) -> set[str]:
    """The fields a record of workload ``name`` has (nexmark's: those of its event type)."""
    if name == "nexmark":
        return set(NEXMARK_FIELDS[payload["event_type"]])
    return FIELDS[name]


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_payloads_have_the_fields_and_json_matches_dicts(name: str) -> None:
    sim = simulate(name, events=500, seed=4, null_fraction=0.05, invalid_fraction=0.05)
    chunk = next(sim.chunks())
    dicts = payload_dicts(sim.workload, chunk)
    texts = payload_json(sim.workload, chunk)
    assert all(set(d) == fields_of(name, d) for d in dicts)
    assert [json.loads(t) for t in texts] == dicts
    assert len(set(chunk["key"].tolist())) > 1


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_faker_pools_follow_the_seed(name: str) -> None:
    def keys(seed: int) -> list[str]:
        return simulate(name, events=10, seed=seed).workload.keys.values.tolist()

    assert keys(1) == keys(1)
    assert len(set(keys(1))) == len(keys(1))
    if name not in ("bare", "nexmark"):  # names of their own, not drawn from Faker
        assert keys(1) != keys(2)


def test_unknown_workload() -> None:
    with pytest.raises(InvalidInput) as info:
        simulate("logs")
    assert info.value.field == "WORKLOAD"


@pytest.fixture(scope="module")
def auth_failures() -> tuple[Simulation, list[Event]]:
    """An auth stream, filtered like Tenzir's pipelines: where outcome == "failure"."""
    sim = simulate("auth", events=100_000, seed=9, rate="100")
    failures = [e for e in events_of(stream_items(sim)) if e.payload["outcome"] == "failure"]
    return sim, [Event(i, e.payload, e.at_ms) for i, e in enumerate(failures)]


def detections(query: Query, sim: Simulation, items: list[Event]) -> list[Any]:
    return run(query, items, start_wall_ms=sim.knobs.start_ms).emissions


def test_auth_brute_force_attacks_are_what_the_tenzir_detection_finds(
    auth_failures: tuple[Simulation, list[Event]],
) -> None:
    sim, items = auth_failures
    attacks = [a for a in sim.attacks() if a.kind == "brute_force"]
    assert len(attacks) >= 3
    # Tenzir: group {user, src_ip}, window size=10min every=1min tolerance=2min, failures >= 20
    query = Query(
        FixedWindows(600_000, every_ms=60_000, tolerance_ms=120_000),
        group_by=("user", "src_ip"),
        aggregate=(Aggregation("failures", "sum", "failed"),),
    )
    found = {tuple(e.group) for e in detections(query, sim, items) if e.row["failures"] >= 20}
    expected = {(a.users[0], a.src_ip) for a in attacks if a.end_ms < sim.summary.last_arrival_ms}
    assert expected and expected <= found
    assert found <= {(a.users[0], a.src_ip) for a in attacks}


def test_auth_password_spraying_attacks_are_what_the_tenzir_detection_finds(
    auth_failures: tuple[Simulation, list[Event]],
) -> None:
    sim, items = auth_failures
    attacks = [a for a in sim.attacks() if a.kind == "password_spraying"]
    assert len(attacks) >= 2
    assert all(len(a.users) == 40 and a.attempts == 60 for a in attacks)
    query = Query(
        FixedWindows(900_000, every_ms=60_000, tolerance_ms=120_000),
        group_by=("src_ip",),
        aggregate=(
            Aggregation("attempts", "count"),
            Aggregation("users", "count_distinct", "user"),
        ),
    )
    found = {
        e.group
        for e in detections(query, sim, items)
        if e.row["users"] >= 25 and e.row["attempts"] >= 50
    }
    complete = {a.src_ip for a in attacks if a.end_ms < sim.summary.last_arrival_ms}
    assert complete and complete <= found <= {a.src_ip for a in attacks}


def test_attack_records_are_labelled_in_the_table() -> None:
    sim = simulate("auth", events=30_000, seed=2, rate="100")
    chunks = list(sim.chunks())
    attack = np.concatenate([c["attack"] for c in chunks])
    ids = set(attack[attack >= 0].tolist())
    assert ids == {a.attack_id for a in sim.attacks()}
    assert sum(sim.attack_records.values()) == int((attack >= 0).sum())


def test_iot_cpu_is_a_percentage_and_payments_amounts_are_paise() -> None:
    iot = simulate("iot", events=2_000, seed=1)
    rows = payload_dicts(iot.workload, next(iot.chunks()))
    assert all(0 <= r["cpu_usage"] <= 100 for r in rows)
    pay = simulate("payments", events=2_000, seed=1)
    rows = payload_dicts(pay.workload, next(pay.chunks()))
    assert all(isinstance(r["amount_paise"], int) and r["amount_paise"] >= 100 for r in rows)
    assert all("@" in r["user_id"] for r in rows)
    assert len({r["txn_id"] for r in rows}) == len(rows)
