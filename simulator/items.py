"""Generated streams as the oracle's stream items, lazily.

Each record becomes an ``Event`` (``seq``, payload dict, ``at_ms`` = arrival on the
virtual wall clock); records of one batch form a ``Batch``; ``heartbeat_ms`` adds an
``Advance`` every heartbeat while no record arrives; ``End`` closes the stream.
"""

from __future__ import annotations

from collections.abc import Iterator

from windtunnel.oracle.stream import Advance, Batch, End, Event, Item
from windtunnel.simulator.payloads import payload_dicts
from windtunnel.simulator.simulation import Simulation


def stream_items(simulation: Simulation) -> Iterator[Item]:
    """The simulation's records as oracle stream items, ending with ``End``."""
    knobs = simulation.knobs
    heartbeat = knobs.heartbeat_ms
    batching = knobs.batch_size is not None or knobs.batch_interval_ms is not None
    wall = knobs.start_ms
    batch: list[Event] = []
    batch_id = -1
    for table in simulation.chunks():
        payloads = payload_dicts(simulation.workload, table)
        for seq, at, in_batch, payload in zip(
            table["seq"].tolist(),
            table["arrival"].tolist(),
            table["batch"].tolist(),
            payloads,
            strict=True,
        ):
            if heartbeat is not None and at - wall > heartbeat:
                if batch:
                    yield Batch(tuple(batch))
                    batch = []
                while at - wall > heartbeat:
                    wall += heartbeat
                    yield Advance(wall)
            wall = at
            event = Event(seq, payload, at)
            if not batching:
                yield event
                continue
            if in_batch != batch_id and batch:
                yield Batch(tuple(batch))
                batch = []
            batch_id = in_batch
            batch.append(event)
    if batch:
        yield Batch(tuple(batch))
    yield End()
