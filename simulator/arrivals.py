"""Creation times, keys and arrival delays, put in arrival order chunk by chunk.

Records are created in event-time order at the knobs' rate and shape; each arrives
``delay`` later on the virtual wall clock. A record created at ``c`` arrives at or after
``c``, so once creation has reached ``c`` every record arriving up to ``c`` is known:
those leave the reordering buffer, in order of (arrival, creation order). The buffer
holds at most ``rate x max delay`` records, so memory stays flat.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from windtunnel.simulator.knobs import Knobs
from windtunnel.simulator.payloads import Table, Workload, choices

CHUNK: Final = 1 << 16
"""Records created per step (an internal constant: changing it changes streams)."""


def take(table: Table, index: npt.NDArray[np.int64] | npt.NDArray[np.bool_]) -> Table:
    return {name: column[index] for name, column in table.items()}


def concat(tables: list[Table]) -> Table:
    tables = [t for t in tables if t]
    if not tables:
        return {}
    if len(tables) == 1:
        return tables[0]
    return {name: np.concatenate([t[name] for t in tables]) for name in tables[0]}


class Arrivals:
    """Base records in arrival order: ``gen`` (creation order), ``created``, ``arrival``,
    ``key`` and the workload's columns, as an iterator of tables (one per step)."""

    def __init__(self, knobs: Knobs, workload: Workload) -> None:
        self.knobs = knobs
        self.workload = workload
        self.rng = np.random.default_rng([knobs.seed, 1])
        self.active_ms = 0.0  # creation time excluding global idle gaps, ms since start
        self.next_gen = 0
        self.made = 0  # records created so far (constant rate)
        self.created_hi = knobs.start_ms  # every later record is created at or after this
        self.pending: Table = {}
        self.key_weights = key_weights(knobs)
        self.step_ms = 1_000.0 / knobs.rate_per_s

    def _active_times(self, n: int) -> npt.NDArray[np.floating[Any]]:
        """Creation times (ms since start, idle gaps excluded) of the next records."""
        k = self.knobs
        if k.rate_shape == "constant":
            # evenly spaced from the start: record i at i x step
            out = (self.made + np.arange(n)) * self.step_ms
            self.made += n
        elif k.rate_shape == "poisson":
            out = self.active_ms + np.cumsum(self.rng.exponential(self.step_ms, n))
        else:
            peak = k.burst_factor if k.rate_shape == "bursts" else 1 + k.sine_amplitude
            candidates = self.active_ms + np.cumsum(self.rng.exponential(self.step_ms / peak, n))
            if k.rate_shape == "bursts":
                phase = candidates % k.burst_period_ms / k.burst_period_ms
                rate = np.where(phase < k.burst_duty, k.burst_factor, 1.0)
            else:
                rate = 1 + k.sine_amplitude * np.sin(2 * math.pi * candidates / k.sine_period_ms)
            keep = self.rng.random(n) * peak < rate
            out = candidates[keep]
            if not len(out):  # nothing accepted: skip ahead
                self.active_ms = float(candidates[-1])
                return out
        self.active_ms = float(out[-1])
        return out

    def done_creating(self) -> bool:
        k = self.knobs
        return k.duration_ms is not None and self.created_hi >= k.start_ms + k.duration_ms

    def steps(self) -> Iterator[Table]:
        """Tables of records in arrival order; ends (flushing the buffer) at the duration,
        or never when only a number of events is given (the consumer stops)."""
        k = self.knobs
        end_ms = None if k.duration_ms is None else k.start_ms + k.duration_ms
        while True:
            created = wall_ms(k, self._active_times(CHUNK))
            final = end_ms is not None and len(created) > 0 and int(created[-1]) >= end_ms
            if end_ms is not None:
                created = created[created < end_ms]
            lo = self.created_hi
            hi = int(created[-1]) if len(created) else lo
            if final:
                assert end_ms is not None
                hi = end_ms
            n = len(created)
            base: Table = {
                "created": created,
                "key": choices(self.rng, self.key_weights, n),
                **self.workload.draw(self.rng, n),
            }
            extra = self.workload.extras(lo, hi)
            table = concat([base, extra]) if n or extra else {}
            if table:
                if extra:
                    table = take(table, np.argsort(table["created"], kind="stable"))
                m = rows_of(table)
                table["gen"] = np.arange(self.next_gen, self.next_gen + m, dtype=np.int64)
                table["arrival"] = table["created"] + delays(k, self.rng, m)
                self.next_gen += m
            self.created_hi = hi
            out, self.pending = release(self.pending, table, None if final else hi)
            if rows_of(out):
                yield out
            if final:
                return


def rows_of(table: Table) -> int:
    return len(table["created"]) if table else 0


def wall_ms(knobs: Knobs, active_ms: npt.NDArray[np.floating[Any]]) -> npt.NDArray[np.int64]:
    """Epoch ms on the wall clock of creation times ``active_ms`` (ms since ``start``, the
    global idle gaps excluded): the gaps put back, rounded down."""
    if knobs.idle_every_ms is not None and knobs.idle_gap_ms:
        active_ms = active_ms + active_ms // knobs.idle_every_ms * knobs.idle_gap_ms
    wall: npt.NDArray[np.int64] = knobs.start_ms + np.floor(active_ms).astype(np.int64)
    return wall


def key_weights(knobs: Knobs) -> npt.NDArray[np.float64]:
    """Each key's share of the records: Zipf ``key_skew``, the first ``hot_keys`` getting
    ``hot_fraction`` together."""
    weights = 1.0 / np.arange(1, knobs.keys + 1, dtype=np.float64) ** knobs.key_skew
    if knobs.hot_keys:
        hot = weights[: knobs.hot_keys]
        cold = weights[knobs.hot_keys :]
        hot *= knobs.hot_fraction / hot.sum()
        if len(cold):
            cold *= (1 - knobs.hot_fraction) / cold.sum()
    normalised: npt.NDArray[np.float64] = weights / weights.sum()
    return normalised


def delays(knobs: Knobs, rng: np.random.Generator, n: int) -> npt.NDArray[np.int64]:
    """``n`` arrival delays in ms drawn by the ``delay`` knobs (at most ``delay_cap_ms``)."""
    k = knobs
    if k.delay == "none":
        return np.zeros(n, dtype=np.int64)
    if k.delay == "uniform":
        return rng.integers(0, k.max_out_of_order_ms + 1, n)
    if k.delay == "exponential":
        raw = rng.exponential(k.delay_mean_ms, n)
    else:
        mu = math.log(max(k.delay_mean_ms, 1e-9)) - k.delay_sigma**2 / 2
        raw = rng.lognormal(mu, k.delay_sigma, n)
    return np.minimum(np.floor(raw), k.delay_cap_ms).astype(np.int64)


def release(pending: Table, table: Table, hi_ms: int | None) -> tuple[Table, Table]:
    """The buffered rows ``pending`` (in arrival order) with the new rows ``table`` (later
    ``gen``s, created at or before ``hi_ms``): the rows arriving at or before ``hi_ms``, in
    order of (arrival, gen), and the rows still held. ``hi_ms`` None releases every row."""
    merged = concat([pending, table])
    if not merged:
        return {}, {}
    # pending rows (sorted so) precede the new rows, whose gens are larger and increasing,
    # so a stable sort on arrival alone orders by (arrival, gen)
    order = np.argsort(merged["arrival"], kind="stable")
    merged = take(merged, order)
    cut = len(order) if hi_ms is None else int(np.searchsorted(merged["arrival"], hi_ms, "right"))
    return take(merged, slice(0, cut)), take(merged, slice(cut, None))  # type: ignore[arg-type]
