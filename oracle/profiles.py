"""Profiles: named sets of semantic rules, each rule with the source it comes from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from windtunnel.oracle.errors import InvalidSpec
from windtunnel.oracle.rules import Rules

TENZIR_PAGE = "seeds/tenzir-window.md"
ENGINES = "notes/engines.md"


@dataclass(frozen=True, slots=True)
class Profile:
    """A named :class:`Rules` value; ``sources`` maps a rule name to where it comes from."""

    name: str
    summary: str
    rules: Rules
    sources: Mapping[str, str] = field(default_factory=dict)


TENZIR = Profile(
    name="tenzir",
    summary="Tenzir's window operator (the default): per-event clock per key, partial delivery.",
    rules=Rules(),
    sources={
        "close_at": f'{TENZIR_PAGE}: "A window closes once the clock reaches its end plus tolerance."',
        "late_test": f'{TENZIR_PAGE}: "it is only reported as dropped when *all* of its target windows '
        'have already closed."',
        "clock_scope": f'{TENZIR_PAGE}: "Each key advances its own event-time clock"',
        "clock_moves": f'{TENZIR_PAGE}: "Events are processed in stream order, independent of how '
        'they are grouped into batches"',
        "idle_closed_window": f'{TENZIR_PAGE}: "Late events—those for a window that has already '
        'closed—are dropped with a warning." (ambiguous; see docs/semantics.md)',
        "idle_timer_reset": f'{TENZIR_PAGE}: "without receiving a new event" (ambiguous)',
        "close_order": f'{TENZIR_PAGE}: "Windows are usually closed in window-time order"',
        "empty_windows": f'{TENZIR_PAGE}: "The operator does not emit empty windows."',
        "end_of_input": f'{TENZIR_PAGE}: "When the input ends, all open windows are closed."',
        "alignment": f'{TENZIR_PAGE}: "Window boundaries are aligned to the Unix epoch."',
        "every_greater_than_size": f'{TENZIR_PAGE}: "`every` must not be greater than `size`."',
        "session_gap": f"{ENGINES}: Tenzir: gap equality is inclusive",
        "session_close_at": f"{ENGINES}: Tenzir: a session is finalized when the clock is strictly past "
        "last + gap + tolerance",
        "closed_session": f"{ENGINES}: Tenzir: late events for a closed window are dropped",
        "trailing_ends": f"{ENGINES}: Tenzir: trailing windows cover the inclusive interval [t - size, t]",
    },
)

PROFILES: dict[str, Profile] = {TENZIR.name: TENZIR}


def register(profile: Profile) -> Profile:
    """Add ``profile`` to :data:`PROFILES` (used by the modules defining profiles)."""
    PROFILES[profile.name] = profile
    return profile


def profile_named(name: object) -> Profile:
    """The profile called ``name``; raises InvalidSpec listing the known profiles."""
    if isinstance(name, str) and name in PROFILES:
        return PROFILES[name]
    raise InvalidSpec("profile", name, "unknown profile", f"use one of {', '.join(PROFILES)}")
