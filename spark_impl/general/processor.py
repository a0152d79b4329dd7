"""The general operator's per-bucket step (the processor around it: ``stateful.py``).

Each bucket (a hash bucket of the group key) keeps one oracle :class:`Driver` for all
of its keys. With per-key clocks (the default profile) the keys of a bucket do not
influence each other, so the oracle run on the bucket's sub-stream gives exactly those
keys' outputs; what is stream-global (the wall clock, ``after_seq`` of wall-driven
emissions) arrives as control rows copied to every bucket. Every semantic rule is the
oracle's own code: this module only orders rows, feeds them, and stores the driver.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterable, Iterator
from typing import Any

import pandas as pd
from pyspark import cloudpickle

from windtunnel.oracle.engine import operator_for
from windtunnel.oracle.model.fields import hashable
from windtunnel.oracle.model.results import Emission, Output
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.model.stream import Advance, End, Event
from windtunnel.oracle.windows.driver import Driver, Group
from windtunnel.spark_impl.schema import (
    CLOCK,
    END,
    EVENT,
    INT_OUTPUT_COLUMNS,
    OUTPUT_COLUMNS,
    control_step,
    event_step,
    output_record,
)

_KIND_RANK = {EVENT: 0, CLOCK: 0, END: 1}


class BucketDriver(Driver):
    """The oracle's driver for one bucket's sub-stream.

    Only change: a group's index (used to order ties) is the seq of its first event
    instead of the first-seen count inside the bucket, so it orders like the oracle's
    stream-wide first-seen index across buckets.
    """

    _seq = 0
    ended = False

    def _event(self, event: Event, out: list[Output]) -> None:
        self._seq = event.seq
        super()._event(event, out)

    def _group(self, payload: Any) -> Group:
        known = len(self.ctx.groups)
        group = super()._group(payload)
        if len(self.ctx.groups) > known:
            group.index = self._seq
        return group

    def first_seq_of(self, group_value: Any) -> int | None:
        """First seq of the group whose output value is ``group_value``."""
        if not self.query.group_by:
            key: tuple[Any, ...] = ()
        elif len(self.query.group_by) == 1:
            key = (hashable(group_value),)
        else:
            key = tuple(hashable(v) for v in group_value)
        group = self.ctx.groups.get(key)
        return None if group is None else group.index


class BucketStep:
    """Feeds one bucket's rows of one micro-batch (any order) to its driver.

    ``rows`` are pandas frames with the input columns; they are sorted by stream
    position, so the operator never relies on row order inside a micro-batch.
    """

    def __init__(
        self,
        query: Query,
        rules: Rules,
        *,
        time_unit_ms: int = 1,
        start_wall_ms: int = 0,
        profile: str = "tenzir",
    ) -> None:
        self.query = query
        self.rules = rules
        self.time_unit_ms = time_unit_ms
        self.start_wall_ms = start_wall_ms
        self.profile = profile

    def new_driver(self) -> BucketDriver:
        profile = self.profile
        return BucketDriver(
            self.query,
            lambda q, ctx: operator_for(q, ctx, profile),
            self.rules,
            time_unit_ms=self.time_unit_ms,
            start_wall_ms=self.start_wall_ms,
        )

    def run(self, driver: BucketDriver, frames: Iterable[pd.DataFrame]) -> list[dict[str, Any]]:
        """Feed the rows in stream order; the output records (see schema.OUTPUT_COLUMNS)."""
        frame = pd.concat(list(frames), ignore_index=True)
        if frame.empty:
            return []
        kinds = frame["kind"].to_numpy()
        seqs = frame["seq"].to_numpy()
        after = frame["after_seq"].to_numpy()
        arrivals = frame["arrival_ms"].to_numpy()
        payloads = frame["payload"].to_numpy()
        steps = [
            event_step(int(s)) if k == EVENT else control_step(None if pd.isna(a) else int(a))
            for k, s, a in zip(kinds, seqs, after, strict=True)
        ]
        order = sorted(
            range(len(steps)),
            key=lambda i: (steps[i], _KIND_RANK[kinds[i]], _int(arrivals[i])),
        )
        records: list[dict[str, Any]] = []
        out: list[Output] = []
        ctx = driver.ctx
        for i in order:
            kind = kinds[i]
            if driver.ended:
                continue  # nothing follows the end of input (a duplicate end row)
            arrival = _int(arrivals[i])
            if kind == EVENT:
                payload = json.loads(payloads[i]) if isinstance(payloads[i], str) else {}
                driver.feed(Event(int(seqs[i]), payload, arrival), out)
            else:
                ctx.after_seq = None if pd.isna(after[i]) else int(after[i])
                if arrival is not None:
                    driver.feed(Advance(arrival), out)
                if kind == END:
                    driver.feed(End(), out)
                    driver.ended = True
            if out:
                step = steps[i]
                for index, output in enumerate(out):
                    first = (
                        driver.first_seq_of(output.group) if isinstance(output, Emission) else None
                    )
                    records.append(output_record(output, step, first, index))
                out.clear()
        return records


def _int(value: Any) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def dump_driver(driver: BucketDriver) -> bytes:
    """The driver's whole state as bytes (cloudpickle: getters are closures)."""
    return bytes(cloudpickle.dumps(driver, protocol=pickle.HIGHEST_PROTOCOL))


