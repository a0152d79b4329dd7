"""Count windows: tumbling and hopping windows over a group's event offsets.

Each group numbers its events 0, 1, 2, ... in stream order (its offsets). Window
``[s, s + count)`` (offsets, half-open) with ``s`` a multiple of ``every`` collects the
events at those offsets and is emitted (reason ``count``) when its last offset
arrives. At end of input the partial windows are flushed (rule ``end_of_input``) and
report their nominal range ``[s, s + count)``, as Tenzir 6.20 does. With ``every >
count`` (rule ``every_greater_than_size: accept``) the events between windows are dropped with reason ``no_window``. Count
windows never read event time, so they drop nothing for it.
"""

from __future__ import annotations

from typing import Any

from windtunnel.oracle.model.aggregates import Aggregator
from windtunnel.oracle.model.assignment import starts_containing
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef
from windtunnel.oracle.model.spec import CountWindows, Query
from windtunnel.oracle.model.stream import Event
from windtunnel.oracle.windows.driver import Context, Group, Operator


class CountKey:
    """Per-group state: the next offset and the open windows' states by start offset."""

    __slots__ = ("next_offset", "windows")

    def __init__(self) -> None:
        self.next_offset = 0
        self.windows: dict[int, Any] = {}


class CountOperator(Operator):
    """Count windows of the default profile."""

    def __init__(self, query: Query, ctx: Context) -> None:
        spec = query.window
        assert isinstance(spec, CountWindows)
        self.count = spec.count
        self.hop = spec.hop
        self.rules = ctx.rules
        self.aggregator = (
            None if query.aggregate is None else Aggregator(query.aggregate, query.aggregate_by)
        )

    def on_event(
        self, group: Group, event: Event, t_ms: int, ctx: Context, out: list[Output]
    ) -> None:
        key = group.state
        if key is None:
            key = group.state = CountKey()
        offset = key.next_offset
        key.next_offset += 1
        starts = starts_containing(offset, self.count, self.hop, lowest=0)
        if not starts:
            out.append(
                Drop(
                    event.seq,
                    "no_window",
                    (),
                    f"offset {offset} of its group lies between windows (every {self.hop} > "
                    f"count {self.count})",
                    group.value,
                )
            )
            return
        trace = ctx.trace
        for start in starts:
            if trace is not None:
                trace.delivered(
                    event.seq, group.value, WindowRef(start_offset=start, end_offset=start + self.count)
                )
            state = key.windows.get(start)
            if state is None:
                state = key.windows[start] = (
                    None if self.aggregator is None else self.aggregator.new()
                )
            if self.aggregator is None:
                ref = WindowRef(start_offset=start, end_offset=start + self.count)
                out.append(
                    Emission(ref, group.value, dict(event.payload), "event", event.seq, ctx.wall_ms)
                )
            else:
                self.aggregator.add(state, event.payload)
            if offset == start + self.count - 1:
                del key.windows[start]
                self._emit(group, start, offset + 1, state, "count", ctx, out, partial=False)

    def _emit(
        self,
        group: Group,
        start: int,
        end: int,
        state: Any,
        reason: str,
        ctx: Context,
        out: list[Output],
        *,
        partial: bool,
    ) -> None:
        ref = WindowRef(start_offset=start, end_offset=end)
        if ctx.trace is not None:
            ctx.trace.closed(group.value, ref, reason)
        if self.aggregator is None:
            return
        for row in self.aggregator.rows(state, None, None):
            out.append(Emission(ref, group.value, row, reason, ctx.after_seq, ctx.wall_ms, partial))

    def on_end(self, ctx: Context, out: list[Output]) -> None:
        if self.rules.end_of_input == "discard":
            return
        for group in ctx.groups.values():
            key = group.state
            if key is None:
                continue
            for start in sorted(key.windows):
                # Tenzir 6.20 reports a partial window by its nominal range (docs/semantics.md C1)
                self._emit(
                    group, start, start + self.count, key.windows[start], "end_of_input", ctx,
                    out, partial=True,
                )
            key.windows.clear()
