"""Running a query's stages (``where``, ``deduplicate``) on each event before the window.

The driver asks :meth:`StageRunner.check` about every event before its window operator
sees it; an event a stage removes becomes a :class:`Drop` (``filtered``, ``duplicate``,
or ``late`` when ``dedup_late: drop``), and the runner says whether its time still moves
the event-time clock (rules ``filtered_clock``, ``duplicate_clock``). Each rule is cited
in docs/semantics.md, "Stages before the window" (D1-D4).

The deduplicate stage's watermark (rules ``dedup_expiry: watermark``, ``dedup_late:
drop``) is one clock for the stream, moved by the profile's ``clock_moves`` and
``clock_floor`` from the events the window's clock sees too (Spark's watermark is
global): in micro-batch N it reads ``wm_{N-1}``, the watermark the previous micro-batch
ended with, for both the late test and which keys have expired.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from windtunnel.oracle.model.conditions import All, Condition, fields_of, truth
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.fields import getter, hashable
from windtunnel.oracle.model.results import Drop
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import NOW, Query
from windtunnel.oracle.model.stages import Deduplicate, Where
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.model.timefmt import time_text
from windtunnel.oracle.model.timeparse import NotATime, timestamp_ms
from windtunnel.oracle.windows.watermark import Clocks


def where_truth(condition: Condition, payload: Mapping[str, Any], rules: Rules) -> bool | None:
    """The where stage's verdict on ``payload`` (three-valued; rule ``where_null_equals``)."""
    return condition.truth(payload, nulls_compared=rules.where_null_equals == "compared")


def filtered_drop(seq: int, condition: Condition, verdict: bool | None, group: Any,
                  how: str = "where") -> Drop:
    """The ``filtered`` drop of an event ``condition`` did not hold for (``verdict`` False or
    None: unknown)."""
    why = "false" if verdict is False else (
        "unknown (a null or missing field, or values of different types)")
    return Drop(seq, "filtered", (), f"{how} {condition.text} is {why}", group)


@dataclass(frozen=True, slots=True)
class Removal:
    """What a stage did with an event it removed: the drop, and the event time (ms) to move
    the event-time clock to (None: the clock does not move)."""

    drop: Drop
    clock_ms: int | None