def load_driver(data: bytes) -> BucketDriver:
    driver = pickle.loads(data)
    assert isinstance(driver, BucketDriver)
    return driver


def records_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Output records as a pandas frame with nullable integer columns."""
    frame = pd.DataFrame.from_records(records, columns=list(OUTPUT_COLUMNS))
    for name in INT_OUTPUT_COLUMNS:
        frame[name] = frame[name].astype("Int64")
    frame["partial"] = frame["partial"].astype("boolean")
    return frame


def end_records(driver: BucketDriver) -> list[dict[str, Any]]:
    """End of input after the last row fed (nothing if the input already ended)."""
    if driver.ended:
        return []
    out: list[Output] = []
    driver.feed(End(), out)
    driver.ended = True
    last = driver.ctx.after_seq
    return [
        output_record(
            o, control_step(last), driver.first_seq_of(o.group) if isinstance(o, Emission) else None, i
        )
        for i, o in enumerate(out)
    ]


def tick_records(driver: BucketDriver, now_ms: int) -> list[dict[str, Any]]:
    """The system clock moved to ``now_ms``: the wall clock follows (idle windows may close)."""
    out: list[Output] = []
    if not driver.ended:
        driver.feed(Advance(now_ms), out)
    step = control_step(driver.ctx.after_seq)
    return [
        output_record(o, step, driver.first_seq_of(o.group) if isinstance(o, Emission) else None, i)
        for i, o in enumerate(out)
    ]


class ReferenceSteps:
    """The reference step behind the interface the processor uses (see :class:`Steps`)."""

    def __init__(self, step: BucketStep) -> None:
        self.step = step

    def new_state(self) -> BucketDriver:
        return self.step.new_driver()

    def run(self, state: BucketDriver, frames: Iterable[pd.DataFrame]) -> pd.DataFrame | None:
        records = self.step.run(state, frames)
        return records_frame(records) if records else None

    def finish(self, state: BucketDriver) -> pd.DataFrame | None:
        records = end_records(state)
        return records_frame(records) if records else None

    def tick(self, state: BucketDriver, now_ms: int) -> pd.DataFrame | None:
        records = tick_records(state, now_ms)
        return records_frame(records) if records else None

    def ended(self, state: BucketDriver) -> bool:
        return state.ended

    dump = staticmethod(dump_driver)
    load = staticmethod(load_driver)


Steps = Any
"""A step with ``new_state``, ``run(state, frames)``, ``finish``, ``tick``, ``ended``,
``dump`` and ``load``: :class:`ReferenceSteps`."""


def make_steps(
    query: Query,
    rules: Rules,
    *,
    time_unit_ms: int = 1,
    start_wall_ms: int = 0,
) -> Steps:
    """The bucket step: the oracle's own driver, fed row by row."""
    return ReferenceSteps(
        BucketStep(query, rules, time_unit_ms=time_unit_ms, start_wall_ms=start_wall_ms)
    )


def run_batch(steps: Steps, frames: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """A whole bounded input of one bucket (batch DataFrames): feed, then end."""
    state = steps.new_state()
    for out in (steps.run(state, frames), steps.finish(state)):
        if out is not None and len(out):
            yield out


def unpacked(chunks: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """Input rows from chunk rows (see :func:`windtunnel.spark_impl.general.operator.chunked`):
    ``rows`` holds an Arrow IPC stream of one bucket's input rows; columns left out as
    constant get their value back."""
    import pyarrow as pa

    tables = [
        pa.ipc.open_stream(pa.py_buffer(blob)).read_all()
        for chunk in chunks
        for blob in chunk["rows"].tolist()
    ]
    if not tables:
        return
    frame = pa.concat_tables(tables).to_pandas()  # one conversion per bucket and micro-batch
    for name, value in _CONSTANT_DEFAULTS.items():
        if name not in frame.columns:
            frame[name] = value
    yield frame


_CONSTANT_DEFAULTS = {"kind": EVENT, "after_seq": float("nan"), "payload": None}
"""Input columns left out of chunks when constant (no kind column)."""
