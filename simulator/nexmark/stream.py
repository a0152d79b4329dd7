"""The Nexmark workload's arrival source: event numbers to records in arrival order.

Event number ``n`` is emitted at ``start + floor(n x 10^6 / rate) / 1000`` ms (Nexmark's
``timestampForEvent``, global idle gaps put back) on the virtual wall clock: its
``created`` time. Its event time (``event_ms``) is that of its event id (the permuted
number), so ``outOfOrderGroupSize`` reorders event times within a group. It arrives
``created`` plus its delays: Nexmark's occasional delay (``probDelayedEvent``,
``occasionalDelaySec``) and the ``delay`` knobs. Event numbers come in blocks of
:data:`BLOCK`; each block's draws (lanes, delays, content) cover all its events before
the ``kinds`` filter, so a stream of some kinds holds the full stream's events of those
kinds, with the same lanes, times and arrivals. Records leave a reordering buffer as in
``arrivals.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import numpy as np
import numpy.typing as npt

from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.simulator.arrivals import delays, key_weights, release, rows_of, take
from windtunnel.simulator.knobs import Knobs
from windtunnel.simulator.nexmark import events, rules
from windtunnel.simulator.nexmark.config import NexmarkKnobs
from windtunnel.simulator.payloads import Table, choices

I64 = npt.NDArray[np.int64]
BLOCK: Final = 1 << 14
"""Event numbers per block (an internal constant: changing it changes streams)."""


class NexmarkArrivals:
    """Records of the Nexmark workload in arrival order, as an iterator of tables."""

    def __init__(self, knobs: Knobs, config: NexmarkKnobs) -> None:
        if knobs.rate_shape != "constant":
            raise InvalidInput(
                "rate_shape",
                knobs.rate_shape,
                "nexmark spaces events evenly (Nexmark's inter-event delay)",
                "drop --rate-shape for nexmark, or give constant",
            )
        self.knobs = knobs
        self.config = config
        self.delay_us = 1e6 / knobs.rate_per_s
        self.key_weights = key_weights(knobs)
        self.next_gen = 0
        self.pending: Table = {}

    def times(self, numbers: I64) -> I64:
        """Epoch ms of event numbers (or ids): ``start + floor(n x delay_us) / 1000``, with
        the global idle gaps."""
        k = self.knobs
        offset = np.floor(numbers * self.delay_us).astype(np.int64) // 1_000
        if k.idle_every_ms is not None and k.idle_gap_ms:
            offset = offset + offset // k.idle_every_ms * k.idle_gap_ms
        wall: I64 = k.start_ms + offset
        return wall

    def block(self, index: int, end_ms: int | None) -> tuple[Table, int, bool]:
        """Block ``index``'s records of the kinds written (``created`` before ``end_ms``),
        the latest creation time of the block, and whether the duration ends in it."""
        k = self.knobs
        numbers = np.arange(index * BLOCK, (index + 1) * BLOCK, dtype=np.int64)
        created = self.times(numbers)
        final = end_ms is not None and int(created[-1]) >= end_ms
        if end_ms is not None and final:
            numbers, created = numbers[created < end_ms], created[created < end_ms]
        hi = end_ms if final and end_ms is not None else int(created[-1])
        n = len(numbers)
        if not n:
            return {}, hi, final
        rng = np.random.default_rng([k.seed, 21, index])
        table: Table = {
            "created": created,
            "key": choices(rng, self.key_weights, n),
            **events.numeric_columns(numbers, self.config, self.times, rng),
        }
        delay = rules.occasional_delays_ms(n, self.config, rng) + delays(k, rng, n)
        table["arrival"] = created + delay
        keep = np.isin(table["p_kind"], self.config.kind_codes)
        if not keep.all():
            table = take(table, keep)
        events.text_columns(table, self.config, [k.seed, 22, index])
        return table, hi, final

    def steps(self) -> Iterator[Table]:
        """Tables of records in arrival order; ends (flushing the buffer) at the duration,
        or never when only a number of events is given (the consumer stops)."""
        k = self.knobs
        end_ms = None if k.duration_ms is None else k.start_ms + k.duration_ms
        index = 0
        while True:
            table, hi, final = self.block(index, end_ms)
            index += 1
            m = rows_of(table)
            if m:
                table["gen"] = np.arange(self.next_gen, self.next_gen + m, dtype=np.int64)
                self.next_gen += m
            out, self.pending = release(self.pending, table, None if final else hi)
            if rows_of(out):
                yield out
            if final:
                return
