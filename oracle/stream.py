"""The documented import path ``windtunnel.oracle.stream`` (the README shows it).

Stream items live in :mod:`windtunnel.oracle.model.stream`; this module re-exports them.
"""

from windtunnel.oracle.model.stream import (
    Advance,
    Batch,
    End,
    Event,
    Item,
    StreamChecker,
    Watermark,
    checked,
    events_of,
    numbered,
)

__all__ = [
    "Advance",
    "Batch",
    "End",
    "Event",
    "Item",
    "StreamChecker",
    "Watermark",
    "checked",
    "events_of",
    "numbered",
]
