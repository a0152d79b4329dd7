"""How a profile names its clock and its batches, and how its windows' ends read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import SessionWindows, TrailingWindows

if TYPE_CHECKING:
    from windtunnel.oracle.scenario import Scenario

WATERMARK_PROFILES = frozenset({"spark", "flink", "ekuiper", "timeplus", "beam"})
"""Profiles whose engines call their event-time clock a watermark (the clock minus the
tolerance); tenzir and kdb speak of the clock, the largest event time seen (per key
unless ``clock_scope: stream``)."""


@dataclass(frozen=True, slots=True)
class Words:
    """``clock``: "clock" or "watermark"; ``watermark``: show the watermark value (else the
    clock); ``micro_batches``: input runs in numbered micro-batches (Spark); ``unit_ms``:
    the scenario's time unit; ``closed_end``: windows include their end; ``passthrough``:
    no aggregate; ``lost_why``: why an open window is never emitted at end of input."""

    profile: str
    clock: str
    watermark: bool
    micro_batches: bool
    unit_ms: int
    closed_end: bool
    passthrough: bool
    lost_why: str

    def __post_init__(self) -> None:
        if self.unit_ms <= 0:
            raise InvalidSpec("unit_ms", self.unit_ms, "must be positive", "give the time unit in ms")


def words_for(profile: str, scenario: Scenario, rules: Rules) -> Words:
    """The words for ``scenario`` under ``profile`` with ``rules``."""
    window = scenario.query.window
    closed_end = isinstance(window, TrailingWindows) or (
        isinstance(window, SessionWindows) and rules.session_ends == "events"
    )
    watermark = profile in WATERMARK_PROFILES
    if profile == "beam":
        why = ("under beam no pane of this window fired: its trigger was never satisfied, and "
               "its elements sit in the window (the guide: \"those 32 elements sit around "
               "forever\")")
    elif rules.end_of_input == "discard":
        why = f"under {profile} open windows are lost at end of input (rule end_of_input: discard)"
    else:
        why = f"under {profile} this window was still open at end of input and is not flushed"
    return Words(
        profile=profile,
        clock="watermark" if watermark else "clock",
        watermark=watermark,
        micro_batches=profile == "spark",
        unit_ms=scenario.time_unit_ms,
        closed_end=closed_end,
        passthrough=scenario.query.aggregate is None,
        lost_why=why,
    )
