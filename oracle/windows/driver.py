"""The stream driver shared by every window kind.

It owns what does not depend on the kind: the virtual wall clock, stream order
(``seq``), reading the event time and the group key, dropping events whose time
is null or not a timestamp, turning ``End`` into a flush and handing injected
``Watermark`` items to the operator. A kind (``fixed``, ``session``, ...) implements
:class:`Operator`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from windtunnel.oracle.model.errors import InvalidSpec, InvalidStream
from windtunnel.oracle.model.fields import getter, hashable
from windtunnel.oracle.model.results import Drop, Output
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import NOW, Query
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item, Watermark, checked
from windtunnel.oracle.model.timeparse import NotATime, timestamp_ms
from windtunnel.oracle.windows.stages import StageRunner
from windtunnel.oracle.windows.trace import ClockView, Trace


class Group:
    """One ``group_by`` key: its output value and its first-seen index (for ordering)."""

    __slots__ = ("index", "state", "value")

    def __init__(self, index: int, value: Any) -> None:
        self.index = index
        self.value = value
        self.state: Any = None


class Operator:
    """What a window kind implements. Every method appends outputs to ``out``."""

    def on_event(
        self, group: Group, event: Event, t_ms: int, ctx: Context, out: list[Output]
    ) -> None:
        raise NotImplementedError

    def on_unusable(self, group: Group, event: Event, ctx: Context, out: list[Output]) -> None:
        """An event of ``group`` dropped for its time (only some rules care)."""

    def on_clock_only(self, group: Group, t_ms: int, ctx: Context, out: list[Output]) -> None:
        """An event of ``group`` at ``t_ms`` that a stage before the window removed, whose
        time still moves the event-time clock (rules ``filtered_clock``,
        ``duplicate_clock``: docs/semantics.md, D3). Kinds without such a clock keep this
        default, which refuses."""
        raise InvalidSpec(
            f"rules.{'duplicate_clock' if ctx.rules.duplicate_clock == 'moves' else 'filtered_clock'}",
            "moves", f"{type(self).__name__} under profile {ctx.profile} has no event-time clock a "
            "removed event could move", "set rules: {filtered_clock: ignored, duplicate_clock: "
            "ignored}, or use fixed or session windows",
        )

    def on_wall(self, ctx: Context, out: list[Output]) -> None:
        """The wall clock moved to ``ctx.wall_ms``."""

    def on_batch_end(self, ctx: Context, out: list[Output]) -> None:
        """A batch (or a lone event outside any batch) was fully consumed."""

    def on_watermark(self, to_ms: int, ctx: Context, out: list[Output]) -> None:
        """An injected watermark ``{watermark: T}`` (docs/semantics.md, W1): the watermark
        moves to ``to_ms`` unless it is already there or past it. Kinds and profiles without
        a watermark keep this default, which rejects the item (:func:`watermark_rejected`)."""
        raise watermark_rejected(ctx.profile, to_ms, "its windows have no event-time watermark")

    def on_end(self, ctx: Context, out: list[Output]) -> None:
        raise NotImplementedError

    def clock_view(self, ctx: Context) -> ClockView | None:
        """The event-time clock(s) now, read-only, for explanations; None for kinds without
        one (count windows)."""
        return None


class Context:
    """The driver's view shared with the operator: wall clock, last seq, groups, and an
    optional :class:`Trace` observer (None in ordinary runs; operators check before use)."""

    __slots__ = ("after_seq", "groups", "profile", "rules", "time_unit_ms", "trace", "wall_ms")

    def __init__(
        self, rules: Rules, time_unit_ms: int, start_wall_ms: int, profile: str = "tenzir"
    ) -> None:
        self.wall_ms = start_wall_ms
        self.after_seq: int | None = None
        self.groups: dict[Any, Group] = {}
        self.rules = rules
        self.time_unit_ms = time_unit_ms
        self.profile = profile
        self.trace: Trace | None = None


def group_value(values: tuple[Any, ...]) -> Any:
    """The contract's ``group``: None ungrouped, the value for one field, a list for several."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return list(values)


