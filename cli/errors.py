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

    return wrapper  # type: ignore[return-value]
