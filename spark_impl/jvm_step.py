"""The typed tumbling-count step on the JVM, inside one Spark task, beside the Python one.

:func:`windtunnel.spark_impl.fast_tumbling.tumbling_counts` needs the micro-batch's rows in
Python: collecting 300k rows to the driver (``toArrow``) costs more than stock Spark's whole
micro-batch. ``spark_impl/jvm/TumblingCounts.java`` runs the same rules where Spark reads
the rows: one task (``coalesce(1)``, no shuffle) over Spark's internal rows, with the key
clocks and open windows of the previous state version passed in and only the results
(drops, emissions, the new state) sent back to the driver as one byte array. This module
packs the state, calls the class and turns its answer into the same output rows
(:mod:`~windtunnel.spark_impl.arrow_rows`) and the same
:class:`~windtunnel.spark_impl.fast_state.FastState` as the Python step, so micro-batches
may switch between the two; tests/spark_impl/test_jvm_step.py checks that on random streams.

The class ships compiled in ``spark_impl/jvm/windtunnel-jvm.jar`` (``tools/build_jar.py``);
:func:`load` adds the jar to the running SparkContext (``addJar``: executors fetch it) and
loads the class in the driver through its own class loader. The state goes in and the answer
comes back as files in a temporary folder (Py4J moves large byte arrays at about 15 MB/s). It
is used when the session has a JVM in this process (local and ``spark://`` sessions, not Spark Connect clients) and the
jar loads; otherwise, and for micro-batches with a null or an out-of-range time (the task
says so), the Python step runs.
"""

from __future__ import annotations

import struct
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from windtunnel.spark_impl import arrow_rows
from windtunnel.spark_impl.fast_frames import NONE, TIME_LIMIT_MS, _key_code
from windtunnel.spark_impl.fast_state import FastState
from windtunnel.spark_impl.fast_tumbling import covers

JAR = Path(__file__).resolve().parent / "jvm" / "windtunnel-jvm.jar"
CLASS_NAME = "windtunnel.jvm.TumblingCounts"

OK, HAS_NULL, OUT_OF_RANGE, NO_ROWS, GUARDED = 0, 1, 2, 3, 4
"""The task's status word: rows follow; a null field; a time beyond the limit; no rows; a
row the guard refuses (a control row)."""


class Fallback(Exception):
    """The JVM step declined the micro-batch (a null field, an out-of-range time, a control
    row): run the Python step on it, which handles them all."""


@dataclass(frozen=True, slots=True)
class JvmStep:
    """The loaded ``TumblingCounts.run`` method of one SparkContext."""

    method: Any
    gateway: Any
    loader: Any = None
    """The class loader holding the jar's classes."""
    names: dict[tuple[str, ...], Any] = field(default_factory=dict)
    """Java String arrays of the input column names, made once."""

    def call(self, jdf: Any, inputs: Inputs, payload: bytes, keep: Path | None = None) -> bytes:
        """``TumblingCounts.runFiles``: the task's answer. The request and the answer travel
        as files in a temporary folder on the driver, not through Py4J (which moves a 700 kB
        answer in about 50 ms); ``keep``: the answer's file instead (left in place)."""
        jvm = self.gateway.jvm
        names = self._strings(inputs.columns)
        with tempfile.TemporaryDirectory(prefix="windtunnel-jvm-") as tmp:
            request, answer = Path(tmp) / "request", keep or Path(tmp) / "answer"
            request.write_bytes(payload)
            args = self.gateway.new_array(jvm.java.lang.Object, 6)
            args[0] = jdf
            args[1] = names
            args[2] = inputs.guard
            args[3] = self._strings(inputs.json_fields)
            args[4] = str(request)
            args[5] = str(answer)
            self.method.invoke(None, args)
            return answer.read_bytes()

    def json_ints(self, text: str, keys: tuple[str, ...]) -> list[int] | None:
        """What the task reads from one JSON text (``JsonFields.parse``): the integer values of
        the top-level ``keys``, or None where it declines (tests hold it to ``json.loads``)."""
        jvm = self.gateway.jvm
        cls = jvm.java.lang.Class.forName("windtunnel.jvm.JsonFields", True, self.loader)
        types = self.gateway.new_array(jvm.java.lang.Class, 2)
        types[0] = jvm.java.lang.Class.forName("java.lang.String")
        types[1] = jvm.java.lang.Class.forName("[Ljava.lang.String;")
        args = self.gateway.new_array(jvm.java.lang.Object, 2)
        args[0] = text
        args[1] = self._strings(keys)
        found = cls.getMethod("parse", types).invoke(None, args)
        return None if found is None else [int(v) for v in found]

    def reads_directly(self, jdf: Any) -> bool:
        """True when the task reads the Java Dataset ``jdf``'s rows as they are, without
        planning a query over them (a ``foreachBatch`` micro-batch: Spark hands it over as
        rows already planned; planning again cost 10-20 ms per micro-batch)."""
        jvm = self.gateway.jvm
        cls = jvm.java.lang.Class.forName(CLASS_NAME, True, self.loader)
        types = self.gateway.new_array(jvm.java.lang.Class, 1)
        types[0] = jvm.java.lang.Class.forName("org.apache.spark.sql.Dataset")
        args = self.gateway.new_array(jvm.java.lang.Object, 1)
        args[0] = jdf
        return bool(cls.getMethod("readsDirectly", types).invoke(None, args))

    def _strings(self, values: tuple[str, ...]) -> Any:
        """``values`` as a Java String array (made once per tuple)."""
        array = self.names.get(values)
        if array is None:
            array = self.gateway.new_array(self.gateway.jvm.java.lang.String, len(values))
            for index, value in enumerate(values):
                array[index] = value
            self.names[values] = array
        return array