class _Dedup:
    """One deduplicate stage's keys: key -> (expiry, seq let through), expiry None: never;
    ``expiring`` is a heap of (expiry, seq, key) for eviction at batch ends."""

    __slots__ = ("expiring", "read", "seen", "stage")

    def __init__(self, stage: Deduplicate) -> None:
        self.stage = stage
        self.read = [getter(p) for p in stage.key]
        self.seen: dict[Any, tuple[int | None, int]] = {}
        self.expiring: list[tuple[int, int, Any]] = []

    def let_through(self, key: Any, expiry: int | None, seq: int) -> None:
        self.seen[key] = (expiry, seq)
        if expiry is not None:
            heapq.heappush(self.expiring, (expiry, seq, key))

    def evict(self, watermark: int) -> None:
        """Forget the keys whose expiry ``watermark`` reached."""
        while self.expiring and self.expiring[0][0] <= watermark:
            expiry, seq, key = heapq.heappop(self.expiring)
            if self.seen.get(key) == (expiry, seq):
                del self.seen[key]

    def key_of(self, payload: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(hashable(r(payload)) for r in self.read)

    def text(self, payload: Mapping[str, Any]) -> str:
        return ", ".join(f"{p}={r(payload)!r}" for p, r in zip(self.stage.key, self.read, strict=True))


class StageRunner:
    """The stages of ``query`` under ``rules``. Raises InvalidSpec for a watermark rule
    (``dedup_expiry: watermark``, ``dedup_late: drop``) without an event-time field."""

    def __init__(self, query: Query, rules: Rules, time_unit_ms: int = 1) -> None:
        self.rules = rules
        self.stages = query.stages
        window = query.window
        self.on = window.on
        self.tolerance_ms = int(getattr(window, "tolerance_ms", 0) or 0)
        self.time_unit_ms = time_unit_ms
        self._time_of = None if self.on == NOW else getter(self.on)
        self._dedups = {i: _Dedup(s) for i, s in enumerate(self.stages) if isinstance(s, Deduplicate)}
        self._nulls_compared = rules.where_null_equals == "compared"
        needs_watermark = bool(self._dedups) and (
            rules.dedup_expiry == "watermark" or rules.dedup_late == "drop")
        if needs_watermark and self._time_of is None:
            raise InvalidSpec(
                "deduplicate", str(next(iter(self._dedups.values())).stage),
                f"rules dedup_expiry={rules.dedup_expiry}, dedup_late={rules.dedup_late} need "
                "the watermark of an event-time field, and the window has none (on: now() or "
                "count windows)",
                "name the event-time field in window.on, or set rules: {dedup_expiry: wall, "
                "dedup_late: keep}",
            )
        self._clocks = Clocks(dataclasses.replace(rules, clock_scope="stream"), self.tolerance_ms)
        self._clock = self._clocks.new()

    def moves_clock(self) -> bool:
        """Whether a removed event may move the window's clock (rules filtered_clock,
        duplicate_clock)."""
        rules = self.rules
        return (any(isinstance(s, Where) for s in self.stages) and rules.filtered_clock != "ignored") or (
            bool(self._dedups) and rules.duplicate_clock == "moves")

    # --- the watermark the deduplicate stage reads ------------------------------------
    def _watermark(self) -> int | None:
        late = self._clock.late_ms
        return None if late is None else late - self.tolerance_ms

    def on_batch_end(self) -> None:
        """A batch (or a lone event) ended: batch clocks move (rule ``clock_moves``). Under
        ``dedup_expiry: watermark`` with batch clocks, keys expire here, as Spark evicts
        them at the end of a micro-batch with that micro-batch's watermark (D2)."""
        moves = self._clocks.moves
        evict = self.rules.dedup_expiry == "watermark" and moves != "event" and self._dedups
        if evict and moves == "batch":
            self._evict()
        self._clocks.after_batch_close(self._clocks.batch_end())
        if evict and moves == "batch_inclusive":
            self._evict()

    def _evict(self) -> None:
        now = self._clock.now_ms
        if now is None:
            return
        for dedup in self._dedups.values():
            dedup.evict(now - self.tolerance_ms)

    def on_watermark(self, to_ms: int) -> None:
        """An injected watermark (docs/semantics.md, W1) moves this clock too."""
        self._clocks.inject(to_ms + self.tolerance_ms, ())

    def on_end(self) -> None:
        self._clocks.end()

    # --- one event -------------------------------------------------------------------
    def event_time(self, payload: Mapping[str, Any]) -> int | None:
        """The event time in ms, None when null or not a time (the window drops those)."""
        if self._time_of is None:
            return None
        try:
            return timestamp_ms(self._time_of(payload), self.time_unit_ms)
        except NotATime:
            return None

    def check(self, event: Event, wall_ms: int, group: Any) -> Removal | None:
        """Run every stage on ``event`` (arrived at ``wall_ms``, of group ``group``): None
        when it passes them all, else what removed it."""
        payload = event.payload
        t_ms = self.event_time(payload)
        removal: Removal | None = None
        for index, stage in enumerate(self.stages):
            if isinstance(stage, Where):
                verdict = where_truth(stage.condition, payload, self.rules)
                if verdict is not True:
                    moves = self._filtered_moves(stage.condition, payload)
                    drop = filtered_drop(event.seq, stage.condition, verdict, group)
                    removal = Removal(drop, t_ms if moves else None)
                    break
            else:
                removal = self._deduplicate(self._dedups[index], event, t_ms, wall_ms, group)
                if removal is not None:
                    break
        clock_ms = t_ms if removal is None else removal.clock_ms
        if clock_ms is not None:
            self._clocks.observe(self._clock, clock_ms)
        return removal

    def _filtered_moves(self, condition: Condition, payload: Mapping[str, Any]) -> bool:
        """Rule filtered_clock: whether a filtered event's time moves the clock."""
        rule = self.rules.filtered_clock
        if rule != "pushdown":
            return rule == "moves"
        # Spark pushes the conjuncts that do not read the event-time field below the
        # watermark: the event reaches the watermark when it passes all of those
        tree = condition.tree
        parts = tree.parts if isinstance(tree, All) else (tree,)
        pushed = [p for p in parts if self.on not in fields_of(p)]
        return all(truth(p, payload, self._nulls_compared) is True for p in pushed)

    def _deduplicate(
        self, dedup: _Dedup, event: Event, t_ms: int | None, wall_ms: int, group: Any
    ) -> Removal | None:
        stage, rules = dedup.stage, self.rules
        by_watermark = rules.dedup_expiry == "watermark"
        watermark = self._watermark()
        if rules.dedup_late == "drop" and t_ms is not None and watermark is not None and (
            t_ms <= watermark
        ):
            unit = self.time_unit_ms
            return Removal(Drop(
                event.seq, "late", (),
                f"event time {time_text(t_ms, unit)} is at or behind the watermark "
                f"{time_text(watermark, unit)}: the {stage.kind} stage drops such rows first "
                "(dedup_late: drop)", group,
            ), t_ms)
        key = dedup.key_of(event.payload)
        known = dedup.seen.get(key)
        # a key expires when the clock reaches its expiry; batch watermarks evict at batch end
        now = wall_ms if not by_watermark else (
            watermark if self._clocks.moves == "event" else None)
        if known is not None and not (known[0] is not None and now is not None and now >= known[0]):
            expiry, first = known
            until = "for the rest of the stream" if expiry is None else (
                f"until the {'watermark' if by_watermark else 'wall clock'} reaches "
                f"{time_text(expiry, self.time_unit_ms)}")
            drop = Drop(event.seq, "duplicate", (),
                        f"{stage}: {dedup.text(event.payload)} was let through at #{first}, "
                        f"kept {until}", group)
            return Removal(drop, t_ms if rules.duplicate_clock == "moves" else None)
        within = stage.within_ms
        # a null time counts as the epoch (Spark: docs/semantics.md, D2)
        start = (t_ms or 0) if by_watermark else wall_ms
        dedup.let_through(key, None if within is None else start + within, event.seq)
        return None
