"""Colours and words shared by the matplotlib and the HTML pictures."""

from __future__ import annotations

from typing import Any

GROUP_COLOURS = (
    "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
    "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#aec7e8",
)
DROP_COLOUR = "#d62728"
STAGE_DROP_COLOUR = "#8c564b"
"""Events a stage before the window removed (``where``: filtered, ``deduplicate``: duplicate)."""
STAGE_REASONS = ("filtered", "duplicate")
IDLE_COLOUR = "#e8e8e8"
REASON_COLOURS = {
    "close": "#000000",
    "idle_timeout": "#9400d3",
    "end_of_input": "#808080",
    "update": "#ff8c00",
    "count": "#006400",
    "timer": "#b8860b",
}
OTHER_REASON = "#cc6600"

LEGEND = (
    ("delivered event (colour: group)", "event"),
    ("dropped event (x, with its reason)", "drop"),
    ("event removed before the window (brown x: filtered by where, duplicate)", "stage"),
    ("window bar [start, end), in the row where it was emitted", "bar"),
    ("emission (diamond at the window end; colour: reason)", "emit"),
    ("window never emitted (dashed)", "lost"),
    ("clock or watermark after each item (dashed step line)", "clock"),
    ("idle gap: the wall clock moved with no event", "idle"),
)


def group_colour(groups: tuple[Any, ...], group: Any) -> str:
    key = tuple(group) if isinstance(group, list) else group
    keys = [tuple(g) if isinstance(g, list) else g for g in groups]
    index = keys.index(key) if key in keys else len(keys)
    return GROUP_COLOURS[index % len(GROUP_COLOURS)]


def drop_colour(reason: str | None) -> str:
    """Brown for an event a stage before the window removed, red for any other drop."""
    return STAGE_DROP_COLOUR if reason in STAGE_REASONS else DROP_COLOUR


def reason_colour(reason: str | None) -> str:
    return REASON_COLOURS.get(reason or "", OTHER_REASON)