_loaded: dict[str, JvmStep | None] = {}
_lock = threading.Lock()


def load(spark: Any) -> JvmStep | None:
    """The JVM step for ``spark``'s SparkContext, loaded once per application, or None: a
    Spark Connect session (no JVM here), no jar, or a JVM that cannot load it."""
    try:
        context = spark.sparkContext
        app = context.applicationId
        gateway = context._gateway
    except Exception:  # Spark Connect: no SparkContext in this process
        return None
    with _lock:
        if app not in _loaded:
            _loaded[app] = _load(context, gateway)
        return _loaded[app]


def _load(context: Any, gateway: Any) -> JvmStep | None:
    if not JAR.is_file():
        return None
    try:
        jvm = gateway.jvm
        urls = gateway.new_array(jvm.java.net.URL, 1)
        urls[0] = jvm.java.io.File(str(JAR)).toURI().toURL()
        parent = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        loader = jvm.java.net.URLClassLoader(urls, parent)
        cls = jvm.java.lang.Class.forName(CLASS_NAME, True, loader)
        text = jvm.java.lang.Class.forName("java.lang.String")
        texts = jvm.java.lang.Class.forName("[Ljava.lang.String;")
        types = gateway.new_array(jvm.java.lang.Class, 6)
        types[0] = jvm.java.lang.Class.forName("org.apache.spark.sql.Dataset")
        types[1] = types[3] = texts
        types[2] = types[4] = types[5] = text
        method = cls.getMethod("runFiles", types)
        context._jsc.sc().addJar(str(JAR))  # executors fetch it
    except Exception:  # another Spark build: the Python step serves
        return None
    return JvmStep(method, gateway, loader=loader)


def applies(step: Any) -> bool:
    """True when the JVM step runs ``step``'s query (as :func:`fast_tumbling.covers`)."""
    return covers(step)


@dataclass(frozen=True, slots=True)
class Inputs:
    """What the task reads: the ``columns`` holding seq, arrival (when ``has_arrival``), the
    event time and the key (when the query has one), integer columns read as int64 in the
    task; or, with ``json_fields`` (the time field, the key field), seq, arrival and the event
    as JSON text, whose top-level fields the task reads (``JsonFields.java``); ``guard``,
    unless empty, a string column (``kind``) whose rows other than ``event`` the step cannot
    take (a null passes, as the general step reads it)."""

    columns: tuple[str, ...]
    has_arrival: bool
    guard: str = ""
    json_fields: tuple[str, ...] = ()


