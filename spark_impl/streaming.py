"""Following a running streaming query until it ends."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def follow(query: Any, timeout_s: float | None, collect: Callable[[], bool]) -> bool:
    """Poll ``query`` every half second until it ends, ``collect()`` (after each poll)
    returns True, or ``timeout_s`` passes; then ``collect()`` once more. Returns True when
    it timed out. The caller stops the query."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    timed_out = False
    while query.isActive:
        if deadline is not None and time.monotonic() >= deadline:
            timed_out = True
            break
        query.awaitTermination(0.5)
        if collect():
            break
    collect()
    return timed_out
