"""The ``transformWithStateInPandas`` processor of the general operator, kept light to load.

Spark unpickles the processor twice per query start: once in a fresh Python process on
the driver (to learn the state schema, first micro-batch only) and once per task. This
module imports only PySpark's ``StatefulProcessor``; the step (numpy, pandas, the oracle)
travels as bytes and is unpickled on first use, so the driver-side start-up does not pay
for imports it never uses (``benchmarks/spark_operators.py`` measures the query start).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from typing import Any

from pyspark import cloudpickle
from pyspark.sql.streaming.stateful_processor import StatefulProcessor


def _state_schema() -> Any:
    from pyspark.sql.types import BinaryType, StructField, StructType

    return StructType([StructField("driver", BinaryType(), True)])


class WindowProcessor(StatefulProcessor):  # type: ignore[misc]
    """One bucket's state (the reference step's pickled driver)
    in a ValueState; ``steps`` (see :data:`windtunnel.spark_impl.general.processor.Steps`) run it.

    ``system_tick_ms`` set: processing-time mode; the wall clock is the system clock and a
    timer every ``system_tick_ms`` lets idle windows of buckets without input close.
    """

    def __init__(self, steps: Any, system_tick_ms: int | None = None) -> None:
        self._steps_bytes = bytes(cloudpickle.dumps(steps, protocol=pickle.HIGHEST_PROTOCOL))
        self._steps: Any = None
        self.system_tick_ms = system_tick_ms

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_steps": None}

    @property
    def steps(self) -> Any:
        """The step, unpickled on first use (imports numpy, pandas and the oracle)."""
        if self._steps is None:
            self._steps = pickle.loads(self._steps_bytes)
        return self._steps

    def init(self, handle: Any) -> None:
        self.handle = handle
        self.state = handle.getValueState("driver", _state_schema())

    def _load(self) -> Any:
        if self.state.exists():
            return self.steps.load(self.state.get()[0])
        return self.steps.new_state()

    def _save(self, state: Any) -> None:
        self.state.update((self.steps.dump(state),))

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Any]:
        from windtunnel.spark_impl.general.processor import unpacked

        state = self._load()
        outs = [self.steps.run(state, unpacked(rows))]
        if self.system_tick_ms is not None:
            outs.append(self._tick(state, timerValues))
        self._save(state)
        for out in outs:
            if out is not None and len(out):
                yield out

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Iterator[Any]:
        state = self._load()
        out = self._tick(state, timerValues)
        self._save(state)
        if out is not None and len(out):
            yield out

    def _tick(self, state: Any, timer_values: Any) -> Any:
        """System clock: move the wall clock to now and keep one timer a tick ahead."""
        assert self.system_tick_ms is not None
        now_ms = int(timer_values.getCurrentProcessingTimeInMs())
        out = self.steps.tick(state, now_ms)
        for timer in list(self.handle.listTimers()):
            self.handle.deleteTimer(timer)
        if not self.steps.ended(state):
            self.handle.registerTimer(now_ms + self.system_tick_ms)
        return out

    def close(self) -> None:
        pass
