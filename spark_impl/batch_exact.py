"""The exact operator's fast path: ``foreachBatch`` micro-batches, the vectorised step in the
process running ``foreachBatch``, state versioned by micro-batch id.

Each micro-batch's rows (the operator's input rows, :func:`operator.prepare` with one
bucket: typed columns when the time and key fields allow, else the JSON payload) come to
the process running ``foreachBatch`` (the driver, or a Spark Connect server's worker) as
one Arrow table (``DataFrame.toArrow``); the vectorised step
(:class:`~windtunnel.spark_impl.fast.FastStep`: per-key clocks as running maxima in seq
order, the late test per target window against the key's clock before the event, windows
close when the key's clock reaches ``end + offset``) runs over all keys at once, starting
from the state version of the previous micro-batch
(:class:`~windtunnel.spark_impl.batch_state.BatchStateStore`). The output rows (the
operator's schema, ``schema.OUTPUT_DDL``) go to the sink, then the new state version is
written. A replayed micro-batch (same id after a restart) reads the same state version and
overwrites its output file and its state version, so nothing is lost or duplicated.

One bucket holds every key, so the wall clock is the stream's (no ``clock`` rows needed)
and the output equals the oracle's row for row. It skips ``transformWithStateInPandas``,
its state store, its shuffle and its per-micro-batch Python round trips
(``benchmarks/spark_exact.py`` measures both, and the floor of each API tried). The price:
the window logic runs in one Python process (one core), which sees every micro-batch's
rows; keys spread over executors only on the general path.

Eligible (:func:`eligible`): what :func:`windtunnel.spark_impl.fast.eligible` covers (fixed
windows on an event field, no ``idle_timeout``, no ``aggregate_by``, default rules but
``close_at``/``end_of_input``) with the virtual (arrival) wall clock. Everything else runs
on the general operator (:func:`windtunnel.spark_impl.operator.apply_window`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from windtunnel.oracle.engine import DEFAULT_RULES
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Query
from windtunnel.spark_impl.answer_log import AnswerLog, writer_for
from windtunnel.spark_impl.batch_output import (
    DataFrameOutput,
    FileOutput,
    Output,
    Rows,
    output_for,
)
from windtunnel.spark_impl.batch_runs import (
    STATE_DIR,
    BatchRun,
    start,
    state_dir_of,
    wait,
)
from windtunnel.spark_impl.batch_state import BatchStateStore, Version
from windtunnel.spark_impl.fast import FastStep
from windtunnel.spark_impl.fast import eligible as fast_eligible
from windtunnel.spark_impl.fast_frames import (
    TYPED_TIME,
    TYPED_TIME_NULL,
    empty_frame,
    typed_key,
    typed_key_null,
)
from windtunnel.spark_impl.fast_tumbling import covers, tumbling_counts
from windtunnel.spark_impl.schema import EVENT


def eligible(query: Query, rules: Rules = DEFAULT_RULES, *, clock: str = "arrival") -> bool:
    """True when the fast path gives the operator's rows: the vectorised step covers the
    query and the wall clock is virtual (the system clock needs processing-time timers)."""
    return clock == "arrival" and fast_eligible(query, rules)


def checkpoint_allows(checkpoint: str) -> bool:
    """False when the general operator already keeps state in ``checkpoint`` (Spark's
    ``state`` folder without fast-path versions): a restart must stay on the general path."""
    root = Path(checkpoint)
    return (root / STATE_DIR).is_dir() or not (root / "state").is_dir()


# ---------------------------------------------------------------- the micro-batch function


@dataclass(frozen=True, slots=True)
class Columns:
    """Names of the input's stream columns (as :func:`operator.apply_window` takes them)."""

    seq: str = "seq"
    arrival_ms: str | None = "arrival_ms"
    kind: str | None = None
    after_seq: str | None = None
    payload: str | None = None


