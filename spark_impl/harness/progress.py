"""Progress lines while Spark runs a replay: one per micro-batch, from the queries' own
progress reports (``StreamingQuery.recentProgress``: ``batchId``, ``numInputRows``, the
sink's ``numOutputRows``), polled from a background thread so that any query the run
starts is covered (the general operator's memory sink and stock Spark's foreachBatch).

The lines name events per micro-batch from the replay's feed (Spark's input rows also
count the clock and end-of-input control rows) and the sink's output rows when Spark
reports them (foreachBatch sinks do not).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

POLL_S = 0.2
"""How often the thread looks at the active queries' progress."""


class ProgressWatch:
    """Reports each micro-batch of every streaming query of ``spark`` once, through ``say``.

    ``events`` holds the number of events of each micro-batch (its length is the total).
    Use as a context manager: the last micro-batches are reported when it exits.
    """

    def __init__(self, spark: Any, say: Callable[[str], None], events: Sequence[int]) -> None:
        self.spark = spark
        self.say = say
        self.events = tuple(events)
        self._queries: dict[str, Any] = {}
        self._reported: dict[str, int] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="windtunnel-progress", daemon=True)

    def __enter__(self) -> ProgressWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.poll()  # the micro-batches that ended after the last look

    def _loop(self) -> None:
        while not self._stop.wait(POLL_S):
            try:
                self.poll()
            except Exception:  # a session shutting down: the final poll reports the rest
                continue

    def poll(self) -> None:
        """Report the micro-batches not reported yet, in batch order."""
        with self._lock:
            for query in list(self.spark.streams.active):
                self._queries.setdefault(str(query.id), query)
            for ident, query in self._queries.items():
                for report in query.recentProgress or ():
                    self._report(ident, _as_dict(report))

    def _report(self, ident: str, progress: dict[str, Any]) -> None:
        batch = progress.get("batchId")
        if not isinstance(batch, int) or batch <= self._reported.get(ident, -1):
            return
        self._reported[ident] = batch
        total = len(self.events)
        if batch < total:
            n = self.events[batch]
            text = f"micro-batch {batch + 1}/{total}: {n} event{'' if n == 1 else 's'} in"
        else:
            rows = progress.get("numInputRows", 0)
            text = f"micro-batch {batch + 1}: {rows} input row{'' if rows == 1 else 's'}"
        sink = progress.get("sink") or {}
        written = sink.get("numOutputRows", -1) if isinstance(sink, dict) else -1
        if isinstance(written, int) and written >= 0:
            text += f", {written} output{'' if written == 1 else 's'}"
        self.say(text)


def _as_dict(report: Any) -> dict[str, Any]:
    """A progress report as a dict (classic sessions give dicts, Connect gives objects)."""
    if isinstance(report, dict):
        return report
    data = getattr(report, "jsonValue", None)
    if callable(data):
        value = data()
        return value if isinstance(value, dict) else {}
    return {
        "batchId": getattr(report, "batchId", None),
        "numInputRows": getattr(report, "numInputRows", 0),
        "sink": {"numOutputRows": getattr(getattr(report, "sink", None), "numOutputRows", -1)},
    }
