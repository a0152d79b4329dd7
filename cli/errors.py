"""Turning library errors into one-line messages and exit code 2, tracebacks only with --debug."""

from __future__ import annotations

import functools
import sys
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

import click

from windtunnel.oracle.model.errors import WindtunnelError

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK = 0
EXIT_MISMATCH = 1
EXIT_INVALID = 2


def friendly(command: F) -> F:
    """Run ``command``; a WindtunnelError prints ``windtunnel: <message>`` and exits 2."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        debug = bool(ctx.find_root().params.get("debug"))
        try:
            return command(*args, **kwargs)
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


def spark_failure(exc: BaseException, limit: int = 300) -> str:
    """One line for a Spark failure: its first meaningful line, and how to see the rest."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    first = lines[0] if lines else type(exc).__name__
    if len(first) > limit:
        first = first[: limit - 3] + "..."
    return f"Spark failed ({type(exc).__name__}): {first}; rerun with --debug for Spark's trace"