def inputs_of(columns: Any, query: Any, types: dict[str, str]) -> Inputs | None:
    """The task's inputs for ``query`` over a micro-batch with these stream ``columns``
    (:class:`batch_exact.Columns`) and column ``types`` (name -> Spark type), or None:

    - integer columns (the time field and the key field among the columns): the columns;
    - events as JSON in a ``payload`` column (a job's input rows): the time and key fields
      read in the task by ``JsonFields.java``, which takes only JSON integers in the int64
      range as ``json.loads`` reads them and declines the micro-batch on anything else (a
      float, a string, a missing field, an escaped key), which then goes to the Python step;
      a ``kind`` column guards against control rows (``clock``, ``end``). Spark's own
      ``from_json`` measured 5 us a row here, more than the whole step.
    None for dotted field names, a time field that is also the key, other column types or a
    payload without a seq column."""
    fields = [query.window.on, *query.group_by]
    if any("." in f for f in fields) or types.get(columns.seq) not in _INTEGRAL:
        return None
    if columns.arrival_ms and types.get(columns.arrival_ms) not in _INTEGRAL:
        return None
    head = [columns.seq, *([columns.arrival_ms] if columns.arrival_ms else [])]
    has_arrival = columns.arrival_ms is not None
    if columns.payload is None and columns.kind is None and columns.after_seq is None:
        stream = {columns.seq, columns.arrival_ms, "bucket"}
        if any(f in stream or types.get(f) not in _INTEGRAL for f in fields):
            return None
        return Inputs((*head, *fields), has_arrival)
    if columns.payload is None or types.get(columns.payload) != "string" or len(set(fields)) < len(fields):
        return None
    if columns.kind and types.get(columns.kind) != "string":
        return None
    return Inputs((*head, columns.payload), has_arrival, columns.kind or "", tuple(fields))


_INTEGRAL = ("bigint", "int", "smallint", "tinyint")


def tumbling_counts_jvm(jvm: JvmStep, step: Any, state: FastState, jdf: Any, inputs: Inputs) -> pa.Table | None:
    """The output rows of one micro-batch as :func:`fast_tumbling.tumbling_counts` gives
    them, ``state`` updated in place; None without rows. ``jdf``: the micro-batch's Java
    Dataset; ``inputs``: what the task reads from it. Raises :class:`Fallback` as
    :func:`answer_jvm` does."""
    answer = answer_jvm(jvm, step, state, jdf, inputs)
    return None if answer is None else render(step, answer, state.groups, state.first_seq)


def answer_jvm(
    jvm: JvmStep, step: Any, state: FastState, jdf: Any, inputs: Inputs, keep: Path | None = None
) -> Answer | None:
    """One micro-batch through the task: ``state`` updated in place, the results to
    :func:`render` returned (None without rows). ``keep``: also leave the task's answer in
    this file (a write-ahead copy, :mod:`answer_log`). Raises :class:`Fallback` (nothing
    changed) when the task finds a null value, a time at or beyond +-2^61 ms (after the
    unit) or a guarded row, and before any task when ``state`` holds a key that is not an
    int64 (the Python step made it from a string, float or bool)."""
    if state.ended:
        return None
    has_key = bool(step.query.group_by)
    data = jvm.call(jdf, inputs, _request(step, state, inputs.has_arrival, has_key), keep)
    answer = Answer.parse(data)
    if answer is None:
        return None
    _apply(state, answer, has_key)
    return answer


def _request(step: Any, state: FastState, has_arrival: bool, has_key: bool) -> bytes:
    unit = int(step.time_unit_ms)
    if not all(not k or k[0] is None or (type(k[0]) is int and -(2**63) <= k[0] < 2**63) for k in state.keys):
        # a key the Python step made from a value the task never takes (a string, a float,
        # a bool): the task could not hold it, so the Python step keeps the stream
        raise Fallback(HAS_NULL)
    # a null key (from a micro-batch the Python step ran) keeps its code but matches nothing
    null = np.fromiter((bool(k) and k[0] is None for k in state.keys), bool, len(state.keys))
    keys = np.fromiter((k[0] if k and k[0] is not None else 0 for k in state.keys), np.int64, len(state.keys))
    head = [
        int(NONE), unit, int(step.size_ms), int(step.span_ms), int(has_arrival), int(has_key),
        int(state.wall_ms), int(state.after_seq is not None),
        int(state.after_seq) if state.after_seq is not None else 0, TIME_LIMIT_MS // unit,
        len(keys),
    ]
    parts = [
        struct.pack(f">{len(head)}q", *head),
        keys.astype(">i8").tobytes(),
        null.astype(">i8").tobytes(),
        np.asarray(state.clock, np.int64).astype(">i8").tobytes(),
        struct.pack(">q", len(state.win_key)),
        np.asarray(state.win_key, np.int64).astype(">i8").tobytes(),
        np.asarray(state.win_start, np.int64).astype(">i8").tobytes(),
        np.asarray(state.win_count, np.int64).astype(">i8").tobytes(),
    ]
    return b"".join(parts)


