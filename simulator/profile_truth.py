"""Ground truth under any profile: label each generated record with what profile P does
with it, decided by the oracle itself.

The default labels (``truth.py``) are the tenzir profile's rule, computed vectorised.
For another profile the oracle runs over the stream: the workload's window spec (the
scenario header ``generate`` writes, with ``profile: P``) and the records as stream items
(lone events or batches, heartbeats as idle gaps). A record P drops is labelled with the
drop's reason (``late``, ``null_time``, ``not_a_time``, or ``end_of_input`` for a record
held in a window the profile loses at the end); every other record ``deliver``.
That takes two passes over the same seed and knobs (a simulation is consumed once): the
first feeds the oracle and keeps only the drops, the second is written with the labels.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from windtunnel.oracle.engine import stream_outputs
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.results import Drop
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.scenario import Scenario, parse_scenario
from windtunnel.simulator.items import stream_items
from windtunnel.simulator.outputs import scenario_header
from windtunnel.simulator.payloads import Table
from windtunnel.simulator.simulation import Simulation
from windtunnel.simulator.truth import DELIVER, TRUTH_NAMES

CODES = {name: code for code, name in enumerate(TRUTH_NAMES)}


def profile_scenario(simulation: Simulation, profile: str) -> Scenario:
    """The generated stream's spec under ``profile``, without input. Raises InvalidSpec
    naming why when the profile cannot run the window."""
    profile_named(profile)  # an unknown name lists the known ones
    header = {**scenario_header(simulation), "profile": profile, "input": []}
    header.pop("description", None)
    return parse_scenario(header, default_name=str(header["name"]))


def drops_under(simulation: Simulation, profile: str) -> dict[int, int]:
    """The label code of every record ``profile`` drops in ``simulation`` (consumed),
    by seq. Raises InvalidInput for a drop reason that has no label."""
    scenario = profile_scenario(simulation, profile)
    found: dict[int, int] = {}
    outputs = stream_outputs(
        scenario.query,
        stream_items(simulation),
        rules=scenario.rules,
        profile=profile,
        time_unit_ms=scenario.time_unit_ms,
        start_wall_ms=scenario.start_wall_ms,
    )
    for output in outputs:
        if not isinstance(output, Drop) or output.seq in found:
            continue
        code = CODES.get(output.reason)
        if code is None:
            raise InvalidInput(
                "--truth-profile", profile,
                f"drops seq={output.seq} for reason {output.reason!r}, which has no label "
                f"(labels: {', '.join(TRUTH_NAMES)})",
                "label under another profile",
            )
        found[output.seq] = code
    return found


def label_under(simulation: Simulation, profile: str, drops: dict[int, int]) -> None:
    """Make ``simulation`` (not yet consumed) label its records with ``drops`` (from
    :func:`drops_under` on the same seed and knobs): ``truth`` and the summary's counts."""
    seqs = np.array(sorted(drops), dtype=np.int64)
    codes = np.array([drops[s] for s in seqs.tolist()], dtype=np.int8)

    def relabel(table: Table) -> None:
        truth = np.full(len(table["seq"]), DELIVER, dtype=np.int8)
        if len(seqs):
            at = np.minimum(np.searchsorted(seqs, table["seq"]), len(seqs) - 1)
            hit = seqs[at] == table["seq"]
            truth[hit] = codes[at[hit]]
        table["truth"] = truth

    simulation.relabel = relabel
    simulation.truth_profile = profile


def simulate_under(make: Callable[[], Simulation], profile: str) -> Simulation:
    """A fresh simulation from ``make`` labelled under ``profile`` (``make`` is called
    twice and must give the same stream: same workload, seed and knobs)."""
    drops = drops_under(make(), profile)
    simulation = make()
    label_under(simulation, profile, drops)
    return simulation
