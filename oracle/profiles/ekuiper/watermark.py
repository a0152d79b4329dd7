"""eKuiper's event-time watermark stage (E10 in docs/semantics.md).

In event time eKuiper puts one stage in front of FILTER and the windows
(https://github.com/lf-edge/ekuiper/blob/master/internal/topo/node/watermark_op.go): every
record moves the watermark ``largest time - lateness``; a record behind the last watermark is
late and dropped; a kept record is held, and released in time order once the watermark reaches
it (``t <= watermark``). Windows then fire when the watermark reaches their end.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

from windtunnel.oracle.windows.driver import Group

Record = tuple[int, Group, Mapping[str, Any], int]
"""One kept record: (event time ms, group, payload, seq)."""


class WatermarkStage:
    """The watermark and the records it holds back.

    ``watermark_ms`` is the last watermark sent on (None before the first record): it only
    moves forward. A record with time ``t < watermark_ms`` is late (``t == watermark_ms`` is
    kept). Held records are kept sorted by (time, seq).
    """

    __slots__ = ("_held", "_keys", "lateness_ms", "max_ms", "watermark_ms")

    def __init__(self, lateness_ms: int) -> None:
        self.lateness_ms = lateness_ms
        self.max_ms: int | None = None
        self.watermark_ms: int | None = None
        self._held: list[Record] = []
        self._keys: list[tuple[int, int]] = []

    def late(self, t_ms: int) -> bool:
        """Track ``t_ms`` (it moves the largest time seen) and say whether it is late."""
        if self.max_ms is None or t_ms > self.max_ms:
            self.max_ms = t_ms
        return self.watermark_ms is not None and t_ms < self.watermark_ms

    def hold(self, record: Record) -> None:
        """Keep ``record`` until the watermark reaches its time."""
        key = (record[0], record[3])
        index = bisect.bisect(self._keys, key)
        self._keys.insert(index, key)
        self._held.insert(index, record)

    def target_ms(self) -> int | None:
        """The watermark the records seen so far give: largest time - lateness."""
        return None if self.max_ms is None else self.max_ms - self.lateness_ms

    def move(self, to_ms: int | None) -> list[Record] | None:
        """Move the watermark to ``to_ms``; the records it releases, in time order, or None
        when it does not move forward (then nothing fires)."""
        if to_ms is None or (self.watermark_ms is not None and to_ms <= self.watermark_ms):
            return None
        self.watermark_ms = to_ms
        count = bisect.bisect_right(self._keys, (to_ms, float("inf")))
        released = self._held[:count]
        del self._held[:count]
        del self._keys[:count]
        return released

    def release_all(self) -> list[Record]:
        """Every held record, in time order (end of input under ``end_of_input: flush``)."""
        released, self._held, self._keys = self._held, [], []
        return released

    @property
    def held(self) -> tuple[Record, ...]:
        """Records the watermark has not reached yet, in time order."""
        return tuple(self._held)
