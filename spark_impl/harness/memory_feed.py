"""Exact micro-batches fed from the driver's memory: Spark's ``MemoryStream``, one batch at a time.

The scripted source (:mod:`windtunnel.spark_impl.jobs.scripted`) needs a Python process per query
(its offsets) and Python workers per micro-batch (its rows); each query's process must connect
back to the JVM within 10 s, which many queries starting at once on a busy machine miss.
``MemoryStream`` lives in the JVM: the driver adds micro-batch ``i`` (``addData``) and waits
until the query has run it (``processAllAvailable``) before adding ``i + 1``, so micro-batch
``i`` of the query is batch ``i`` exactly, an empty batch included (its offset still moves).

Spark runs a no-data micro-batch whenever the watermark would evict state; between fed batches
that would be a micro-batch the scripted source never has, so the query runs in a session of
its own (:func:`feeding_session`, sharing the SparkContext) with
``spark.sql.streaming.noDataMicroBatches.enabled=false``; the fed stream ends with an empty
batch in its place (``job_placement.shifted_batches``). That session also runs the stateful
operators on one partition with the HDFS-backed state store (:data:`FAST_CONF`: less work per
micro-batch for a stream of a few rows; docs/conformance.md, "The per-scenario floor"), except
for jobs that need RocksDB (``transformWithState``: :func:`needs_rocksdb`), which run with the
session's own store. ``MemoryStream`` is Spark's internal
class (``org.apache.spark.sql.execution.streaming.runtime``, PySpark 4.x): where it cannot be
reached (Spark Connect, another Spark) :func:`memory_feed` returns None and the scripted source
is used.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrame

MEMORY_STREAM = "org.apache.spark.sql.execution.streaming.runtime.MemoryStream"

FEEDING_CONF = {
    "spark.sql.streaming.noDataMicroBatches.enabled": "false",
    "spark.sql.shuffle.partitions": "1",
    # a micro-batch of a few rows: generating and compiling Java code for every operator
    # of every micro-batch (and the JIT compiling those classes) costs more than
    # interpreting them; results are the same (Spark tests both modes against each other)
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}
"""The feeding session's settings (see the module docstring; docs/conformance.md, "The
per-scenario floor", gives their effect)."""

FAST_CONF = {
    "spark.sql.streaming.stateStore.providerClass":
        "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider",
}
"""And, unless the job needs RocksDB, these."""

_sessions: dict[tuple[str, bool, int], Any] = {}
_lock = threading.Lock()


def feeding_session(spark: Any, fast: bool = True) -> Any:
    """A session of ``spark``'s SparkContext with :data:`FEEDING_CONF` (and :data:`FAST_CONF`
    when ``fast``), made once per application and thread: queries running side by side
    (``job_lanes``) do not share temporary views (a job's ``createOrReplaceTempView``)."""
    key = (spark.sparkContext.applicationId, fast, threading.get_ident())
    with _lock:
        if key not in _sessions:
            session = spark.newSession()
            for name, value in {**FEEDING_CONF, **(FAST_CONF if fast else {})}.items():
                session.conf.set(name, value)
            _sessions[key] = session
        return _sessions[key]


def needs_rocksdb(error: BaseException) -> bool:
    """Whether ``error`` is Spark refusing the HDFS-backed store for ``transformWithState``."""
    return "STORE_BACKEND_NOT_SUPPORTED" in str(error)


class MemoryFeed:
    """One ``MemoryStream`` of JSON texts (column ``value``) in :func:`feeding_session`."""

    def __init__(self, session: Any, stream: Any) -> None:
        self.session = session
        self._stream = stream
        jvm = session._jvm
        # looked up once: Py4J resolves a dotted name by trying each prefix as a class,
        # and every miss searches all of Spark's jars
        self._lines = jvm.java.util.regex.Pattern.compile("\n")
        self._as_scala = jvm.scala.jdk.javaapi.CollectionConverters.asScala
        self._empty = self._as_scala(jvm.java.util.ArrayList())

    def frame(self) -> DataFrame:
        """The streaming DataFrame: one string column ``value``."""
        return DataFrame(self._stream.toDF(), self.session)

    def drive(self, query: Any, batches: Sequence[Sequence[str]]) -> None:
        """Feed ``batches`` (JSON texts, so without a line break) one micro-batch each,
        waiting for each; raises what the query raised (``StreamingQueryException``). A
        batch crosses to the JVM as one text split there: a few Py4J calls whatever its rows."""
        for batch in batches:
            if not batch:
                rows = self._empty
            else:
                joined = "\n".join(batch)
                if joined.count("\n") != len(batch) - 1:
                    raise ValueError("a fed row holds a line break; feed JSON texts")
                rows = self._as_scala(self._lines.splitAsStream(joined).toList())
            self._stream.addData(rows)
            query.processAllAvailable()


def memory_feed(spark: Any, fast: bool = True) -> MemoryFeed | None:
    """A new feed for ``spark`` (in its ``fast`` feeding session), or None where
    ``MemoryStream`` cannot be reached."""
    try:
        session = feeding_session(spark, fast)
        jvm = session._jvm
        encoder = jvm.org.apache.spark.sql.Encoders.STRING()
        stream = getattr(jvm, MEMORY_STREAM).apply(encoder, session._jsparkSession)
    except Exception:  # Spark Connect (no JVM here), or a Spark without this class
        return None
    return MemoryFeed(session, stream)
