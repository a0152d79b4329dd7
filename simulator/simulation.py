"""The stream builder: from knobs to labelled records in stream order, chunk by chunk.

:class:`Simulation` takes the arrival-ordered base records (``arrivals.py``) and, per
chunk: keeps sparse keys and idle partitions quiet in their idle periods, stamps event
times with producer clock skew, adds future-stamped outliers, null and invalid times,
places late events deliberately (after their group's clock passed their window's close
for the late spec), inserts session-bridging late events and duplicates, labels every
record with what the default profile does with it (``truth.py``), and numbers records
(``seq``), Kafka partitions and offsets, and batches. Same seed and knobs, same chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.simulator import truth
from windtunnel.simulator.arrivals import Arrivals, concat, take
from windtunnel.simulator.knobs import Knobs, LateSpec
from windtunnel.simulator.murmur2 import partition_for
from windtunnel.simulator.payloads import ArrivalSource, Attack, Table, Workload

# tags: why a record looks the way it does (by design)
NONE: Final = 0
LATE_INJECTED: Final = 1
OUTLIER: Final = 2
NULL_TIME: Final = 3
NOT_A_TIME: Final = 4
DUPLICATE: Final = 5
BRIDGE: Final = 6
TAG_NAMES: Final = ("", "late", "outlier", "null_time", "not_a_time", "duplicate", "bridge")


@dataclass(frozen=True, slots=True)
class IdlePeriod:
    """A wall-clock period ``[start_ms, end_ms)`` in which a key or partition sends nothing."""

    scope: str  # "stream", "key" or "partition"
    name: str
    start_ms: int
    end_ms: int

    def to_json(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "name": self.name,
            "start_ms": self.start_ms,
            "end_ms": self.end_ms,
        }


@dataclass(slots=True)
class Summary:
    """Counts over the records generated so far."""

    events: int = 0
    truth: dict[str, int] = field(default_factory=lambda: dict.fromkeys(truth.TRUTH_NAMES, 0))
    tags: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TAG_NAMES[1:], 0))
    partitions: dict[int, int] = field(default_factory=dict)
    batches: int = 0
    first_arrival_ms: int | None = None
    last_arrival_ms: int | None = None

    @property
    def late(self) -> int:
        return self.truth["late"]

    @property
    def dropped_by_design(self) -> int:
        """Records the default profile drops: late, null time, not a time."""
        return self.events - self.truth["deliver"]


class Simulation:
    """A generated stream: ``chunks()`` of labelled records; see the module docstring.

    A simulation is consumed once (``summary`` counts what was generated); build a new
    one from the same workload name, seed and knobs to get the same stream again.
    Raises InvalidInput when the knobs leave no key to send while others are idle.
    """

    def __init__(self, workload: Workload, knobs: Knobs | None = None) -> None:
        self.knobs = knobs = knobs or workload.knobs
        self.workload = workload
        self.late_spec: LateSpec = knobs.late_window or workload.window
        self.summary = Summary()
        keys = knobs.keys
        names = workload.keys.values.tolist()
        self.key_bytes = [str(n).encode() for n in names]
        self.key_partition = np.array(
            [partition_for(b, knobs.partitions) for b in self.key_bytes], dtype=np.int64
        )
        skew_rng = np.random.default_rng([knobs.seed, 3])
        self.skew = (
            skew_rng.integers(-knobs.clock_skew_ms, knobs.clock_skew_ms + 1, keys)
            if knobs.clock_skew_ms
            else np.zeros(keys, dtype=np.int64)
        )
        self.sparse = np.zeros(keys, dtype=np.bool_)
        if knobs.sparse_keys:
            self.sparse[keys - knobs.sparse_keys :] = True
        self.idle_partition = np.zeros(knobs.partitions, dtype=np.bool_)
        if knobs.idle_partitions:
            self.idle_partition[knobs.partitions - knobs.idle_partitions :] = True
        steady = ~self.sparse & ~self.idle_partition[self.key_partition]
        self.steady_keys = np.flatnonzero(steady).astype(np.int64)
        if (knobs.sparse_keys or knobs.idle_partitions) and not len(self.steady_keys):
            raise InvalidInput(
                "idle_partitions",
                knobs.idle_partitions,
                "every key is sparse or in an idle partition",
                "raise keys or partitions, or lower sparse_keys or idle_partitions",
            )
        self._arrivals: ArrivalSource = workload.arrival_source() or Arrivals(knobs, workload)
        self._truth_clocks = truth.Clocks()
        self._offsets = np.zeros(knobs.partitions, dtype=np.int64)
        self._next_seq = 0
        self._chunk = 0
        self._last_batch = -1
        self.attack_records: dict[int, int] = {}
        """Records sent so far per attack id (auth)."""
        self.truth_profile = "tenzir"
        """The profile whose decisions ``truth`` labels (``profile_truth.label_under``)."""
        self.relabel: Callable[[Table], None] | None = None
        """Replaces a numbered chunk's ``truth`` column (labels under another profile)."""

    def attacks(self) -> list[Attack]:
        """The workload's attacks that have records in the stream so far, by start time."""
        return [a for a in self.workload.attacks() if a.attack_id in self.attack_records]

    # --- idleness -------------------------------------------------------------------------
    def _phase_idle(
        self, wall_ms: npt.NDArray[np.int64], unit: npt.NDArray[np.int64], active: int, idle: int
    ) -> npt.NDArray[np.bool_]:
        cycle = active + idle
        offset = unit * 7_919_000 % cycle
        return (wall_ms - self.knobs.start_ms + offset) % cycle >= active

    def idle_periods(self, until_ms: int | None = None) -> list[IdlePeriod]:
        """Scheduled idle periods that start before ``until_ms`` (default: last arrival)."""
        k = self.knobs
        end = until_ms if until_ms is not None else (self.summary.last_arrival_ms or k.start_ms)
        out: list[IdlePeriod] = []
        if k.idle_every_ms is not None and k.idle_gap_ms:
            cycle = k.idle_every_ms + k.idle_gap_ms
            start = k.start_ms + k.idle_every_ms
            while start < end:
                out.append(IdlePeriod("stream", "*", start, start + k.idle_gap_ms))
                start += cycle
        units: list[tuple[str, str, int, int, int]] = [
            ("key", str(self.workload.keys.values[u]), u, k.sparse_active_ms, k.sparse_idle_ms)
            for u in np.flatnonzero(self.sparse).tolist()
        ] + [
            ("partition", str(p), p, k.partition_active_ms, k.partition_idle_ms)
            for p in np.flatnonzero(self.idle_partition).tolist()
        ]
        for scope, name, unit, active, idle in units:
            cycle = active + idle
            offset = unit * 7_919_000 % cycle
            # idle when (t - start + offset) mod cycle >= active
            first = k.start_ms - offset + active
            while first + idle <= k.start_ms:
                first += cycle
            while first < end:
                out.append(IdlePeriod(scope, name, max(first, k.start_ms), first + idle))
                first += cycle
        return out

    def _quiet_idle(self, t: Table, rng: np.random.Generator) -> None:
        k = self.knobs
        if not (k.sparse_keys or k.idle_partitions):
            return
        key = t["key"]
        blocked = np.zeros(len(key), dtype=np.bool_)
        if k.sparse_keys:
            blocked |= self.sparse[key] & self._phase_idle(
                t["arrival"], key, k.sparse_active_ms, k.sparse_idle_ms
            )
        if k.idle_partitions:
            part = self.key_partition[key]
            blocked |= self.idle_partition[part] & self._phase_idle(
                t["arrival"], part, k.partition_active_ms, k.partition_idle_ms
            )
        if "attack" in t:
            blocked &= t["attack"] < 0
        moved = int(blocked.sum())
        if moved:
            key = key.copy()
            key[blocked] = self.steady_keys[rng.integers(0, len(self.steady_keys), moved)]
            t["key"] = key

    # --- one chunk ------------------------------------------------------------------------
    def _process(self, t: Table) -> Table:
        k = self.knobs
        rng = np.random.default_rng([k.seed, 2, self._chunk])
        self._chunk += 1
        n = len(t["gen"])
        self._quiet_idle(t, rng)
        ts = (t["event_ms"] if "event_ms" in t else t["created"]) + self.skew[t["key"]]
        tag = np.zeros(n, dtype=np.int8)
        if k.outlier_fraction:
            outlier = rng.random(n) < k.outlier_fraction
            ts[outlier] += k.outlier_ahead_ms
            tag[outlier] = OUTLIER
        status = np.zeros(n, dtype=np.int8)
        if k.null_fraction or k.invalid_fraction:
            u = rng.random(n)
            status[u < k.null_fraction] = 1
            status[(u >= k.null_fraction) & (u < k.null_fraction + k.invalid_fraction)] = 2
            tag[status == 1] = NULL_TIME
            tag[status == 2] = NOT_A_TIME
        t["ts"], t["status"] = ts, status
        groups = self.group_codes(t)
        if k.late_fraction:
            self._inject_late(t, groups, tag, rng)
        t["tag"] = tag
        t["dup_of"] = np.full(n, -1, dtype=np.int64)
        t = self._insert(t, groups, rng)
        groups = self.group_codes(t)
        t["truth"] = truth.label(
            self.late_spec, groups, t["ts"], t["status"], self._truth_clocks,
            self.workload.filtered(t),
        )
        return t

    def group_codes(self, t: Table) -> npt.NDArray[np.int64]:
        """Each row's ground-truth clock group: the workload's group_by key, or 0 for a
        stream clock."""
        if self.late_spec.clock_scope == "stream":
            return np.zeros(len(t["gen"]), dtype=np.int64)
        return self.workload.group_codes(t)

    def _windowed(self, t: Table) -> npt.NDArray[np.bool_]:
        """Rows the default query's window sees (its ``where`` stage keeps)."""
        removed = self.workload.filtered(t)
        return np.ones(len(t["gen"]), dtype=np.bool_) if removed is None else ~removed

    def _inject_late(
        self,
        t: Table,
        groups: npt.NDArray[np.int64],
        tag: npt.NDArray[np.int8],
        rng: np.random.Generator,
    ) -> None:
        k = self.knobs
        n = len(tag)
        windowed = self._windowed(t)  # only records the window sees can be late
        share = 1.0 - k.null_fraction - k.invalid_fraction - k.outlier_fraction
        share *= float(windowed.mean()) if n else 1.0
        chance = min(1.0, k.late_fraction / share) if share > 0 else 1.0
        picked = (rng.random(n) < chance) & (tag == NONE) & windowed
        valid = (t["status"] == 0) & ~picked & windowed
        before, _, _ = truth.clocks_before(groups, t["ts"], valid, self._truth_clocks.copy())
        placed = picked & (before != truth.NONE)
        count = int(placed.sum())
        if count:
            latest = truth.latest_late_time(self.late_spec, before[placed])
            t["ts"][placed] = latest - rng.integers(0, self.late_spec.hop_ms, count)
            tag[placed] = LATE_INJECTED

    def _insert(self, t: Table, groups: npt.NDArray[np.int64], rng: np.random.Generator) -> Table:
        """Add bridging late events and duplicates a few positions after their source."""
        k = self.knobs
        n = len(t["gen"])
        sources: list[npt.NDArray[np.int64]] = []
        kinds: list[int] = []
        if k.bridge_fraction:
            source, midpoint = self._bridges(t, groups, rng)
            sources.append(source)
            kinds.append(BRIDGE)
        if k.duplicate_fraction:
            sources.append(np.flatnonzero(rng.random(n) < k.duplicate_fraction).astype(np.int64))
            kinds.append(DUPLICATE)
        if not sources or not sum(len(s) for s in sources):
            return t
        parts: list[Table] = []
        targets: list[npt.NDArray[np.int64]] = []
        for source, kind in zip(sources, kinds, strict=True):
            if not len(source):
                continue
            extra = take(t, source)
            target = np.minimum(
                source + rng.integers(1, k.duplicate_distance + 1, len(source)), n - 1
            )
            extra["arrival"] = t["arrival"][target]
            extra["tag"] = np.full(len(source), kind, dtype=np.int8)
            if kind == BRIDGE:
                extra["ts"] = midpoint
                extra["gen"] = np.arange(
                    self._arrivals.next_gen, self._arrivals.next_gen + len(source), dtype=np.int64
                )
                self._arrivals.next_gen += len(source)
            else:
                extra["dup_of"] = source
            parts.append(extra)
            targets.append(target)
        merged = concat([t, *parts])
        position = np.concatenate([np.arange(n, dtype=np.int64), *targets])
        after = np.concatenate(
            [np.zeros(n, dtype=np.int64), np.ones(len(position) - n, dtype=np.int64)]
        )
        order = np.lexsort((np.arange(len(position)), after, position))
        return take(merged, order)

    def _bridges(
        self, t: Table, groups: npt.NDArray[np.int64], rng: np.random.Generator
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Rows whose previous valid event of the same group lies more than one and at most
        two session gaps earlier; a copy at the midpoint joins the two sessions."""
        k = self.knobs
        gap = k.session_gap_ms
        usable = (t["status"] == 0) & (t["tag"] == NONE) if "tag" in t else t["status"] == 0
        ok = np.flatnonzero(usable & self._windowed(t))
        order = ok[np.argsort(groups[ok], kind="stable")]
        g = groups[order]
        ts = t["ts"][order]
        same = np.r_[False, g[1:] == g[:-1]]
        prev = np.r_[ts[:1], ts[:-1]]
        distance = ts - prev
        eligible = same & (distance > gap) & (distance <= 2 * gap)
        rows = order[eligible]
        if not len(rows):
            return rows, rows
        chance = min(1.0, k.bridge_fraction * len(t["gen"]) / len(rows))
        pick = rng.random(len(rows)) < chance
        midpoint = (prev[eligible] + ts[eligible]) // 2
        return rows[pick], midpoint[pick]

    def _number(self, t: Table) -> Table:
        k = self.knobs
        n = len(t["gen"])
        seq = np.arange(self._next_seq, self._next_seq + n, dtype=np.int64)
        dup = t["dup_of"]
        # a duplicate shares its source's gen; the source comes earlier in this chunk
        duplicate = t["tag"] == DUPLICATE
        if duplicate.any():
            source = np.flatnonzero(~duplicate)
            source_gen = t["gen"][source]
            by_gen = np.argsort(source_gen, kind="stable")
            where = np.searchsorted(source_gen[by_gen], t["gen"][duplicate])
            dup = dup.copy()
            dup[duplicate] = seq[source[by_gen[where]]]
            t["dup_of"] = dup
        self._next_seq += n
        t["seq"] = seq
        part = self.key_partition[t["key"]]
        # offsets count per partition: rank within the partition in stream order
        by_part = truth.stable_order(part)
        counts = np.bincount(part, minlength=k.partitions)
        starts = np.cumsum(counts) - counts
        sorted_part = part[by_part]
        offset = np.empty(n, dtype=np.int64)
        offset[by_part] = self._offsets[sorted_part] + np.arange(n) - starts[sorted_part]
        self._offsets += counts
        t["partition"], t["offset"] = part, offset
        if k.batch_size is not None:
            t["batch"] = seq // k.batch_size
        elif k.batch_interval_ms is not None:
            t["batch"] = (t["arrival"] - k.start_ms) // k.batch_interval_ms
        else:
            t["batch"] = np.full(n, -1, dtype=np.int64)
        return t

    def _count(self, t: Table) -> None:
        s = self.summary
        n = len(t["seq"])
        if not n:
            return
        s.events += n
        for code, name in enumerate(truth.TRUTH_NAMES):
            s.truth[name] += int((t["truth"] == code).sum())
        for code, name in enumerate(TAG_NAMES[1:], start=1):
            s.tags[name] += int((t["tag"] == code).sum())
        counts = np.bincount(t["partition"], minlength=self.knobs.partitions)
        for p in np.flatnonzero(counts).tolist():
            s.partitions[p] = s.partitions.get(p, 0) + int(counts[p])
        batches = t["batch"]
        if batches[0] >= 0:
            distinct = np.unique(batches)
            s.batches += len(distinct) - (1 if distinct[0] == self._last_batch else 0)
            self._last_batch = int(batches[-1])
        if "attack" in t:
            ids, counts = np.unique(t["attack"][t["attack"] >= 0], return_counts=True)
            for attack, c in zip(ids.tolist(), counts.tolist(), strict=True):
                self.attack_records[attack] = self.attack_records.get(attack, 0) + c
        if s.first_arrival_ms is None:
            s.first_arrival_ms = int(t["arrival"][0])
        s.last_arrival_ms = int(t["arrival"][-1])

    def chunks(self) -> Iterator[Table]:
        """Labelled records in stream order, as column tables; stops after ``knobs.events``
        records (or at ``knobs.duration_ms``). Columns: ``seq``, ``arrival``, ``ts``,
        ``status`` (0 valid, 1 null, 2 not a time), ``key``, ``truth``, ``tag``, ``dup_of``,
        ``partition``, ``offset``, ``batch`` (-1 without batching), ``gen``, ``created``
        and the workload's payload columns."""
        limit = self.knobs.events
        for base in self._arrivals.steps():
            t = self._process(base)
            if limit is not None and self._next_seq + len(t["gen"]) > limit:
                t = take(t, slice(0, limit - self._next_seq))  # type: ignore[arg-type]
            t = self._number(t)
            if self.relabel is not None:
                self.relabel(t)
            self._count(t)
            if len(t["seq"]):
                yield t
            if limit is not None and self._next_seq >= limit:
                return
