"""A generated stream's summary: counts, ground truth, idle periods, partitions, attacks."""

from __future__ import annotations

from collections import Counter
from typing import Any

from windtunnel.simulator.simulation import Simulation


def summary_json(simulation: Simulation) -> dict[str, Any]:
    """Everything :func:`summary_lines` shows, plus the idle periods and attacks in full."""
    s = simulation.summary
    spec = simulation.late_spec
    return {
        "workload": simulation.workload.name,
        "seed": simulation.knobs.seed,
        "events": s.events,
        "truth": dict(s.truth),
        "late": s.late,
        "late_fraction": s.late / s.events if s.events else 0.0,
        "dropped_by_design": s.dropped_by_design,
        **({"truth_profile": simulation.truth_profile} if simulation.truth_profile != "tenzir" else {}),
        "tags": dict(s.tags),
        "late_window": {
            "size_ms": spec.size_ms,
            "every_ms": spec.every_ms,
            "tolerance_ms": spec.tolerance_ms,
            "clock_scope": spec.clock_scope,
        },
        "partitions": {str(p): n for p, n in sorted(s.partitions.items())},
        "batches": s.batches,
        "first_arrival_ms": s.first_arrival_ms,
        "last_arrival_ms": s.last_arrival_ms,
        "idle_periods": [p.to_json() for p in simulation.idle_periods()],
        "attacks": [
            {**a.to_json(), "records_sent": simulation.attack_records[a.attack_id]}
            for a in simulation.attacks()
        ],
    }


def summary_lines(simulation: Simulation) -> list[str]:
    """A short human-readable summary of the records generated so far."""
    s = simulation.summary
    spec = simulation.late_spec
    share = f"{100 * s.late / s.events:.2f}%" if s.events else "0%"
    window = f"size {spec.size_ms} ms" + (f", every {spec.every_ms} ms" if spec.every_ms else "")
    window += f", tolerance {spec.tolerance_ms} ms, clock per {spec.clock_scope}"
    idle = simulation.idle_periods()
    scopes = Counter(p.scope for p in idle)
    lines = [
        f"events: {s.events}",
        f"late: {s.late} ({share}; {s.tags['late']} placed on purpose) for fixed windows "
        f"({window})",
        f"dropped by design ({_whose(simulation)}): {s.dropped_by_design} "
        f"(late {s.truth['late']}, null_time {s.truth['null_time']}, "
        f"not_a_time {s.truth['not_a_time']}"
        + (f", end_of_input {s.truth['end_of_input']}" if s.truth.get("end_of_input") else "")
        + (f", filtered {s.truth['filtered']}" if s.truth.get("filtered") else "")
        + ")",
        f"duplicates: {s.tags['duplicate']}, outliers: {s.tags['outlier']}, "
        f"bridges: {s.tags['bridge']}",
        f"idle periods: {len(idle)}"
        + (f" ({', '.join(f'{k} {v}' for k, v in sorted(scopes.items()))})" if idle else ""),
        _partitions_line(simulation),
    ]
    if s.batches:
        lines.append(f"batches: {s.batches}")
    attacks = simulation.attacks()
    if attacks:
        kinds = Counter(a.kind for a in attacks)
        lines.append(
            f"attacks: {len(attacks)} ("
            + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
            + ")"
        )
    return lines


def _whose(simulation: Simulation) -> str:
    profile = simulation.truth_profile
    return "default profile" if profile == "tenzir" else f"profile {profile}"


def _partitions_line(simulation: Simulation) -> str:
    """Records per Kafka partition; beyond 12 partitions, their range."""
    counts = simulation.summary.partitions
    total = simulation.knobs.partitions
    if total <= 12:
        return "partitions: " + ", ".join(f"{p}: {n}" for p, n in sorted(counts.items()))
    used = sorted(counts.values())
    spread = f", {used[0]} to {used[-1]} records each" if used else ""
    return f"partitions: {len(used)} of {total} have records{spread}"
