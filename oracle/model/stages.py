"""Stages before the window: ``where`` (a filter) and ``deduplicate`` (drop repeated keys).

A query's stages run in order on each event before the window sees it; an event a stage
removes is reported as a drop (reason ``filtered`` or ``duplicate``, or ``late`` where the
deduplication stage drops rows behind the watermark), never lost silently. What each
engine does with them is a set of rules (``filtered_clock``, ``duplicate_clock``,
``dedup_expiry``, ``dedup_late``, ``where_null_equals``; docs/semantics.md, "Stages before
the window"); the stages themselves only say what to filter and what a duplicate is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from windtunnel.oracle.model.conditions import Condition
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.timeparse import format_duration


@dataclass(frozen=True, slots=True)
class Where:
    """Keep an event only when ``condition`` is true (unknown and false remove it)."""

    condition: Condition
    kind: ClassVar[str] = "where"

    def __post_init__(self) -> None:
        if not isinstance(self.condition, Condition):
            raise InvalidSpec(
                "where", self.condition, "must be a parsed condition",
                "write where: amount > 0 in the scenario, or parse_condition(text, 'where')",
            )

    def __str__(self) -> str:
        return f"where {self.condition.text}"


@dataclass(frozen=True, slots=True)
class Deduplicate:
    """Remove an event whose ``key`` values (dotted field paths; a missing field reads as
    null, and nulls are equal) equal those of an earlier event let through, for
    ``within_ms`` after it (None: for the rest of the stream). What "after" is measured on
    is the rule ``dedup_expiry`` (wall clock or watermark). Raises InvalidSpec for an empty
    or repeated key or a negative duration."""

    key: tuple[str, ...]
    within_ms: int | None = None
    kind: ClassVar[str] = "deduplicate"

    def __post_init__(self) -> None:
        if (
            not isinstance(self.key, tuple) or not self.key
            or not all(isinstance(k, str) and k and all(k.split(".")) for k in self.key)
        ):
            raise InvalidSpec(
                "deduplicate.key", self.key, "must be a list of field names",
                "write deduplicate: {key: [click_id], within: 10min}",
            )
        if len(set(self.key)) != len(self.key):
            raise InvalidSpec(
                "deduplicate.key", list(self.key), "names a field twice", "name each field once"
            )
        within = self.within_ms
        if within is not None and (isinstance(within, bool) or not isinstance(within, int)
                                   or within < 0):
            raise InvalidSpec(
                "deduplicate.within", within, "must be 0 or a positive duration",
                "write within: 10min, or leave it out to keep keys for the whole stream",
            )

    def __str__(self) -> str:
        within = "" if self.within_ms is None else f" within {format_duration(self.within_ms)}"
        return f"deduplicate on {', '.join(self.key)}{within}"


Stage = Where | Deduplicate
STAGE_KINDS = ("where", "deduplicate")
"""The stage kinds, as the scenario's top-level keys name them."""


def refuse_stages(stages: Sequence[Stage], engine: str) -> None:
    """Raise InvalidSpec naming the first stage when ``engine`` (which runs no stages before
    the window) is given any."""
    if stages:
        stage = stages[0]
        raise InvalidSpec(
            stage.kind, str(stage), f"{engine} does not run stages before the window",
            "use --engine oracle, or profile: spark (the stock mapping) or a job of your own "
            "with windtunnel check",
        )