class ExactBatches:
    """The ``foreachBatch`` function: one micro-batch through the vectorised step.

    ``state_dir`` holds the state versions (a path the process running ``foreachBatch``
    can write: the driver, or the Spark Connect server); ``output`` writes the rows.
    """

    def __init__(
        self,
        query: Query,
        output: Output,
        state_dir: str,
        *,
        rules: Rules = DEFAULT_RULES,
        time_unit_ms: int = 1,
        start_wall_ms: int = 0,
        columns: Columns = Columns(),
        jvm: bool = True,
        background: bool = True,
    ) -> None:
        self.query = query
        self.jvm = jvm
        self.background = background
        self.step = FastStep(query, rules, time_unit_ms=time_unit_ms, start_wall_ms=start_wall_ms)
        self.output = output
        self.state_dir = state_dir
        self.columns = columns
        self._direct: dict[str, list[str] | None] = {}
        self._jvm_inputs: dict[str, Any] = {}
        self._writer = writer_for(state_dir)
        self._recovered = False

    def prepared(self, df: Any) -> tuple[Any, bool]:
        """The micro-batch's input rows (schema.INPUT_COLUMNS but bucket, plus typed
        columns) as a DataFrame, and whether the constant columns of an events-only typed
        input were left out (:meth:`complete` adds them back)."""
        from windtunnel.spark_impl.operator import prepare

        c = self.columns
        prepared = prepare(
            df, self.query, buckets=1, seq=c.seq, arrival_ms=c.arrival_ms, kind=c.kind,
            after_seq=c.after_seq, payload=c.payload, typed=self.step.count_only,
        ).drop("bucket")
        typed = any(name.startswith("fast_") for name in prepared.columns)
        if c.kind is not None or not typed:
            return prepared, False
        # events only, typed: the constant columns (every row an event, no after_seq, no
        # payload) are made in Python rather than carried from the JVM row by row
        return prepared.drop("kind", "after_seq", "payload"), True

    @staticmethod
    def complete(frame: pd.DataFrame, events_only: bool) -> pd.DataFrame:
        """The step's input frame: the constant columns :meth:`prepared` left out added."""
        import numpy as np

        if events_only:
            n = len(frame)
            frame["kind"] = np.full(n, EVENT, dtype=object)
            frame["after_seq"] = pd.arrays.IntegerArray(np.zeros(n, np.int64), np.ones(n, bool))
            frame["payload"] = np.full(n, None, dtype=object)
        return frame

    def rows(self, df: Any) -> pd.DataFrame:
        """The micro-batch's input rows collected here (as the step reads them)."""
        prepared, events_only = self.prepared(df)
        return self.complete(frame_of(prepared.toArrow()), events_only)

    def direct_columns(self, df: Any) -> list[str] | None:
        """The stream columns to collect as int64 for :func:`fast_tumbling.tumbling_counts`
        (seq, arrival or none, event time, key or none), or None when the query or the
        input needs the general step (a kind or payload column, a nested or non-integer
        time or key field, hopping windows, other aggregates). Decided once per schema."""
        schema = df.schema.json()
        if schema not in self._direct:
            self._direct[schema] = direct_columns(self.step, self.columns, dict(df.dtypes))
        return self._direct[schema]

    def collect_direct(self, df: Any, names: list[str]) -> Any:
        """The micro-batch's ``names`` columns as int64, collected here as one Arrow table."""
        from pyspark.sql import functions as F

        return df.select(*[F.col(name).cast("long").alias(f"c{i}") for i, name in enumerate(names)]).toArrow()

    def step_table(self, table: Any, batch_id: int, spark: Any) -> int:
        """Micro-batch ``batch_id`` from the Arrow table :meth:`collect_direct` gave:
        :func:`fast_tumbling.tumbling_counts` without nulls, else the general step on the
        same rows. Returns the output rows."""
        c = self.columns
        names = ["seq", *(["arrival_ms"] if c.arrival_ms else []), TYPED_TIME, *([typed_key(0)] if self.query.group_by else [])]
        table = table.rename_columns(names)
        if any(column.null_count for column in table.columns):
            return self.step_batch(self.complete(typed_frame(table), True), batch_id, spark)
        arrays = {name: table.column(name).to_numpy() for name in names}

        def run(state: Any) -> tuple[Rows | None, int]:
            out = tumbling_counts(
                self.step, state, arrays["seq"], arrays.get("arrival_ms"), arrays[TYPED_TIME],
                arrays.get(typed_key(0)),
            )
            return out, table.num_rows

        return self.step_batch(None, batch_id, spark, run)

    def jvm_inputs(self, df: Any) -> Any:
        """What the JVM step reads from ``df`` (:func:`jvm_step.inputs_of`), or None when it
        does not run this query or input. Decided once per schema."""
        from windtunnel.spark_impl import jvm_step

        schema = df.schema.json()
        if schema not in self._jvm_inputs:
            covered = self.jvm and jvm_step.applies(self.step)
            types = dict(df.dtypes)
            self._jvm_inputs[schema] = jvm_step.inputs_of(self.columns, self.query, types) if covered else None
        return self._jvm_inputs[schema]

    def step_jvm(self, df: Any, batch_id: int) -> bool:
        """Micro-batch ``batch_id`` through the JVM step (:mod:`jvm_step`) where Spark reads
        it; False (nothing written) when this query, input or session has no JVM step or the
        task declined the micro-batch (a null, a time out of range, a control row): a Python
        step then runs. With a file output (and ``background``) the task's answer is kept in
        the answer log and its output file written in the background (:mod:`answer_log`)."""
        from windtunnel.spark_impl import jvm_step

        jdf = getattr(df, "_jdf", None)
        inputs = self.jvm_inputs(df) if jdf is not None else None
        if inputs is None:
            return False
        step = jvm_step.load(df.sparkSession)
        if step is None:
            return False
        log = AnswerLog(self.state_dir)
        incoming = log.incoming(batch_id) if self.background and isinstance(self.output, FileOutput) else None

        def run(state: Any) -> tuple[Rows | Pending | None, int]:
            answer = jvm_step.answer_jvm(step, self.step, state, jdf, inputs, keep=incoming)
            if answer is None:
                return None, 0
            if incoming is None or not answer.rows:
                return jvm_step.render(self.step, answer, state.groups, state.first_seq), answer.rows_in
            log.keep(batch_id)  # before the state version: the write-ahead copy
            write = partial(self._write_answer, batch_id, answer, list(state.groups), state.first_seq)
            return Pending(answer.rows, write), answer.rows_in

        try:
            self.step_batch(None, batch_id, df.sparkSession, run)
        except jvm_step.Fallback:
            return False
        finally:
            if incoming is not None:
                incoming.unlink(missing_ok=True)
        return True

    def _write_answer(self, batch_id: int, answer: Any, groups: list[str], first_seq: Any) -> None:
        """Micro-batch ``batch_id``'s output file from its kept answer; the answer then goes."""
        from windtunnel.spark_impl import jvm_step

        out = jvm_step.render(self.step, answer, groups, first_seq)
        self.output(empty_frame() if out is None else out, str(batch_id), None)
        AnswerLog(self.state_dir).remove(batch_id)

    def flush(self) -> None:
        """Wait until every micro-batch's output file is written (:mod:`answer_log`), and
        write those a stopped process left as answers; raises the error of a background
        write. Runs before this object's first micro-batch and in :meth:`finish`."""
        from windtunnel.spark_impl import jvm_step

        self._writer.wait()
        log = AnswerLog(self.state_dir)
        pending = log.pending()
        if not pending:
            return
        latest = BatchStateStore(self.state_dir).latest()
        for batch_id in pending:
            if latest is None or batch_id > latest.batch_id:
                log.remove(batch_id)  # its state version was never saved: Spark replays it
                continue
            try:
                answer = jvm_step.Answer.parse(log.read(batch_id))
            except FileNotFoundError:  # written out meanwhile
                continue
            if answer is not None:
                self._write_answer(batch_id, answer, latest.state.groups, latest.state.first_seq)

    def step_batch(
        self,
        frame: pd.DataFrame | None,
        batch_id: int,
        spark: Any,
        run: Callable[[Any], tuple[Rows | Pending | None, int]] | None = None,
    ) -> int:
        """Micro-batch ``batch_id``'s rows (``frame``) through the step, or ``run(state)``
        (output rows and the input rows read) when given: state version ``batch_id - 1`` in,
        output written (or, :class:`Pending`, handed to the background writer), version
        ``batch_id`` saved. Returns the output rows."""
        store = BatchStateStore(self.state_dir)
        previous = store.before(batch_id)
        state = self.step.new_state() if previous is None else previous.state
        if run is not None:
            out, rows_in = run(state)
        else:
            assert frame is not None
            out, rows_in = self.step.run(state, [frame]), len(frame)
        if isinstance(out, Pending):
            rows = out.rows
            self._writer.submit(out.write)
        else:
            out = empty_frame() if out is None else out
            self.output(out, str(batch_id), spark)
            rows = len(out)
        store.save(Version(batch_id, state, rows, rows_in))
        return rows

    def __call__(self, df: Any, batch_id: int) -> None:
        """One micro-batch. Typed tumbling counts: the JVM step in one Spark task where the
        rows are read (:meth:`step_jvm`; integer columns, or the fields of a JSON payload);
        else integer columns collected here (``toArrow``, :meth:`direct_columns`) for the
        Python typed step; any other query or input: the operator's input rows collected
        here for the general step. (A Python step in one task,
        ``coalesce(1)`` then ``mapInArrow``, measured no faster than collecting.)"""
        if not self._recovered:
            self.flush()
            self._recovered = True
        if self.step_jvm(df, batch_id):
            return
        names = self.direct_columns(df)
        if names is not None:
            self.step_table(self.collect_direct(df, names), batch_id, df.sparkSession)
        else:
            self.step_batch(self.rows(df), batch_id, df.sparkSession)

    def finish(self, spark: Any) -> int:
        """End of input after the last micro-batch: flush what the newest state version holds
        open (output name ``end``: a second call writes the same rows again, not new ones),
        after :meth:`flush`. Returns the rows written."""
        self.flush()
        latest = BatchStateStore(self.state_dir).latest()
        if latest is None:
            return 0
        out = self.step.finish(latest.state)
        out = empty_frame() if out is None else out
        self.output(out, "end", spark)
        return len(out)


