"""The account's values: closings, clock changes, event fates, item accounts, lost windows.

:mod:`windtunnel.oracle.explain.account` builds them; :mod:`~windtunnel.oracle.explain.text`
and :mod:`~windtunnel.oracle.explain.data` write them; :class:`Account` is the whole account
without its writers (:class:`~windtunnel.oracle.explain.explanation.Explanation` adds them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from windtunnel.oracle.explain.words import Words
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.results import Drop, Emission, WindowRef
from windtunnel.oracle.windows.trace import ClockView

WindowKey = tuple[str, tuple[int | None, ...]]


def window_key(group: Any, window: WindowRef) -> WindowKey:
    """Identity of a window of a group: count windows by start offset (a window flushed
    early reports a shorter range), time windows by their bounds."""
    bounds = (
        (window.start_offset,) if window.start_offset is not None
        else (window.start_ms, window.end_ms)
    )
    return json.dumps(group, sort_keys=True, default=str), bounds


@dataclass(frozen=True, slots=True)
class Closing:
    """A window the operator closed: during input item ``item`` at wall time ``wall_ms``."""

    group: Any
    window: WindowRef
    reason: str
    item: int
    wall_ms: int


@dataclass(frozen=True, slots=True)
class ClockChange:
    """One clock across one item: the stream's (``group`` None, ``per_key`` False) or a key's."""

    group: Any
    per_key: bool
    before_ms: int | None
    after_ms: int | None


@dataclass(frozen=True, slots=True)
class EventFate:
    """What became of event ``seq``: the windows it went into, or why it went into none.

    ``misses`` explains each window it missed, in words (empty when delivered);
    ``emissions`` are the rows its windows produced (not its own pass-through rows).
    """

    seq: int
    payload: Mapping[str, Any]
    group: Any
    arrived_ms: int | None
    item: int
    delivered_to: tuple[WindowRef, ...]
    drop: Drop | None
    misses: tuple[str, ...]
    emissions: tuple[Emission, ...]


@dataclass(frozen=True, slots=True)
class ItemAccount:
    """One input item: its kind (``event``, ``batch``, ``advance``, ``watermark``, ``end``),
    its micro-batch (profiles that run in micro-batches), the wall clock and event-time
    clocks before and after it, its events' fates, and the windows closed and rows emitted
    while it was consumed."""

    index: int
    kind: str
    batch: int | None
    wall_before_ms: int
    wall_after_ms: int
    clocks: tuple[ClockChange, ...]
    events: tuple[EventFate, ...]
    closings: tuple[Closing, ...]
    emissions: tuple[Emission, ...]
    watermark_ms: int | None = None


@dataclass(frozen=True, slots=True)
class LostWindow:
    """A window that received events but was never emitted (still open at end of input)."""

    group: Any
    window: WindowRef
    seqs: tuple[int, ...]
    why: str


@dataclass(frozen=True, slots=True)
class StepView:
    """What miss reasons need of the steps: the clocks after (and before) each item, and
    when each item happened in words (``in micro-batch 2``, ``at #3``, ``at end of input``)."""

    after: tuple[ClockView | None, ...]
    labels: tuple[str, ...]
    before: tuple[ClockView | None, ...] = ()


@dataclass(frozen=True, slots=True)
class Account:
    """The whole account of a scenario under one profile: every input item in order, and
    the windows that were never emitted."""

    scenario: str
    profile: str
    words: Words
    items: tuple[ItemAccount, ...]
    lost: tuple[LostWindow, ...]

    def fates(self) -> list[EventFate]:
        """Every event's fate, in seq order."""
        return [fate for item in self.items for fate in item.events]

    def event(self, seq: int) -> EventFate:
        """The fate of event ``seq``; raises InvalidInput when there is no such event."""
        for fate in self.fates():
            if fate.seq == seq:
                return fate
        count = len(self.fates())
        raise InvalidInput(
            "--seq", seq, f"no such event (the stream has {count}, numbered from 0)",
            f"give a seq from 0 to {count - 1}" if count else "add events to the input",
        )
