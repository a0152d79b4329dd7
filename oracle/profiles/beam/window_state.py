"""What a key keeps per window: its elements, its trigger's state and timers, its pane
counters, its output-time hold, and whether its trigger finished.

A merged session keeps the *parts* it was merged from (B2): Beam's state lives per original
window and a read combines the parts, so counts add up, flags and ``AfterEach`` positions
take the largest value, and every part's timers stay pending. A timer is set on the first
part (the merge result's own, else the earliest merged window's) and cleared on all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

WATERMARK: Final = "watermark"
"""The event-time timer domain (fires when the watermark reaches the timer's time)."""
PROCESSING: Final = "processing"
"""The processing-time timer domain (fires when the wall clock reaches it)."""


@dataclass(slots=True)
class Element:
    """One element in a window: its seq, payload and event time."""

    seq: int
    payload: Any
    t_ms: int


@dataclass(slots=True)
class Timer:
    """A pending timer of one part: ``name`` (the trigger part's path), ``domain``, time."""

    name: str
    domain: str
    time_ms: int


@dataclass(slots=True)
class WindowState:
    """The state of one window of one key (see the module docstring).

    ``tags`` holds the trigger's state by path: counts (keys ending in ``#count``) add up
    when parts merge, every other tag is a flag or position that keeps the largest value.
    ``parts`` holds each part's timers, the first part first.
    """

    start_ms: int
    end_ms: int
    elements: list[Element] = field(default_factory=list)
    finished: bool = False
    index: int = 0
    nonspeculative: int = 0
    hold_ms: int | None = None
    tags: dict[str, int] = field(default_factory=dict)
    parts: list[list[Timer]] = field(default_factory=lambda: [[]])

    @property
    def bounds(self) -> tuple[int, int]:
        return (self.start_ms, self.end_ms)

    def get(self, tag: str) -> int:
        return self.tags.get(tag, 0)

    def add(self, tag: str, value: int = 1) -> None:
        """Add to a count, or set a flag or position (``value``: the largest value wins)."""
        if tag.endswith("#count"):
            self.tags[tag] = self.get(tag) + value
        else:
            self.tags[tag] = max(self.get(tag), value)

    def clear(self, tag: str) -> None:
        self.tags.pop(tag, None)

    def set_timer(self, name: str, domain: str, time_ms: int) -> None:
        """Set (or move) the timer ``name`` of the first part."""
        first = self.parts[0]
        for timer in first:
            if timer.name == name and timer.domain == domain:
                timer.time_ms = time_ms
                return
        first.append(Timer(name, domain, time_ms))

    def clear_timer(self, name: str, domain: str) -> None:
        """Remove the timer ``name`` from every part."""
        for part in self.parts:
            part[:] = [t for t in part if not (t.name == name and t.domain == domain)]

    def absorb(self, other: WindowState, combine: Callable[[int, int], int]) -> None:
        """Merge ``other`` (a session merged into this one) into this state: its elements,
        tags, finished flag and timer parts, its hold by ``combine`` (B2). Pane counters are
        not taken: Beam clears a merged-away window's pane indexes."""
        self.elements += other.elements
        self.finished = self.finished or other.finished
        for tag, value in other.tags.items():
            self.add(tag, value)
        self.parts += other.parts
        if other.hold_ms is not None:
            self.hold_ms = (other.hold_ms if self.hold_ms is None
                            else combine(self.hold_ms, other.hold_ms))
