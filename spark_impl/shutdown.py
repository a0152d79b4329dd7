"""Ctrl-C on Spark: windtunnel's sessions keep Python's own SIGINT handler, and stopping Spark
after an interrupt stops every active streaming query, then the session.

Ctrl-C raises KeyboardInterrupt in the main thread while it waits on a query
(:func:`keeping_sigint`); the queries keep running in the JVM until someone stops them.
:func:`stop_spark` does that, bounded in time, and reports nothing: it is called on the
way out. Nothing here imports pyspark unless a session was started in this process.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

from windtunnel.spark_impl import scratch


@contextlib.contextmanager
def keeping_sigint() -> Iterator[None]:
    """Keep the SIGINT handler a new SparkContext replaces. PySpark's handler cancels jobs
    through Py4J from inside the signal handler, which breaks the Py4J call the main
    thread is waiting in (50 lines of tracebacks, then KeyboardInterrupt anyway); with
    Python's own handler Ctrl-C raises KeyboardInterrupt there, and whoever catches it
    stops the queries (:func:`stop_spark`)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


STOP_TIMEOUT_S = 15.0
"""How long stopping may take before the process leaves anyway (the JVM exits with it)."""


def active_session() -> Any:
    """The SparkSession started in this process, or None (pyspark never imported, no session)."""
    if "pyspark.sql" not in sys.modules:
        return None
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession() or getattr(SparkSession, "_instantiatedSession", None)


def _stop(spark: Any) -> None:
    with contextlib.suppress(Exception):
        for query in list(spark.streams.active):
            with contextlib.suppress(Exception):
                query.stop()
    with contextlib.suppress(Exception):
        spark.stop()


def stop_spark(timeout_s: float = STOP_TIMEOUT_S) -> bool:
    """Stop the active queries and the session of this process, then remove the temporary
    checkpoints still open (:mod:`windtunnel.spark_impl.scratch`; none is made from the start
    of the call on); True when a session was stopped within ``timeout_s`` (False: no
    session, or stopping took too long)."""
    scratch.close()
    spark = active_session()
    stopped = False
    if spark is not None:
        worker = threading.Thread(target=_stop, args=(spark,), name="windtunnel-stop", daemon=True)
        worker.start()
        worker.join(timeout_s)
        stopped = not worker.is_alive()
    scratch.remove_open()
    return stopped