class Driver:
    """Feeds stream items to an operator and yields outputs in order."""

    def __init__(
        self,
        query: Query,
        make_operator: Callable[[Query, Context], Operator],
        rules: Rules,
        *,
        time_unit_ms: int = 1,
        start_wall_ms: int = 0,
        profile: str = "tenzir",
    ) -> None:
        self.query = query
        self.ctx = Context(rules, time_unit_ms, start_wall_ms, profile)
        self.operator = make_operator(query, self.ctx)
        on = query.window.on
        self._by_wall = on == NOW
        # a window spec may assign times itself (kdb's ``timeAssigner``): payload -> timestamp
        assigner = getattr(query.window, "time_assigner", None)
        self._time_of = getter(on) if assigner is None else assigner
        self._time_label = on if assigner is None else "time_assigner"
        self._key_getters = [getter(p) for p in query.group_by]
        # stages before the window (docs/semantics.md, D1-D4); None without any
        self._stages = StageRunner(query, rules, time_unit_ms) if query.stages else None
        if self._stages is not None and self._stages.moves_clock() and (
            type(self.operator).on_clock_only is Operator.on_clock_only
        ):
            self.operator.on_clock_only(Group(0, None), 0, self.ctx, [])  # raises InvalidSpec

    def run(
        self, items: Iterable[Item], *, next_seq: int = 0, first_index: int = 0
    ) -> Iterator[Output]:
        """Outputs of ``items`` in order (validated by :func:`checked`; ``End`` implied).

        ``next_seq`` and ``first_index`` resume a stream another consumer began (a fast
        path handing over): its groups and the operator's state then hold what it read.
        """
        out: list[Output] = []
        for item in checked(items, self.ctx.wall_ms, next_seq=next_seq, first_index=first_index):
            self.feed(item, out)
            if out:
                yield from out
                out.clear()

    def feed(self, item: Item, out: list[Output]) -> None:
        """Consume one already-validated item, appending its outputs to ``out``.

        For incremental use (one micro-batch at a time); the caller must keep the
        stream valid: seq in order, wall clock never back, nothing after ``End``.
        """
        operator = self.operator
        ctx = self.ctx
        stages = self._stages
        if isinstance(item, Event):
            self._event(item, out)
            operator.on_batch_end(ctx, out)
            if stages is not None:
                stages.on_batch_end()
        elif isinstance(item, Batch):
            for event in item.events:
                self._event(event, out)
            operator.on_batch_end(ctx, out)
            if stages is not None:
                stages.on_batch_end()
        elif isinstance(item, Advance):
            if item.to_ms > ctx.wall_ms:
                ctx.wall_ms = item.to_ms
                operator.on_wall(ctx, out)
        elif isinstance(item, Watermark):
            operator.on_watermark(item.to_ms, ctx, out)
            if stages is not None:
                stages.on_watermark(item.to_ms)
        elif isinstance(item, End):
            operator.on_end(ctx, out)

    def _event(self, event: Event, out: list[Output]) -> None:
        ctx = self.ctx
        if event.at_ms is not None and event.at_ms > ctx.wall_ms:
            ctx.wall_ms = event.at_ms
            self.operator.on_wall(ctx, out)
        payload = event.payload
        if self._stages is not None and self._removed(event, out):
            return
        group = self._group(payload)
        ctx.after_seq = event.seq
        if self._by_wall:
            t_ms: int | None = ctx.wall_ms
        else:
            raw = self._time_of(payload)
            if type(raw) is int:
                t_ms = raw * ctx.time_unit_ms
            else:
                try:
                    t_ms = timestamp_ms(raw, ctx.time_unit_ms)
                except NotATime as exc:
                    out.append(unusable_time_drop(event.seq, self._time_label, raw, exc, group.value))
                    self.operator.on_unusable(group, event, ctx, out)
                    return
        if t_ms is None:
            out.append(unusable_time_drop(event.seq, self._time_label, None, None, group.value))
            self.operator.on_unusable(group, event, ctx, out)
            return
        self.operator.on_event(group, event, t_ms, ctx, out)

    def _removed(self, event: Event, out: list[Output]) -> bool:
        """Whether a stage before the window removed ``event`` (its drop appended; its time
        moved the clock where the rules say so)."""
        ctx = self.ctx
        assert self._stages is not None
        key = group_value(tuple(g(event.payload) for g in self._key_getters))
        removal = self._stages.check(event, ctx.wall_ms, key)
        if removal is None:
            return False
        ctx.after_seq = event.seq
        out.append(removal.drop)
        if removal.clock_ms is not None:
            self.operator.on_clock_only(self._group(event.payload), removal.clock_ms, ctx, out)
        return True

    def _group(self, payload: Mapping[str, Any]) -> Group:
        return self.group_for(tuple(g(payload) for g in self._key_getters))

    def group_for(self, values: tuple[Any, ...]) -> Group:
        """The group of the ``group_by`` values ``values``, created (next index) when new."""
        groups = self.ctx.groups
        try:
            group = groups.get(values)
            key: tuple[Any, ...] = values
        except TypeError:  # a list or mapping among the key values
            key = tuple(hashable(v) for v in values)
            group = groups.get(key)
        if group is None:
            group = groups[key] = Group(len(groups), group_value(values))
        return group


WATERMARK_PROFILES = "flink, spark, ekuiper, timeplus, beam"
PROCESSING_TIME = (
    "windows on now() follow the wall clock, which watermarks do not move; use {advance: ...}"
)
"""Why windows on ``now()`` take no injected watermark (:func:`watermark_rejected`)."""


def watermark_rejected(profile: str, to_ms: int, why: str) -> InvalidStream:
    """The one-line error for a ``{watermark: T}`` item an operator cannot take."""
    return InvalidStream(
        "watermark_ms",
        to_ms,
        f"profile {profile} cannot take an injected watermark: {why}",
        f"remove the {{watermark: ...}} item, or use a watermark-driven profile "
        f"({WATERMARK_PROFILES}; docs/semantics.md, W1)",
    )


def unusable_time_drop(
    seq: int, on: str, raw: Any, error: NotATime | None, group: Any = None
) -> Drop:
    """The drop for an event (of ``group``) whose ``on`` value is null (``error`` None) or
    not a timestamp."""
    if error is None:
        return Drop(seq, "null_time", (), f"{on} is null or missing", group)
    return Drop(seq, "not_a_time", (), f"{on}={raw!r}: {error}", group)
