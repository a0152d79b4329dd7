"""Following a running streaming query until it ends."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def follow(query: Any, timeout_s: float | None, collect: Callable[[], bool]) -> bool:
    """Poll ``query`` every half second until it ends, ``collect()`` (after each poll)
    returns True, ``timeout_s`` passes, or the query fails; then ``collect()`` once more.
    Returns True when it timed out. The caller stops the query and reads its exception."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    timed_out = False
    while query.isActive:
        if deadline is not None and time.monotonic() >= deadline:
            timed_out = True
            break
        try:
            query.awaitTermination(0.5)
        except Exception:  # the query failed: the caller reads query.exception()
            if query.exception() is None:
                raise
            break
        if collect():
            break
    collect()
    return timed_out
