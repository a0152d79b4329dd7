"""Reading dotted field paths out of event payloads, and hashable group keys."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

Getter = Callable[[Mapping[str, Any]], Any]


def getter(path: str) -> Getter:
    """A function reading ``path`` (``a.b.c``) from a payload; a missing field reads as None."""
    parts = path.split(".")
    if len(parts) == 1:
        name = parts[0]

        def get_one(payload: Mapping[str, Any]) -> Any:
            return payload.get(name)

        return get_one

    def get_path(payload: Mapping[str, Any]) -> Any:
        value: Any = payload
        for part in parts:
            if not isinstance(value, Mapping):
                return None
            value = value.get(part)
        return value

    return get_path


def hashable(value: Any) -> Any:
    """``value`` itself when hashable, else a canonical JSON string standing for it."""
    try:
        hash(value)
    except TypeError:
        return "\x00json:" + json.dumps(value, sort_keys=True, default=str)
    return value