@dataclass(frozen=True, slots=True)
class Pending:
    """A micro-batch's output left to the background writer: its row count and the write."""

    rows: int
    write: Callable[[], None]


_INTEGRAL = ("bigint", "int", "smallint", "tinyint")


def direct_columns(step: FastStep, columns: Columns, types: dict[str, str]) -> list[str] | None:
    """The input columns :func:`fast_tumbling.tumbling_counts` reads (seq, arrival if any,
    the time field, the key field if any), or None when the step or the input is not
    covered (see :meth:`ExactBatches.direct_columns`). ``types``: column name -> Spark type."""
    c = columns
    if c.kind or c.after_seq or c.payload or not covers(step):
        return None
    fields = [step.query.window.on, *step.query.group_by]
    stream = {c.seq, c.arrival_ms, "bucket"}
    if any(f in stream or types.get(f) not in _INTEGRAL for f in fields):
        return None
    if types.get(c.seq) not in _INTEGRAL or (c.arrival_ms and types.get(c.arrival_ms) not in _INTEGRAL):
        return None
    return [c.seq, *([c.arrival_ms] if c.arrival_ms else []), *fields]


def typed_frame(table: Any) -> pd.DataFrame:
    """The typed events frame the general step reads, from :meth:`ExactBatches.step_table`'s
    renamed table (nulls as 0 plus the ``_null`` flags)."""
    frame = frame_of(table)
    for name in (TYPED_TIME, typed_key(0)):
        if name in frame.columns:
            values = frame[name]
            missing = values.isna().to_numpy()
            frame[name] = values.fillna(0).to_numpy().astype("int64")
            frame[TYPED_TIME_NULL if name == TYPED_TIME else typed_key_null(0)] = missing
    return frame


def frame_of(table: Any) -> pd.DataFrame:
    """An Arrow table as pandas: integer columns with nulls as nullable ``Int64`` (exact; no
    float detour), without nulls as plain int64."""
    import numpy as np
    import pyarrow.compute as pc

    columns: dict[str, Any] = {}
    for name, column in zip(table.column_names, table.columns, strict=True):
        if pa.types.is_integer(column.type) and column.null_count:
            values = np.asarray(pc.fill_null(column, 0).to_numpy(), dtype=np.int64)
            columns[name] = pd.arrays.IntegerArray(values, np.asarray(column.is_null().to_numpy()))
        else:
            columns[name] = column.to_numpy() if column.null_count == 0 else column.to_pandas()
    return pd.DataFrame(columns, copy=False)


__all__ = [
    "BatchRun",
    "Columns",
    "DataFrameOutput",
    "ExactBatches",
    "FileOutput",
    "checkpoint_allows",
    "eligible",
    "output_for",
    "start",
    "state_dir_of",
    "wait",
]
