"""Labelled workloads: ``bare``, ``auth``, ``payments``, ``iot``, ``plays``, ``nexmark``.

Each mirrors an example of the specification sources: ``auth`` Tenzir's brute-force and
password-spraying detections, ``payments`` the windowing article's UPI stream, ``iot``
Timeplus's device CPU metrics, ``plays`` video play events per viewer session, ``nexmark``
the Nexmark benchmark's persons, auctions and bids (``nexmark/``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

import numpy as np

from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.simulator.auth import Auth
from windtunnel.simulator.knobs import Knobs, LateSpec, knobs_from_options
from windtunnel.simulator.nexmark.workload import Nexmark
from windtunnel.simulator.payloads import (
    Pool,
    Rendered,
    Table,
    Workload,
    choices,
    faker_pool,
    ints,
    key_pool,
)
from windtunnel.simulator.simulation import Simulation


class Bare(Workload):
    name = "bare"
    summary = "time and key only (k0, k1, ...): the bare stream"


class Iot(Workload):
    name = "iot"
    summary = "device CPU metrics, as in Timeplus's tumble example (avg cpu per device per 5s)"
    key_field = "device"
    time_field = "event_time"
    defaults: ClassVar[dict[str, Any]] = {"keys": 50, "rate_per_s": 200.0}
    window = LateSpec(5_000)
    aggregate: ClassVar[dict[str, str]] = {"avg_cpu": "avg(cpu_usage)", "max_cpu": "max(cpu_usage)"}

    def make_keys(self, keys: int) -> Pool:
        cities = faker_pool(self.fake, self.fake.city, min(keys, 40))
        return Pool(
            [f"{cities[i % len(cities)].lower().replace(' ', '-')}-{i:04d}" for i in range(keys)]
        )

    def draw(self, rng: np.random.Generator, n: int) -> Table:
        return {"p_cpu": rng.integers(0, 10_000, n)}

    def render(self, table: Table, as_json: bool) -> Rendered:
        # per-device baseline (0-60%) plus noise (0-40%), in hundredths of a percent
        baseline = (table["key"] * 2_654_435_761 % 6_001).astype(np.int64)
        cpu = (baseline + table["p_cpu"] * 4_000 // 10_000) / 100.0
        cpu_values = cpu.tolist()
        return [
            *super().render(table, as_json),
            ("cpu_usage", [repr(v) for v in cpu_values] if as_json else cpu_values),
        ]


class Payments(Workload):
    name = "payments"
    summary = "UPI-style transactions per user (sum of amount_paise per user per minute)"
    key_field = "user_id"
    defaults: ClassVar[dict[str, Any]] = {"keys": 1_000, "rate_per_s": 500.0}
    window = LateSpec(60_000)
    aggregate: ClassVar[dict[str, str]] = {"txns": "count()", "amount": "sum(amount_paise)"}
    BANKS: ClassVar[tuple[str, ...]] = ("okaxis", "oksbi", "okhdfcbank", "okicici", "ybl", "paytm")

    def __init__(self, knobs: Knobs) -> None:
        super().__init__(knobs)
        self.payees = Pool(faker_pool(self.fake, self.fake.company, 200))

    def make_keys(self, keys: int) -> Pool:
        names = key_pool(self.fake, self.fake.user_name, keys).values.tolist()
        return Pool([f"{n}@{self.BANKS[i % len(self.BANKS)]}" for i, n in enumerate(names)])

    def draw(self, rng: np.random.Generator, n: int) -> Table:
        amount = np.minimum(rng.lognormal(10.5, 1.2, n), 10_000_000).astype(np.int64) + 100
        return {
            "p_payee": rng.integers(0, len(self.payees), n),
            "p_amount": amount,
            "p_failed": (rng.random(n) < 0.03).astype(np.int64),
        }

    def render(self, table: Table, as_json: bool) -> Rendered:
        txn = [
            f"T{g:012x}"
            for g in (table["gen"] * 2_862_933_555_777_941_757 + self.knobs.seed) % (1 << 48)
        ]
        status = np.array(["SUCCESS", "FAILED"], dtype=object)[table["p_failed"]].tolist()
        return [
            *super().render(table, as_json),
            ("txn_id", [f'"{t}"' for t in txn] if as_json else txn),
            ("payee", self.payees.take(table["p_payee"], as_json)),
            ("amount_paise", ints(table["p_amount"], as_json)),
            ("status", [f'"{s}"' for s in status] if as_json else status),
        ]


class Plays(Workload):
    name = "plays"
    summary = "video play events per viewer session (plays and distinct videos per viewer)"
    key_field = "viewer"
    defaults: ClassVar[dict[str, Any]] = {"keys": 500, "rate_per_s": 200.0}
    window = LateSpec(60_000)
    aggregate: ClassVar[dict[str, str]] = {"plays": "count()", "videos": "count_distinct(video_id)"}
    ACTIONS: ClassVar[tuple[str, ...]] = ("play", "pause", "seek", "stop")

    def __init__(self, knobs: Knobs) -> None:
        super().__init__(knobs)
        words = faker_pool(self.fake, lambda: self.fake.word(), 150)
        self.videos = Pool([f"{w}-{i:03d}" for i, w in enumerate(words)])

    def make_keys(self, keys: int) -> Pool:
        return key_pool(self.fake, self.fake.user_name, keys)

    def draw(self, rng: np.random.Generator, n: int) -> Table:
        return {
            "p_video": rng.zipf(1.3, n) % len(self.videos),
            "p_action": choices(rng, (0.55, 0.2, 0.15, 0.1), n),
            "p_position": rng.integers(0, 7_200, n),
        }

    def render(self, table: Table, as_json: bool) -> Rendered:
        # a session per viewer and half hour of creation time
        session = (table["key"] * 1_000_003 + table["created"] // 1_800_000) % (1 << 40)
        session_ids = [f"s{s:010x}" for s in session.tolist()]
        actions = np.array(self.ACTIONS, dtype=object)[table["p_action"]].tolist()
        return [
            *super().render(table, as_json),
            ("session_id", [f'"{s}"' for s in session_ids] if as_json else session_ids),
            ("video_id", self.videos.take(table["p_video"], as_json)),
            ("action", [f'"{a}"' for a in actions] if as_json else actions),
            ("position_s", ints(table["p_position"], as_json)),
        ]


WORKLOADS: Final[dict[str, type[Workload]]] = {
    w.name: w for w in (Bare, Auth, Payments, Iot, Plays, Nexmark)
}


def workload_named(name: str, knobs: Knobs) -> Workload:
    """The workload ``name`` for these knobs; raises InvalidInput for an unknown name."""
    try:
        kind = WORKLOADS[name]
    except KeyError:
        raise InvalidInput(
            "WORKLOAD", name, "unknown workload", f"use one of {', '.join(WORKLOADS)}"
        ) from None
    return kind(knobs)


def simulate(workload: str, **options: Any) -> Simulation:
    """A simulation of ``workload`` with the workload's default knobs overridden by
    ``options`` (knob names as in :class:`Knobs`, or text as on the command line; nexmark
    also takes Nexmark's own knobs, ``nexmark/config.py``).

    Raises InvalidInput for an unknown workload, knob or value.
    """
    if workload not in WORKLOADS:
        raise InvalidInput(
            "WORKLOAD", workload, "unknown workload", f"use one of {', '.join(WORKLOADS)}"
        )
    kind = WORKLOADS[workload]
    options, own = kind.own_options(options)
    if {"duration", "duration_ms"} & set(options) and "events" not in options:
        options["events"] = None  # a duration alone decides the length
    knobs = knobs_from_options({**kind.defaults, **options})
    return Simulation(kind(knobs, **own))
