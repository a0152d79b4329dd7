"""The columns of the session fast path (:mod:`.session`): a run of events advances the
keys' clocks, reorder buffers and open sessions (:class:`SessionKey`) at once, and yields
the run's outputs.

Per key, with per-key clocks and no watermark inside a run, the reference's reorder buffer
reduces to columns:

- an event is late when its time is before ``clock - tolerance``, its key's clock before
  it (the largest time seen); "before the last released time" is implied: a released time
  is at most the cutoff then, and cutoffs never go back;
- so every time kept is at least every time already released, and the released sequence
  of a key is its kept times sorted (ties in stream order): sessions are runs of that
  sequence split where two neighbours are more than ``reach`` apart (``gap``, or ``gap -
  1`` under ``session_gap: exclusive``);
- a session ``[first, last]`` closes at the key's first event whose cutoff (its clock after
  it, minus the tolerance) reaches ``last + span`` (``gap + 1``: rule ``session_close_at``),
  or that releases the next session's first time (cutoff at least that time, at or after
  its arrival); with ``span > reach`` no later event can join a closed session.

Outputs are built in stream order; at one event its key's closes come in time order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import repeat
from typing import Any

import numpy as np
import numpy.typing as npt

from windtunnel.oracle.fast.columns import DropSlots, EmissionSlots, WindowRefSlots
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef


class SessionKey:
    """A key's clock, reorder buffer ``(t, seq)`` sorted by (t, seq), the last released
    time, and the open session: first, last and its event count (None: no session)."""

    __slots__ = ("buffer", "clock", "first", "last", "live", "released", "state", "value")

    def __init__(self, value: Any) -> None:
        self.value = value
        self.live = False  # True from the first event read
        self.clock: int | None = None
        self.buffer: list[tuple[int, int, None]] = []
        self.released: int | None = None
        self.first = 0
        self.last = 0
        self.state: int | None = None


_LIMIT = 1 << 62
"""Offset-encoded values (segment rank times value range) must stay below this."""
_PSEUDO = -(1 << 62)
"""Tie-break order of a key's open session in its sequence (before its buffer, -2**61 +
index, and the chunk's events, their stream positions)."""

Rows = Callable[[int, int, int], list[dict[str, Any]]]


def _segment_cummax(values: npt.NDArray[np.int64], ranks: npt.NDArray[np.intp], low: int, size: int) -> npt.NDArray[np.int64]:
    """Running maximum of ``values`` restarting at each segment (``ranks`` ascending, values
    within ``[low, low + size)``)."""
    offset = ranks.astype(np.int64) * size
    return np.maximum.accumulate(values - low + offset) - offset + low


