"""The ``auth`` workload: login events with injected brute-force and password-spraying attacks.

It mirrors Tenzir's detection examples (https://docs.tenzir.com/reference/operators/window):
brute force is many
failed logins for one user from one source IP within 10 minutes; password spraying is
one source IP failing for many distinct users within 15 minutes. Each attack's records
carry its id, and :meth:`Auth.attacks` lists the attacks with their event-time spans.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

import numpy as np
import numpy.typing as npt

from windtunnel.simulator.knobs import Knobs, LateSpec
from windtunnel.simulator.payloads import (
    Attack,
    Pool,
    Rendered,
    Table,
    Workload,
    faker_pool,
    ints,
    key_pool,
)

BRUTE_FORCE: Final = 0
SPRAYING: Final = 1
KIND_NAMES: Final = ("brute_force", "password_spraying")


class Auth(Workload):
    """Login events; ``attack`` column: attack id (kind = id % 2) or -1."""

    name = "auth"
    summary = "login events with brute-force and password-spraying attacks (Tenzir examples)"
    key_field = "user"
    defaults: ClassVar[dict[str, Any]] = {"keys": 200, "rate_per_s": 100.0}
    window = LateSpec(600_000, every_ms=60_000, tolerance_ms=120_000)
    aggregate: ClassVar[dict[str, str]] = {
        "failures": "sum(failed)",
        "attempts": "count()",
        "target_hosts": "count_distinct(host)",
    }
    # (first start after stream start, period, attempts, span of attempts) per attack kind, ms
    SCHEDULE: ClassVar[tuple[tuple[int, int, int, int], ...]] = (
        (30_000, 300_000, 30, 240_000),
        (90_000, 450_000, 60, 480_000),
    )
    SPRAY_USERS: ClassVar[int] = 40
    FAILURE_RATE: ClassVar[float] = 0.01

    def __init__(self, knobs: Knobs) -> None:
        super().__init__(knobs)
        self.homes = Pool(faker_pool(self.fake, self.fake.ipv4_private, min(knobs.keys, 1_000)))
        self.attackers = Pool(faker_pool(self.fake, self.fake.ipv4_public, 64))
        self.hosts = Pool(faker_pool(self.fake, self.fake.hostname, 24))
        self._attacks: dict[int, Attack] = {}

    def make_keys(self, keys: int) -> Pool:
        return key_pool(self.fake, self.fake.user_name, keys)

    def group_by(self) -> list[str]:
        return ["user", "src_ip"]

    def draw(self, rng: np.random.Generator, n: int) -> Table:
        return {
            "p_host": rng.integers(0, len(self.hosts), n),
            "p_failed": (rng.random(n) < self.FAILURE_RATE).astype(np.int64),
            "attack": np.full(n, -1, dtype=np.int64),
            "aip": np.full(n, -1, dtype=np.int64),
        }

    def _attack_rows(self, kind: int, index: int) -> Table:
        first, period, attempts, span = self.SCHEDULE[kind]
        rng = np.random.default_rng([self.knobs.seed, 7, kind, index])
        start = self.knobs.start_ms + first + index * period + int(rng.integers(0, period // 4))
        created = np.sort(start + rng.integers(0, span, attempts))
        keys = self.knobs.keys
        if kind == BRUTE_FORCE:
            users = np.full(attempts, rng.integers(0, keys), dtype=np.int64)
        else:
            chosen = rng.choice(keys, min(self.SPRAY_USERS, keys), replace=False)
            users = np.resize(chosen.astype(np.int64), attempts)
        ip = int(rng.integers(0, len(self.attackers)))
        attack_id = index * 2 + kind
        if attack_id not in self._attacks:
            self._attacks[attack_id] = Attack(
                KIND_NAMES[kind],
                attack_id,
                str(self.attackers.values[ip]),
                tuple(dict.fromkeys(str(u) for u in self.keys.values[users])),
                int(created[0]),
                int(created[-1]),
                attempts,
            )
        return {
            "created": created.astype(np.int64),
            "key": users,
            "p_host": rng.integers(0, len(self.hosts), attempts),
            "p_failed": np.ones(attempts, dtype=np.int64),
            "attack": np.full(attempts, attack_id, dtype=np.int64),
            "aip": np.full(attempts, ip, dtype=np.int64),
        }

    def extras(self, lo_ms: int, hi_ms: int) -> Table:
        parts: list[Table] = []
        for kind, (first, period, _, span) in enumerate(self.SCHEDULE):
            origin = self.knobs.start_ms + first
            low = max(0, (lo_ms - origin - span - period) // period)
            high = (hi_ms - origin) // period
            for index in range(low, high + 1):
                rows = self._attack_rows(kind, index)
                keep = (rows["created"] >= lo_ms) & (rows["created"] < hi_ms)
                if keep.any():
                    parts.append({name: column[keep] for name, column in rows.items()})
        if not parts:
            return {}
        return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}

    def group_codes(self, table: Table) -> npt.NDArray[np.int64]:
        return table["key"] * (len(self.attackers) + 1) + table["aip"] + 1

    def render(self, table: Table, as_json: bool) -> Rendered:
        home = self.homes.take(table["key"] % len(self.homes), as_json)
        attacker_rows = np.flatnonzero(table["aip"] >= 0)
        if len(attacker_rows):
            attackers = self.attackers.take(table["aip"][attacker_rows], as_json)
            for row, ip in zip(attacker_rows.tolist(), attackers, strict=True):
                home[row] = ip
        failed = table["p_failed"]
        outcome = np.array(
            ['"success"', '"failure"'] if as_json else ["success", "failure"], dtype=object
        )[failed].tolist()
        return [
            *super().render(table, as_json),
            ("src_ip", home),
            ("host", self.hosts.take(table["p_host"], as_json)),
            ("action", ['"login"' if as_json else "login"] * len(failed)),
            ("outcome", outcome),
            ("failed", ints(failed, as_json)),
        ]

    def attacks(self) -> list[Attack]:
        """Attacks whose records were generated so far, by start time."""
        return sorted(self._attacks.values(), key=lambda a: (a.start_ms, a.attack_id))
