"""Turning failures into one line and an exit code CI can read; tracebacks only with --debug.

Exit codes: 0 done, 1 a check, comparison or expectation failed, 2 invalid input or a
failure of the engine or the user's job (one line on stderr naming the cause), 130
interrupted (Ctrl-C: running Spark queries and the session are stopped first), 143
terminated (SIGTERM, handled like Ctrl-C). While a command runs without ``--debug``,
Python logging is off: PySpark and Py4J log whole exceptions and query plans to the
terminal (``DataFrameQueryContextLogger``, Py4J's ``Exception while sending command``)
on top of the one line said here.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import socketserver
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import Any, NoReturn, TypeVar

import click

from windtunnel.oracle.model.errors import WindtunnelError
from windtunnel.spark_impl.errors import cause_line

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK = 0
EXIT_MISMATCH = 1
EXIT_INVALID = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like KeyboardInterrupt, so temporary files are removed."""


def _is_debug() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.find_root().params.get("debug"))


@contextlib.contextmanager
def quiet_logging(debug: bool) -> Iterator[None]:
    """Python logging off while the block runs (unless ``debug``), restored after; so are the
    tracebacks socket servers print from their threads (PySpark's accumulator and
    data-source servers, when Ctrl-C reaches the JVM first and their connections break)."""
    previous = logging.root.manager.disable
    handle_error = socketserver.BaseServer.handle_error
    if not debug:
        logging.disable(logging.CRITICAL)
        socketserver.BaseServer.handle_error = _no_traceback  # type: ignore[method-assign]
    try:
        yield
    finally:
        logging.disable(previous)
        socketserver.BaseServer.handle_error = handle_error  # type: ignore[method-assign]


def _no_traceback(self: Any, request: Any, client_address: Any) -> None:
    """A request a socket server's thread failed on: said nothing (the CLI names the cause)."""


def _thread_quiet(args: Any) -> None:
    """A thread's uncaught exception while the CLI stops: said nothing (the CLI said why)."""


def _raise_terminated(signum: int, frame: Any) -> NoReturn:
    raise Terminated()


@contextlib.contextmanager
def terminating() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` in the block (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _leave_now(signum: int, frame: Any) -> NoReturn:
    os._exit(EXIT_INTERRUPTED if signum == signal.SIGINT else EXIT_TERMINATED)


def interrupted(code: int, debug: bool) -> NoReturn:
    """Stop Spark if it runs, say so in one line and exit with ``code`` (a second Ctrl-C
    while stopping leaves at once)."""
    main = threading.current_thread() is threading.main_thread()
    if not debug:  # threads still calling a stopping JVM must not log or print until exit
        logging.disable(logging.CRITICAL)
        threading.excepthook = _thread_quiet
    handlers = {}
    if main:
        for number in (signal.SIGINT, signal.SIGTERM):
            handlers[number] = signal.signal(number, _leave_now)
    try:
        if debug:
            traceback.print_exc()
        what = "interrupted (Ctrl-C)" if code == EXIT_INTERRUPTED else "terminated (SIGTERM)"
        stopped = False
        if "pyspark" in sys.modules:
            from windtunnel.spark_impl.shutdown import stop_spark

            stopped = stop_spark()
        click.echo(f"windtunnel: {what}{'; Spark stopped' if stopped else ''}", err=True)
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
    sys.exit(code)


def friendly(command: F) -> F:
    """Run ``command``: a WindtunnelError or a Spark failure prints ``windtunnel: <one
    line>`` and exits 2, Ctrl-C exits 130 and SIGTERM 143 after stopping Spark."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        debug = _is_debug()
        try:
            with quiet_logging(debug), terminating():
                return command(*args, **kwargs)
        except KeyboardInterrupt:
            interrupted(EXIT_INTERRUPTED, debug)
        except Terminated:
            interrupted(EXIT_TERMINATED, debug)
        except WindtunnelError as exc:
            if debug:
                traceback.print_exc()
            click.echo(f"windtunnel: {exc}", err=True)
            sys.exit(EXIT_INVALID)
        except Exception as exc:
            if not from_spark(exc):
                raise
            if debug:
                traceback.print_exc()
            click.echo(f"windtunnel: {spark_failure(exc)}", err=True)
            sys.exit(EXIT_INVALID)

    return wrapper  # type: ignore[return-value]


SPARK_MODULES = ("pyspark", "py4j", "grpc")
"""Where Spark's own exceptions come from (the JVM, the Connect client)."""


def from_spark(exc: BaseException) -> bool:
    """True when ``exc`` was raised by Spark, its JVM bridge or its Connect client."""
    return type(exc).__module__.split(".")[0] in SPARK_MODULES


def spark_failure(exc: BaseException) -> str:
    """One line for a Spark failure: its root cause (the innermost exception and the user
    code it came from: :mod:`windtunnel.spark_impl.errors`), and how to see the rest."""
    return f"Spark failed ({type(exc).__name__}): {cause_line(exc)}; rerun with --debug for Spark's trace"
