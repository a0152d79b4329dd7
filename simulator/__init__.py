"""windtunnel.simulator: deterministic streams that misbehave on purpose, with ground truth.

Start with :func:`simulate` (a workload name and knobs) and :func:`stream_items` (oracle
items), or the writers in ``outputs`` and the Kafka producer in ``producer``;
``strategies`` has the Hypothesis strategies. docs/simulator.md describes every knob.
"""

from windtunnel.simulator.items import stream_items
from windtunnel.simulator.knobs import Knobs, LateSpec
from windtunnel.simulator.simulation import Simulation
from windtunnel.simulator.workloads import WORKLOADS, simulate

__all__ = ["WORKLOADS", "Knobs", "LateSpec", "Simulation", "simulate", "stream_items"]