@dataclass(frozen=True, slots=True)
class Answer:
    """The task's results for one micro-batch (status OK): the new wall clock and stream
    position, new keys (value, first seq), every key's clock, late drops (seq, event time,
    window start, the key's clock before, key code), closed windows (key code, start, count,
    closing seq, wall clock, index among the closing event's emissions) and the open windows
    (key code, start, count), and the micro-batch's rows the task read. Times in ms; windows
    ``[start, start + size)``."""

    wall_ms: int
    after_seq: int
    new_keys: np.ndarray
    new_first: np.ndarray
    clock: np.ndarray
    drops: tuple[np.ndarray, ...]
    emissions: tuple[np.ndarray, ...]
    open_windows: tuple[np.ndarray, ...]
    rows_in: int

    @property
    def rows(self) -> int:
        """The output rows it gives: drops and emissions."""
        return len(self.drops[0]) + len(self.emissions[0])

    @staticmethod
    def parse(data: bytes) -> Answer | None:
        """The answer in the task's wire format (TumblingCounts.java); None for no rows.
        Raises :class:`Fallback` for a declined micro-batch."""
        longs = np.frombuffer(data, dtype=">i8").astype(np.int64)
        status = int(longs[0])
        if status == NO_ROWS:
            return None
        if status != OK:
            raise Fallback(status)
        read = _Reader(longs)
        wall_ms, after_seq, n_new = read.one(), read.one(), read.one()
        new_keys, new_first = read.many(n_new), read.many(n_new)
        clock = read.many(read.one())
        n_drops = read.one()
        drops = tuple(read.many(n_drops) for _ in range(5))
        n_emit = read.one()
        emissions = tuple(read.many(n_emit) for _ in range(6))
        n_open = read.one()
        open_windows = tuple(read.many(n_open) for _ in range(3))
        rows_in = read.one()
        return Answer(wall_ms, after_seq, new_keys, new_first, clock, drops, emissions, open_windows, rows_in)


class _Reader:
    """Consecutive int64 values and arrays of the task's answer."""

    def __init__(self, longs: np.ndarray) -> None:
        self.longs = longs
        self.at = 1

    def one(self) -> int:
        value = int(self.longs[self.at])
        self.at += 1
        return value

    def many(self, n: int) -> np.ndarray:
        values = self.longs[self.at : self.at + n]
        self.at += n
        return values


def _apply(state: FastState, answer: Answer, has_key: bool) -> None:
    """``state`` after the micro-batch: wall clock, position, new keys, clocks, open windows."""
    state.wall_ms = answer.wall_ms
    state.after_seq = answer.after_seq
    lookup: dict[Any, int] = {}  # the keys are new: the task looked the old ones up
    added: list[int] = []
    for value, first in zip(answer.new_keys.tolist(), answer.new_first.tolist(), strict=True):
        _key_code(state, lookup, (value,) if has_key else (), first, added)
    state.first_seq = np.concatenate([state.first_seq, np.asarray(added, np.int64)])
    state.clock = answer.clock.copy()
    state.win_key, state.win_start, state.win_count = (a.copy() for a in answer.open_windows)
    state.win_states = None


def render(step: Any, answer: Answer, groups: Sequence[str], first_seq: np.ndarray) -> pa.Table | None:
    """The output rows of ``answer`` (:mod:`arrow_rows`), or None without rows. ``groups`` and
    ``first_seq``: the keys' group texts and first seqs by code, of the state after the
    micro-batch or any later one (keys are only ever added)."""
    out: list[pa.Table] = []
    group_texts = arrow_rows.group_texts(groups)
    d_seq, d_time, d_start, d_clock, d_code = answer.drops
    e_code, e_start, e_count, e_seq, e_wall, e_index = answer.emissions
    if len(d_seq):
        out.append(
            arrow_rows.late_table(
                d_seq, d_time, d_start, d_clock, group_texts.take(d_code),
                size_ms=step.size_ms, offset_ms=step.offset_ms,
            )
        )
    if len(e_code):
        out.append(
            arrow_rows.count_emission_table(
                group_texts.take(e_code), np.asarray(first_seq)[e_code], e_start, e_count, e_seq, e_wall,
                e_index, size_ms=step.size_ms, aggregations=step.aggregations,
            )
        )
    if not out:
        return None
    return out[0] if len(out) == 1 else pa.concat_tables(out)


__all__ = [
    "CLASS_NAME", "JAR", "Answer", "Fallback", "Inputs", "JvmStep", "answer_jvm", "applies", "inputs_of", "load",
    "render", "tumbling_counts_jvm",
]