def session_run(
    key_list: list[Any],
    codes: npt.NDArray[np.intp],
    times: npt.NDArray[np.int64],
    *,
    tolerance: int,
    reach: int,
    span: int,
    first_seq: int,
    wall_ms: int,
    walls: list[int] | None,
    rows: Rows,
) -> Iterator[Output] | None:
    """Advance the keys (:class:`SessionKey`) by a run of events (key codes and times, in stream
    order) and return its outputs, built as consumed; None (nothing changed) when the times
    span too wide a range for the offset encoding."""
    n = len(codes)
    order = np.argsort(codes.astype(np.uint16) if len(key_list) <= 65_536 else codes, kind="stable")
    code_s = codes[order]
    t_s = times[order]
    heads = np.flatnonzero(np.r_[True, code_s[1:] != code_s[:-1]])  # each key's first event
    present = code_s[heads].tolist()
    keys = [key_list[c] for c in present]
    m = len(keys)
    counts = np.diff(np.r_[heads, n])
    rank_s = np.repeat(np.arange(m, dtype=np.intp), counts)
    clocks0 = [key.clock if key.live else None for key in keys]
    known = [c for c in clocks0 if c is not None]
    low = min([int(t_s.min()), *known])
    high = max([int(t_s.max()), *known])
    size = high - low + 1
    margin = abs(tolerance) + abs(span) + 2
    if (size + margin) * (m + 1) >= _LIMIT or low - margin <= -_LIMIT or high + margin >= _LIMIT:
        return None  # int64 arithmetic could overflow: the per-event loop takes the chunk
    has0 = np.array([c is not None for c in clocks0], dtype=bool)
    c0 = np.array([0 if c is None else c for c in clocks0], dtype=np.int64)
    started = t_s.copy()  # each key's first time raised to its clock before the chunk
    started[heads] = np.where(has0, np.maximum(t_s[heads], c0), t_s[heads])
    clock_after = _segment_cummax(started, rank_s, low, size)
    clock_before = np.empty_like(clock_after)
    clock_before[1:] = clock_after[:-1]
    clock_before[heads] = c0
    has_before = np.ones(n, dtype=bool)
    has_before[heads] = has0
    late = has_before & (t_s < clock_before - tolerance)
    cut = clock_after - tolerance

    # the sequence S per key: the open session (one pseudo element), the buffer, the kept times
    kept = np.flatnonzero(~late)  # key-sorted indices
    # old elements: each open session (a pseudo element at its last time), then each buffer
    sessions = [rank for rank, key in enumerate(keys) if key.state is not None]
    n_pseudo = len(sessions)
    old_entries = [entry for key in keys for entry in key.buffer]
    old_t = [keys[rank].last for rank in sessions] + [entry[0] for entry in old_entries]
    old_first = [keys[rank].first for rank in sessions] + old_t[n_pseudo:]
    old_weight = [keys[rank].state for rank in sessions] + [1] * len(old_entries)
    old_code = np.concatenate((
        np.array(sessions, dtype=np.intp),
        np.repeat(np.arange(m, dtype=np.intp), [len(key.buffer) for key in keys]),
    ))
    n_old = len(old_t)
    try:  # the open sessions' first times may lie far back
        old_times = np.array(old_t, dtype=np.int64)
        old_firsts = np.array(old_first, dtype=np.int64)
    except OverflowError:
        return None
    cat_t = np.concatenate((old_times, t_s[kept]))
    cat_rank = np.concatenate((old_code, rank_s[kept]))
    s_low = min(low, int(cat_t.min())) if len(cat_t) else low
    s_size = (max(high, int(cat_t.max())) if len(cat_t) else high) - s_low + 1
    if s_size * (m + 1) >= _LIMIT:
        old_order = np.concatenate((  # open sessions first, then buffers in order, then the chunk
            np.full(n_pseudo, _PSEUDO, dtype=np.int64),
            np.arange(len(old_entries), dtype=np.int64) - (1 << 61),
        ))
        cat_order = np.concatenate((old_order, order[kept].astype(np.int64)))
        by = np.lexsort((cat_order, cat_t, cat_rank))
    else:  # stable: ties keep the input order (open session, buffer, stream order) in a key
        by = np.argsort(cat_rank.astype(np.int64) * s_size + (cat_t - s_low), kind="stable")
    s_t = cat_t[by]
    s_rank = cat_rank[by]
    old_weights = np.array(old_weight, dtype=np.int64)
    s_weight = np.ones(len(by), dtype=np.int64)
    from_old = np.flatnonzero(by < n_old)  # S positions of the open sessions and buffers
    s_weight[from_old] = old_weights[by[from_old]]
    pseudo = np.zeros(len(by), dtype=bool)
    pseudo[from_old] = by[from_old] < n_pseudo

    def kept_index(positions: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
        """The key-sorted index of S's elements at ``positions`` (-1: from before the chunk)."""
        src = by[positions] - n_old
        return np.where(src >= 0, kept[np.maximum(src, 0)] if len(kept) else 0, -1)

    k = len(s_t)
    key_ends = np.r_[heads[1:], n]  # one past each key's last event (key-sorted)
    last_cut = cut[key_ends - 1]
    released = s_t <= last_cut[s_rank]
    starts_group = np.ones(k, dtype=bool)
    if k > 1:
        starts_group[1:] = (s_rank[1:] != s_rank[:-1]) | (s_t[1:] - s_t[:-1] > reach)
    g_start = np.flatnonzero(starts_group)
    g_end = (np.r_[g_start[1:], k] - 1)[: len(g_start)]
    g_rank = s_rank[g_start]
    groups = len(g_start)
    g_src = by[g_start]
    firsts = np.where(g_src < n_old, old_firsts[np.minimum(g_src, max(n_old - 1, 0))] if n_old else 0, s_t[g_start])
    same_next = np.zeros(groups, dtype=bool)
    same_next[:-1] = g_rank[1:] == g_rank[:-1]
    # close by cutoff: the key's first event with cut >= last + span (offset-encoded search)
    cut_low = int(cut.min())
    cut_size = int(cut.max()) - cut_low + 2
    encoded = cut - cut_low + rank_s.astype(np.int64) * cut_size
    g_offset = g_rank.astype(np.int64) * cut_size

    def first_reaching(threshold: npt.NDArray[np.int64]) -> npt.NDArray[np.intp]:
        q = np.clip(threshold - cut_low, 0, cut_size - 1) + g_offset
        found = np.searchsorted(encoded, q, side="left")
        return np.where(threshold - cut_low >= cut_size - 1, n, found)

    never = n
    by_cut = first_reaching(s_t[g_end] + span)
    nxt = g_start.copy()  # each group's successor's first element (same key: same_next)
    nxt[:-1] = g_start[1:]
    by_release = np.maximum(first_reaching(s_t[nxt]), kept_index(nxt))
    close_at = np.where(same_next, np.minimum(by_cut, by_release), by_cut)
    key_end_of = key_ends[g_rank]
    closes = close_at < key_end_of
    close_at = np.where(closes, close_at, never)
    weights = np.add.reduceat(s_weight, g_start) if k else np.zeros(0, dtype=np.int64)

    # state at the end of the chunk, per key
    rel_weight = np.add.reduceat(np.where(released, s_weight, 0), g_start) if k else weights
    rel_count = np.add.reduceat(released.astype(np.intp), g_start) if k else np.zeros(0, dtype=np.intp)
    for key, clock in zip(keys, clock_after[key_ends - 1].tolist(), strict=True):
        key.live = True
        key.clock = clock
        key.state = None
        key.buffer = []
    rel_idx = np.flatnonzero(released & ~pseudo)  # released times, not open sessions
    if len(rel_idx):
        rel_rank = s_rank[rel_idx]
        last_of_key = np.r_[rel_rank[1:] != rel_rank[:-1], True]
        for rank, t in zip(rel_rank[last_of_key].tolist(), s_t[rel_idx[last_of_key]].tolist(), strict=True):
            keys[rank].released = t
    open_group = np.flatnonzero(~closes & (rel_count > 0))
    for rank, weight, first, last in zip(
        g_rank[open_group].tolist(), rel_weight[open_group].tolist(),
        firsts[open_group].tolist(), s_t[g_start[open_group] + rel_count[open_group] - 1].tolist(),
        strict=True,
    ):
        key = keys[rank]
        if key.state is None:  # only the key's first unclosed group can hold released times
            key.state = weight
            key.first = first
            key.last = last
    pending = np.flatnonzero(~released)  # never an open session: it was released
    if len(pending):
        source = by[pending]
        index = kept_index(pending)
        old_seqs = np.array([entry[1] for entry in old_entries], dtype=np.int64)
        seqs = np.where(
            index >= 0, order[np.maximum(index, 0)] + first_seq,
            old_seqs[np.clip(source - n_pseudo, 0, max(len(old_entries) - 1, 0))] if len(old_entries) else 0,
        )
        # count-only: a buffered entry needs no payload
        entries = list(zip(s_t[pending].tolist(), seqs.tolist(), repeat(None)))
        ranks = s_rank[pending]  # ascending: S is sorted by key
        bounds = np.flatnonzero(np.r_[True, ranks[1:] != ranks[:-1], True]).tolist()
        for rank, low_i, high_i in zip(ranks[bounds[:-1]].tolist(), bounds[:-1], bounds[1:], strict=True):
            keys[rank].buffer = entries[low_i:high_i]

    # outputs in stream order: late drops and closes (a key's closes at one event in order)
    closed = np.flatnonzero(closes)
    close_pos = order[close_at[closed]]
    late_at = np.flatnonzero(late)
    late_pos = order[late_at]
    # in order of (position, tie, then closes before lates): the tie is the closed group's
    # index, 0 for a late event; listed by (tie, that order), a stable sort by position does it
    zero = 1 if len(closed) and closed[0] == 0 else 0
    out_pos = np.concatenate((close_pos[:zero], late_pos, close_pos[zero:]))
    out_item = np.concatenate((
        np.arange(zero, dtype=np.intp), -1 - np.arange(len(late_at), dtype=np.intp),
        np.arange(zero, len(closed), dtype=np.intp),
    ))
    sequence = np.argsort(out_pos.astype(np.uint16) if n <= 65_536 else out_pos, kind="stable")
    values = [key.value for key in keys]
    return _outputs(
        (out_pos[sequence] + first_seq).tolist(),
        out_item[sequence].tolist(),
        [values[r] for r in g_rank[closed].tolist()],
        firsts[closed].tolist(),
        s_t[g_end[closed]].tolist(),
        weights[closed].tolist(),
        [values[r] for r in rank_s[late_at].tolist()],
        t_s[late_at].tolist(),
        (clock_before[late_at] - tolerance).tolist(),
        repeat(wall_ms) if walls is None else [walls[p] for p in out_pos[sequence].tolist()],
        rows,
    )


def _outputs(
    seqs: list[int],
    items: list[int],
    groups: list[Any],
    firsts: list[int],
    lasts: list[int],
    weights: list[int],
    late_groups: list[Any],
    late_times: list[int],
    watermarks: list[int],
    walls: Iterable[int],
    rows: Rows,
) -> Iterator[Output]:
    """The Drop and Emission values of a run, in order (``items``: the i-th closed
    session, or ``-1 - i`` for the i-th late event; ``walls``: the wall clock at each);
    built inline (:mod:`.columns`)."""
    new = object.__new__
    ref_twin, emission_twin, drop_twin = WindowRefSlots, EmissionSlots, DropSlots
    ref_type, emission_type, drop_type = WindowRef, Emission, Drop
    count_name = getattr(rows, "count_name", None)  # one count: its row built inline
    for seq, item, wall_ms in zip(seqs, items, walls, strict=False):
        if item >= 0:
            ref: Any = new(ref_twin)
            ref.start_ms = first = firsts[item]
            ref.end_ms = last = lasts[item]
            ref.start_offset = ref.end_offset = None
            ref.__class__ = ref_type
            if count_name is not None:
                out: Any = new(emission_twin)
                out.window = ref
                out.group = groups[item]
                out.row = {count_name: weights[item]}
                out.reason = "close"
                out.after_seq = seq
                out.wall_ms = wall_ms
                out.partial = False
                out.type = "emit"
                out.__class__ = emission_type
                yield out
                continue
            for row in rows(weights[item], first, last):
                out = new(emission_twin)
                out.window = ref
                out.group = groups[item]
                out.row = row
                out.reason = "close"
                out.after_seq = seq
                out.wall_ms = wall_ms
                out.partial = False
                out.type = "emit"
                out.__class__ = emission_type
                yield out
        else:
            i = -1 - item
            t = late_times[i]
            missed: Any = new(ref_twin)
            missed.start_ms = missed.end_ms = t
            missed.start_offset = missed.end_offset = None
            missed.__class__ = ref_type
            lost: Any = new(drop_twin)  # Drop(seq, "late", (missed,), message, group), inline
            lost.seq = seq
            lost.reason = "late"
            lost.windows = (missed,)
            lost.message = (
                f"event time {t} is late for sessions: the watermark (clock - tolerance) is "
                f"{watermarks[i]}; raise tolerance to keep it"
            )
            lost.group = late_groups[i]
            lost.type = "drop"
            lost.__class__ = drop_type
            yield lost


def count_rows(names: list[tuple[str, str]]) -> Rows:
    """Rows of a count-only aggregate: ``(name, function)`` pairs of count, window_start,
    window_end (as :meth:`Aggregator.rows` gives them)."""

    def rows(n: int, first: int, last: int) -> list[dict[str, Any]]:
        return [{name: n if fn == "count" else (first if fn == "window_start" else last) for name, fn in names}]

    if len(names) == 1 and names[0][1] == "count":
        name = names[0][0]

        def count(n: int, first: int, last: int) -> list[dict[str, Any]]:
            return [{name: n}]

        count.count_name = name  # type: ignore[attr-defined]
        return count
    return rows


