"""kdb Insights record-count, trigger and processing-time windows.

``.qsp.window.count[size; frequency]``, ``.qsp.window.global[trigger]`` and
``.qsp.window.timer[period]`` (rules K11-K14 in docs/semantics.md; source:
https://code.kx.com/insights/1.11/api/stream-processor/q/windows.html). All three work per published batch and per ``group_by`` key. Count and
global windows report half-open ranges of event offsets ``[start_offset, end_offset)`` counted
from 0 per key; timer windows report the wall-clock span ``[previous tick, tick)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.fields import getter
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef
from windtunnel.oracle.model.spec import CountWindows, Query
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.profiles.kdb.spec import (
    KdbCountWindows,
    KdbGlobalWindows,
    KdbTimerWindows,
    Payload,
    Trigger,
)
from windtunnel.oracle.windows.driver import Context, Group, Operator
from windtunnel.oracle.windows.window_rows import EMPTY_ROW_FLAG, Rows

# --- built-in triggers for scenario files (the page's two examples) -------------------------


def split_on_value(field_path: str, equals: Any) -> Trigger:
    """Split before every record whose ``field_path`` equals ``equals``: the page's
    ``offset + where data[`status] = `new``."""
    get = getter(field_path)

    def trigger(
        buffer: Sequence[Payload], offset: int, data: Sequence[Payload], state: Any
    ) -> tuple[list[int], Any]:
        return [offset + i for i, row in enumerate(data) if get(row) == equals], state

    return trigger


NEW_HIGH: tuple[str, ...] = ("ends", "starts")
"""Where a new high goes in :func:`high_water_mark`: it ends the window it closes (the page's
q code, ``offset + 1 + ...``) or starts the next one (its comment: "causing everything before
it to be emitted")."""


def high_water_mark(field_path: str, new_high: str = "ends") -> Trigger:
    """The page's high-water-mark trigger, transcribed: ``runningMax: or\\[state, data`val]``;
    indices ``offset + 1 + where 0 <> 1 _ deltas runningMax``, returned only when
    ``state < max data`val``; the new state is the last running maximum. Each new high ends
    a window (it is the last record of the window it closes); ``new_high="starts"`` drops the
    ``1 +``: each new high starts a window. Raises InvalidSpec for another ``new_high``."""
    if new_high not in NEW_HIGH:
        raise InvalidSpec("window.trigger.high_water_mark.new_high", new_high,
                          "must be ends or starts", "write new_high: ends (the page's code)")
    shift = 1 if new_high == "ends" else 0
    get = getter(field_path)

    def trigger(
        buffer: Sequence[Payload], offset: int, data: Sequence[Payload], state: Any
    ) -> tuple[list[int], Any]:
        running = [state]
        for row in data:
            running.append(max(running[-1], get(row)))
        indices = [offset + shift + j for j in range(len(data)) if running[j + 1] != running[j]]
        values = [get(row) for row in data]
        return (indices if values and state < max(values) else []), running[-1]

    return trigger


# --- operators ------------------------------------------------------------------------------


class _Buffer:
    __slots__ = ("batch_sizes", "emitted", "first_offset", "payloads", "received", "state")

    def __init__(self, state: Any = None) -> None:
        self.payloads: list[Payload] = []
        self.first_offset = 0  # offset (per key) of payloads[0]
        self.emitted = 0  # count windows: next window index
        self.received = 0  # records received (per key): the next record's offset
        self.state = state
        self.batch_sizes: list[int] = []  # global windows: records of each buffered batch


class _BatchedOperator(Operator):
    """Collects each batch's records per key, then calls ``_batch`` for every key touched."""

    def __init__(self, query: Query, ctx: Context) -> None:
        self.rows = Rows(query)
        self._touched: dict[int, tuple[Group, list[Payload]]] = {}

    def _new_buffer(self) -> _Buffer:
        return _Buffer()

    def on_event(
        self, group: Group, event: Event, t_ms: int, ctx: Context, out: list[Output]
    ) -> None:
        if group.state is None:
            group.state = self._new_buffer()
        self._touched.setdefault(group.index, (group, []))[1].append(event.payload)

    def on_batch_end(self, ctx: Context, out: list[Output]) -> None:
        touched, self._touched = self._touched, {}
        for group, data in touched.values():
            self._batch(group, group.state, data, ctx, out)

    def _batch(
        self, group: Group, buffer: _Buffer, data: list[Payload], ctx: Context, out: list[Output]
    ) -> None:
        raise NotImplementedError

    def _emit(
        self, group: Group, start: int, payloads: Sequence[Payload], reason: str, ctx: Context,
        out: list[Output], partial: bool = False,
    ) -> None:
        ref = WindowRef(start_offset=start, end_offset=start + len(payloads))
        if ctx.trace is not None:
            ctx.trace.holding(payloads, group.value, ref)
            ctx.trace.closed(group.value, ref, reason)
        self.rows.emit(
            out, ref, group.value, payloads, reason, ctx.after_seq, ctx.wall_ms, partial=partial
        )


class KdbCountOperator(_BatchedOperator):
    """K11: buffer until ``size`` records, split into windows of ``size``, keep the leftovers."""

    def __init__(self, query: Query, ctx: Context) -> None:
        super().__init__(query, ctx)
        spec = query.window
        if isinstance(spec, CountWindows):  # the generic count kind: size = count
            spec = KdbCountWindows(spec.count, spec.every)
        assert isinstance(spec, KdbCountWindows)
        self.size = spec.size
        self.frequency = spec.frequency or spec.size
        self.end_of_input = ctx.rules.end_of_input

    def on_event(
        self, group: Group, event: Event, t_ms: int, ctx: Context, out: list[Output]
    ) -> None:
        super().on_event(group, event, t_ms, ctx, out)
        buffer = group.state
        offset = buffer.received
        buffer.received += 1
        if offset % self.frequency >= self.size:  # frequency > size: between two windows
            out.append(Drop(event.seq, "no_window", (), f"record offset {offset} falls between "
                            f"count windows of {self.size} starting every {self.frequency}", group.value))

    def _batch(
        self, group: Group, buffer: _Buffer, data: list[Payload], ctx: Context, out: list[Output]
    ) -> None:
        buffer.payloads.extend(data)
        total = buffer.first_offset + len(buffer.payloads)
        while (start := buffer.emitted * self.frequency) + self.size <= total:
            lo = start - buffer.first_offset
            self._emit(group, start, buffer.payloads[lo : lo + self.size], "count", ctx, out)
            buffer.emitted += 1
        # one copy per record: drop what no later window needs
        keep_from = buffer.emitted * self.frequency
        if keep_from > buffer.first_offset:
            del buffer.payloads[: keep_from - buffer.first_offset]
            buffer.first_offset = min(keep_from, total)

    def on_end(self, ctx: Context, out: list[Output]) -> None:
        if self.end_of_input == "discard":
            return
        for group in ctx.groups.values():
            buffer = group.state
            if buffer is None:
                continue
            total = buffer.first_offset + len(buffer.payloads)
            while (start := buffer.emitted * self.frequency) < total:
                lo = start - buffer.first_offset
                self._emit(
                    group, start, buffer.payloads[lo:], "end_of_input", ctx, out, partial=True
                )
                buffer.emitted += 1


TRIGGERED = "trigger"
"""Emission reason of a window split off by a ``.qsp.window.global`` trigger."""


def _batches(buffer: _Buffer) -> tuple[tuple[Payload, ...], ...]:
    """The buffer as the page's "list of batches" (``mixedSchemas``), oldest first."""
    pieces: list[tuple[Payload, ...]] = []
    start = 0
    for size in buffer.batch_sizes:
        pieces.append(tuple(buffer.payloads[start : start + size]))
        start += size
    return tuple(pieces)


class KdbGlobalOperator(_BatchedOperator):
    """K12: buffer batches, split the buffer on the indices the trigger returns."""

    def __init__(self, query: Query, ctx: Context) -> None:
        super().__init__(query, ctx)
        spec = query.window
        assert isinstance(spec, KdbGlobalWindows)
        self.spec = spec
        self.end_of_input = ctx.rules.end_of_input

    def _new_buffer(self) -> _Buffer:
        return _Buffer(self.spec.state)

    def _batch(
        self, group: Group, buffer: _Buffer, data: list[Payload], ctx: Context, out: list[Output]
    ) -> None:
        offset = len(buffer.batch_sizes if self.spec.mixed_offset == "batches" else buffer.payloads)
        buffer.payloads.extend(data)
        buffer.batch_sizes.append(len(data))
        view: tuple[Any, ...] = (
            _batches(buffer) if self.spec.mixed_schemas else tuple(buffer.payloads)
        )
        indices, buffer.state = self.spec.trigger(view, offset, tuple(data), buffer.state)
        if not indices:  # "an empty list or generic null": buffer, emit nothing
            return
        cuts = sorted(set(indices))
        for index in cuts:
            if not 0 <= index <= len(buffer.payloads):
                raise InvalidSpec(
                    f"window.trigger ({self.spec.name})",
                    index,
                    f"index outside the buffer of {len(buffer.payloads)} records",
                    "return indices between 0 and the buffer count",
                )
        previous = 0
        for index in cuts:
            if index > previous:  # an empty piece emits nothing
                start = buffer.first_offset + previous
                self._emit(group, start, buffer.payloads[previous:index], TRIGGERED, ctx, out)
            previous = index
        # "The last list will remain in the buffer"
        del buffer.payloads[:previous]
        buffer.first_offset += previous
        while previous and buffer.batch_sizes:  # a split batch keeps its remaining records
            taken = min(previous, buffer.batch_sizes[0])
            previous -= taken
            buffer.batch_sizes[0] -= taken
            if not buffer.batch_sizes[0]:
                del buffer.batch_sizes[0]

    def on_end(self, ctx: Context, out: list[Output]) -> None:
        if self.end_of_input == "discard":
            return
        for group in ctx.groups.values():
            buffer = group.state
            if buffer is not None and buffer.payloads:
                self._emit(
                    group, buffer.first_offset, buffer.payloads, "end_of_input", ctx, out,
                    partial=True,
                )


class KdbTimerOperator(Operator):
    """K13: emit every key's buffer each ``period_ms`` of wall time (ticks at start + k * period).

    An empty buffer gives an empty window with the previous window's schema (``row`` of nulls
    plus ``_empty: true`` in pass-through mode); nothing before the first record.
    """

    def __init__(self, query: Query, ctx: Context) -> None:
        spec = query.window
        assert isinstance(spec, KdbTimerWindows)
        self.spec = spec
        self.rows = Rows(query)
        self.pass_through = query.aggregate is None
        self.end_of_input = ctx.rules.end_of_input
        self.skip_empty = spec.skip_empty_windows or ctx.rules.empty_windows == "skip"
        self.window_start_ms = ctx.wall_ms
        self.next_tick_ms = ctx.wall_ms + spec.period_ms

    def on_event(
        self, group: Group, event: Event, t_ms: int, ctx: Context, out: list[Output]
    ) -> None:
        if group.state is None:
            group.state = {"payloads": [], "schema": None}
        group.state["payloads"].append(event.payload)

    def on_batch_end(self, ctx: Context, out: list[Output]) -> None:
        limit = self.spec.count_trigger
        if limit is None:
            return
        for group in ctx.groups.values():
            if group.state is not None and len(group.state["payloads"]) >= limit:
                self._flush(group, "count", ctx.wall_ms, ctx, out, partial=True)

    def _flush(
        self, group: Group, reason: str, wall_ms: int, ctx: Context, out: list[Output],
        *, partial: bool,
    ) -> None:
        state = group.state
        payloads = state["payloads"]
        ref = WindowRef(self.window_start_ms, wall_ms)
        if ctx.trace is not None:
            ctx.trace.holding(payloads, group.value, ref)
            ctx.trace.closed(group.value, ref, reason)
        if payloads:
            self.rows.emit(out, ref, group.value, payloads, reason, ctx.after_seq, wall_ms,
                           partial=partial)
            state["schema"] = list(dict.fromkeys(k for p in payloads for k in p))
            state["payloads"] = []
        elif state["schema"] is not None and not self.skip_empty:
            rows = self.rows.rows([], ref.start_ms, ref.end_ms)
            if self.pass_through:
                rows = [{**dict.fromkeys(state["schema"]), EMPTY_ROW_FLAG: True}]
            for row in rows:
                out.append(Emission(ref, group.value, row, reason, ctx.after_seq, wall_ms, partial))

    def on_wall(self, ctx: Context, out: list[Output]) -> None:
        period = self.spec.period_ms
        while self.next_tick_ms <= ctx.wall_ms:
            tick = self.next_tick_ms
            idle = all(
                g.state is None or (not g.state["payloads"] and self.skip_empty)
                for g in ctx.groups.values()
            )
            if idle:  # nothing can be emitted: jump to the last tick not after the wall clock
                tick += (ctx.wall_ms - tick) // period * period
            else:
                for group in ctx.groups.values():
                    if group.state is not None:
                        self._flush(group, "timer", tick, ctx, out, partial=False)
            self.window_start_ms = tick
            self.next_tick_ms = tick + period

    def on_end(self, ctx: Context, out: list[Output]) -> None:
        if self.end_of_input == "discard":
            return
        for group in ctx.groups.values():
            if group.state is not None and group.state["payloads"]:
                self._flush(group, "end_of_input", ctx.wall_ms, ctx, out, partial=True)
