"""Generated streams as the oracle's stream items, lazily.

Each record becomes an ``Event`` (``seq``, payload dict, ``at_ms`` = arrival on the
virtual wall clock); records of one batch form a ``Batch``; ``heartbeat_ms`` adds an
``Advance`` every heartbeat while no record arrives; ``End`` closes the stream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item
from windtunnel.simulator.payloads import Table, Workload, payload_dicts
from windtunnel.simulator.simulation import Simulation

Piece = tuple[int, int, Any]
"""One record: (seq, arrival ms, payload)."""
Layout = tuple[str, Any]
"""("event", Piece), ("batch", list[Piece]) or ("advance", to_ms)."""


def layout(
    simulation: Simulation, render: Callable[[Workload, Table], list[Any]] = payload_dicts
) -> Iterator[Layout]:
    """The simulation's records grouped as they arrive: lone events, batches, advances.

    ``render`` turns a chunk into payloads (dicts by default, or JSON texts).
    """
    knobs = simulation.knobs
    heartbeat = knobs.heartbeat_ms
    batching = knobs.batch_size is not None or knobs.batch_interval_ms is not None
    wall = knobs.start_ms
    batch: list[Piece] = []
    batch_id = -1
    for table in simulation.chunks():
        payloads = render(simulation.workload, table)
        for seq, at, in_batch, payload in zip(
            table["seq"].tolist(),
            table["arrival"].tolist(),
            table["batch"].tolist(),
            payloads,
            strict=True,
        ):
            if heartbeat is not None and at - wall > heartbeat:
                if batch:
                    yield ("batch", batch)
                    batch = []
                while at - wall > heartbeat:
                    wall += heartbeat
                    yield ("advance", wall)
            wall = at
            if not batching:
                yield ("event", (seq, at, payload))
                continue
            if in_batch != batch_id and batch:
                yield ("batch", batch)
                batch = []
            batch_id = in_batch
            batch.append((seq, at, payload))
    if batch:
        yield ("batch", batch)


def stream_items(simulation: Simulation) -> Iterator[Item]:
    """The simulation's records as oracle stream items, ending with ``End``."""
    for kind, value in layout(simulation):
        if kind == "event":
            seq, at, payload = value
            yield Event(seq, payload, at)
        elif kind == "batch":
            yield Batch(tuple(Event(seq, payload, at) for seq, at, payload in value))
        else:
            yield Advance(value)
    yield End()
