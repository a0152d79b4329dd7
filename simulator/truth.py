"""Ground truth: event-time clocks per group and which events the default profile drops.

The rule is the tenzir profile's for fixed windows (``oracle/windows/fixed.py``): a group's clock
is the largest valid event time it has seen; an event with time ``t`` is late when, at
its arrival, the clock has reached ``end + tolerance`` of every window containing ``t``,
that is of the last one, ``[s, s + size)`` with ``s = t - t mod hop``. Null and invalid
times neither move the clock nor are late (they are dropped for their time); records a
``where`` stage removes first neither move the clock (rule ``filtered_clock: ignored``)
nor are late.

Everything here is vectorised over a chunk of rows in stream order; the clocks carry
over from chunk to chunk in :class:`Clocks`.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from windtunnel.simulator.knobs import LateSpec

I64 = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]
NONE: Final = np.iinfo(np.int64).min
"""The clock of a group that has seen no valid event yet."""

# ground-truth labels: what the default profile does with a record
DELIVER: Final = 0
LATE: Final = 1
NULL_TIME: Final = 2
NOT_A_TIME: Final = 3
END_OF_INPUT: Final = 4
"""Only under ``--truth-profile`` with a profile that loses open windows at the end and
reports their records (ekuiper's ``end_of_input`` drops); the default profile flushes."""
FILTERED: Final = 5
"""Removed by the default query's ``where`` stage before the window (a workload's own
records that its query does not window, such as nexmark's persons and auctions)."""
TRUTH_NAMES: Final = ("deliver", "late", "null_time", "not_a_time", "end_of_input", "filtered")


class Clocks:
    """Each group's clock (largest valid event time in ms) carried between chunks.

    Stored as sorted group codes and their clocks: memory grows with the groups seen,
    not with the events.
    """

    __slots__ = ("clocks", "codes")

    def __init__(self) -> None:
        self.codes: I64 = np.empty(0, dtype=np.int64)
        self.clocks: I64 = np.empty(0, dtype=np.int64)

    def copy(self) -> Clocks:
        other = Clocks()
        other.codes = self.codes.copy()
        other.clocks = self.clocks.copy()
        return other

    def lookup(self, groups: I64) -> I64:
        """The carried clock of each group (NONE when unseen)."""
        if not len(self.codes):
            return np.full(len(groups), NONE, dtype=np.int64)
        index = np.searchsorted(self.codes, groups)
        index = np.minimum(index, len(self.codes) - 1)
        found = self.codes[index] == groups
        return np.where(found, self.clocks[index], NONE)

    def raise_to(self, groups: I64, clocks: I64) -> None:
        """Raise the clocks of unique ``groups`` to at least ``clocks``."""
        codes = np.concatenate([self.codes, groups])
        values = np.concatenate([self.clocks, clocks])
        order = np.lexsort((values, codes))
        codes, values = codes[order], values[order]
        last = np.r_[codes[1:] != codes[:-1], True]
        self.codes, self.clocks = codes[last], values[last]


def stable_order(codes: I64) -> I64:
    """``np.argsort(codes, kind="stable")``, by radix sort when the codes span < 2**16."""
    if len(codes) and int(codes.max()) - int(codes.min()) < 1 << 16:
        small = (codes - codes.min()).astype(np.uint16)
        order: I64 = np.argsort(small, kind="stable")
        return order
    order = np.argsort(codes, kind="stable")
    return order


def clocks_before(groups: I64, ts_ms: I64, valid: Mask, carry: Clocks) -> tuple[I64, I64, I64]:
    """Each row's group clock just before the row (NONE if none), in stream order.

    Returns ``(before, segment_groups, segment_last)``: the clocks before each row, and
    for each group present its clock after the last row (to carry on).
    """
    n = len(ts_ms)
    if n == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    order = stable_order(groups)
    g = groups[order]
    ok = valid[order]
    v = ts_ms[order]
    new_segment = np.empty(n, dtype=np.bool_)
    new_segment[0] = True
    np.not_equal(g[1:], g[:-1], out=new_segment[1:])
    segment = np.cumsum(new_segment) - 1
    base = int(v[ok].min()) if ok.any() else 0
    rel = np.where(ok, v - base + 1, 0)  # 0: no valid time
    span = int(rel.max()) + 1
    offset = segment * span
    inclusive = np.maximum.accumulate(rel + offset) - offset
    exclusive = np.empty(n, dtype=np.int64)
    exclusive[0] = 0
    exclusive[1:] = inclusive[:-1]
    exclusive[new_segment] = 0
    before_sorted = np.where(exclusive > 0, exclusive - 1 + base, NONE)
    carried = carry.lookup(g[new_segment])[segment]  # one lookup per group present
    before_sorted = np.maximum(before_sorted, carried)
    before = np.empty(n, dtype=np.int64)
    before[order] = before_sorted
    last = np.r_[new_segment[1:], True]
    after_last = np.where(inclusive[last] > 0, inclusive[last] - 1 + base, NONE)
    return before, g[last], np.maximum(after_last, carried[last])


def late_mask(spec: LateSpec, ts_ms: I64, before: I64, valid: Mask) -> Mask:
    """Rows whose every target window has closed under their group's clock ``before``."""
    last_start = ts_ms - ts_ms % spec.hop_ms
    has_clock = before != NONE
    closes = last_start + spec.size_ms + spec.tolerance_ms
    late: Mask = valid & has_clock & (closes <= before)
    return late


def latest_late_time(spec: LateSpec, clock_ms: I64) -> I64:
    """The largest event time that is late under ``clock_ms`` (every window closed)."""
    hop = spec.hop_ms
    return (clock_ms - spec.size_ms - spec.tolerance_ms) // hop * hop + hop - 1


def label(
    spec: LateSpec,
    groups: I64,
    ts_ms: I64,
    status: npt.NDArray[np.int8],
    carry: Clocks,
    removed: Mask | None = None,
) -> npt.NDArray[np.int8]:
    """Ground-truth labels (DELIVER, LATE, NULL_TIME, NOT_A_TIME, FILTERED) for rows in
    stream order; moves ``carry`` past them. ``status``: 0 valid time, 1 null, 2 not a
    time; ``removed``: rows a ``where`` stage removes before the window."""
    valid = status == 0 if removed is None else (status == 0) & ~removed
    if spec.clock_scope == "stream":
        groups = np.zeros(len(groups), dtype=np.int64)
    before, seen, after = clocks_before(groups, ts_ms, valid, carry)
    truth = np.zeros(len(ts_ms), dtype=np.int8)
    truth[late_mask(spec, ts_ms, before, valid)] = LATE
    truth[status == 1] = NULL_TIME
    truth[status == 2] = NOT_A_TIME
    if removed is not None:
        truth[removed] = FILTERED
    carry.raise_to(seen, after)
    return truth
