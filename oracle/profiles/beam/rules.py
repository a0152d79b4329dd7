"""The ``beam`` profile's rule values, and the overrides its operator implements.

Of the shared rules only ``end_of_input`` may be overridden (``discard``: the input stops
without the final watermark, as Beam's trigger transcripts end); the beam rules
(``beam_watermark``, ``beam_expiry``, ``beam_processing_time``) take either value. Every
other shared rule states what Beam does and is an input error when changed.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Final

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.rules import RULE_OWNERS, Rules

BEAM_RULES: Final = Rules(
    clock_scope="stream",
    clock_moves="batch_inclusive",
    session_gap="exclusive",
    every_greater_than_size="accept",
)
"""The beam profile's rules."""

OVERRIDABLE: Final = ("end_of_input", *(r for r, owner in RULE_OWNERS.items() if owner == "beam"))


def check_beam_rules(rules: Rules) -> None:
    """Raise InvalidSpec when ``rules`` changes a shared rule the beam operator does not read."""
    for f in fields(Rules):
        value, fixed = getattr(rules, f.name), getattr(BEAM_RULES, f.name)
        if f.name not in OVERRIDABLE and value != fixed:
            raise InvalidSpec(f"rules.{f.name}", value, "not implemented for beam windows",
                              f"use {f.name}: {fixed}, or another profile")
