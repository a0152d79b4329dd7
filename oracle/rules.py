"""Semantic rules: the explicit, named choices an engine makes about windows.

A :class:`Rules` value fixes every choice; a profile (see ``profiles.py``) is a
named ``Rules`` with a source for each rule. Each rule's values, default reading
and alternative are documented in docs/semantics.md.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Final

from windtunnel.oracle.errors import InvalidSpec

RULE_VALUES: Final[dict[str, tuple[str, ...]]] = {
    # when a fixed window closes, with c the clock and e = end + tolerance
    "close_at": ("reaches", "passes", "max_timestamp"),
    # is a record late per target window (partial delivery) or against the watermark
    "late_test": ("window", "record"),
    # one event-time clock per group_by key, or one for the whole stream
    "clock_scope": ("key", "stream"),
    # the clock moves with each event, or per batch from the previous batches only
    "clock_moves": ("event", "batch", "batch_inclusive"),
    # an event for a window idle_timeout already force-closed
    "idle_closed_window": ("late", "reopen"),
    # which events reset a window's idle timer
    "idle_timer_reset": ("delivered", "any_event"),
    # the order of windows closed by one step
    "close_order": ("window_time", "opened"),
    # windows with no event in them between non-empty ones
    "empty_windows": ("skip", "emit"),
    # what end of input does to open windows
    "end_of_input": ("flush", "discard"),
    # where fixed windows start
    "alignment": ("epoch",),
    # a hop larger than the size
    "every_greater_than_size": ("reject", "accept"),
    # two session events exactly `gap` apart
    "session_gap": ("inclusive", "exclusive"),
    # a session is final when the clock passes / reaches last + gap + tolerance
    "session_close_at": ("passes", "reaches"),
    # a late event that touches a session already emitted
    "closed_session": ("late", "new_session"),
    # interval ends of a trailing window [t - size, t]
    "trailing_ends": ("closed", "left_open"),
}


@dataclass(frozen=True, slots=True)
class Rules:
    """Every semantic choice, as strings from :data:`RULE_VALUES`; defaults are Tenzir's."""

    close_at: str = "reaches"
    late_test: str = "window"
    clock_scope: str = "key"
    clock_moves: str = "event"
    idle_closed_window: str = "late"
    idle_timer_reset: str = "delivered"
    close_order: str = "window_time"
    empty_windows: str = "skip"
    end_of_input: str = "flush"
    alignment: str = "epoch"
    every_greater_than_size: str = "reject"
    session_gap: str = "inclusive"
    session_close_at: str = "passes"
    closed_session: str = "late"
    trailing_ends: str = "closed"

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            allowed = RULE_VALUES[f.name]
            if value not in allowed:
                raise InvalidSpec(
                    f"rules.{f.name}",
                    value,
                    "not a value of this rule",
                    f"use one of {', '.join(allowed)}",
                )

    def with_overrides(self, overrides: dict[str, Any], where: str = "rules") -> Rules:
        """A copy with single rules replaced; raises InvalidSpec for an unknown rule or value."""
        for name, value in overrides.items():
            if name not in RULE_VALUES:
                raise InvalidSpec(
                    f"{where}.{name}", value, "unknown rule", f"use one of {', '.join(RULE_VALUES)}"
                )
            if value not in RULE_VALUES[name]:
                raise InvalidSpec(
                    f"{where}.{name}",
                    value,
                    "not a value of this rule",
                    f"use one of {', '.join(RULE_VALUES[name])}",
                )
        return replace(self, **overrides)

    def as_dict(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self)}
