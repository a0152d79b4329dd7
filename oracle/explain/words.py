"""How a profile names its clock and its batches, and how its windows' ends read.

One word per concept in each profile's vocabulary: profiles whose engines speak of a
watermark (:data:`WATERMARK_PROFILES`) never read "clock" for it. The operators' drop
messages state the event-time clock (the largest time seen); :meth:`Words.said` restates
them there in watermark terms (the clock less the watermark's lag).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.rules import Rules, watermark_lag_ms
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
    no aggregate; ``lost_why``: why an open window is never emitted at end of input;
    ``lag_ms``: how far the watermark trails the clock (watermark profiles)."""

    profile: str
    clock: str
    watermark: bool
    micro_batches: bool
    unit_ms: int
    closed_end: bool
    passthrough: bool
    lost_why: str
    lag_ms: int = 0

    def __post_init__(self) -> None:
        if self.unit_ms <= 0:
            raise InvalidSpec("unit_ms", self.unit_ms, "must be positive", "give the time unit in ms")

    def said(self, message: str) -> str:
        """An operator's ``message`` in this profile's words: under a watermark profile
        "the clock reached/is at T" reads "the watermark reached/is at T - lag" (times in
        ms, as messages give them), and "the watermark (clock - tolerance)" "the watermark"."""
        if not self.watermark:
            return message

        def restated(found: re.Match[str]) -> str:
            return f"the watermark {found.group(1)} {int(found.group(2)) - self.lag_ms}"

        message = re.sub(r"the clock (reached|is at) (-?\d+)", restated, message)
        return message.replace("the watermark (clock - tolerance)", "the watermark")


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
        lag_ms=watermark_lag_ms(rules, getattr(window, "tolerance_ms", 0) or 0)
        if watermark else 0,
    )
