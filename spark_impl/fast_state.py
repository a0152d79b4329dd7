"""The vectorised fixed-window step's state for one bucket between micro-batches.

Kept apart from :mod:`windtunnel.spark_impl.fast` (the step) and
:mod:`windtunnel.spark_impl.fast_frames` (reading rows, building output rows), which both use it.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np


class FastState:
    """One bucket's state between micro-batches.

    Keys by code: ``keys`` (lookup tuples as the oracle's driver keys its groups),
    ``groups`` (the contract's ``group`` as JSON text), ``first_seq`` (seq of the key's
    first event: the group index that orders ties), ``clock`` (largest event time seen, or
    ``NONE`` of fast_frames). Open windows: ``win_key`` (key code), ``win_start`` (ms; the window is
    ``[start, start + size)``), ``win_count`` (events delivered; count-only queries) or
    ``win_states`` (aggregator states). ``wall_ms`` and ``after_seq`` are the bucket's
    wall clock and last stream position; ``ended`` is set by the end of input.
    """

    __slots__ = (
        "after_seq",
        "clock",
        "ended",
        "first_seq",
        "groups",
        "keys",
        "wall_ms",
        "win_count",
        "win_key",
        "win_start",
        "win_states",
    )

    def __init__(self, start_wall_ms: int) -> None:
        self.keys: list[tuple[Any, ...]] = []
        self.groups: list[str] = []
        self.first_seq = np.zeros(0, np.int64)
        self.clock = np.zeros(0, np.int64)
        self.win_key = np.zeros(0, np.int64)
        self.win_start = np.zeros(0, np.int64)
        self.win_count = np.zeros(0, np.int64)
        self.win_states: list[Any] | None = None
        self.wall_ms = start_wall_ms
        self.after_seq: int | None = None
        self.ended = False

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, data: dict[str, Any]) -> None:
        for name, value in data.items():
            setattr(self, name, value)


def dump_state(state: FastState) -> bytes:
    return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)


def load_state(data: bytes) -> FastState:
    state = pickle.loads(data)
    assert isinstance(state, FastState)
    return state
