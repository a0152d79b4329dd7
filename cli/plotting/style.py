"""Colours and words shared by the matplotlib and the HTML pictures."""

from __future__ import annotations

from typing import Any

GROUP_COLOURS = (
    "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
    "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#aec7e8",
)
DROP_COLOUR = "#d62728"
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


def reason_colour(reason: str | None) -> str:
    return REASON_COLOURS.get(reason or "", OTHER_REASON)
