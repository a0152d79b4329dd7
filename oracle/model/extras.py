"""Optional parts of windtunnel: imports that need a pip extra fail with one clear line.

The core install (oracle, simulator, CLI, pytest plugin) needs no extra. Spark
(``windtunnel[spark]``: pyspark with Spark Connect, pandas, pyarrow, protobuf) and the
Kafka client (``windtunnel[kafka]``) are imported only where they are used, inside
:func:`requires_extra`, so a missing one becomes :class:`MissingExtra` naming the extra.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator

from windtunnel.oracle.model.errors import InvalidInput, MissingExtra

EXTRAS = ("spark", "java", "kafka", "tenzir", "broker")
"""The pip extras that bring optional parts (``test`` is for developing windtunnel)."""


@contextlib.contextmanager
def requires_extra(extra: str, purpose: str) -> Iterator[None]:
    """Run the block (imports of an optional part); a third-party module it cannot find
    raises :class:`MissingExtra` for ``extra``. A missing ``windtunnel`` module is a
    broken install, not a missing extra: that ModuleNotFoundError propagates."""
    if extra not in EXTRAS:
        raise InvalidInput("extra", extra, f"is not one of {', '.join(EXTRAS)}", "name one of them")
    try:
        yield
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").partition(".")[0]
        if not missing or missing == "windtunnel":
            raise
        raise MissingExtra(extra, missing, purpose) from exc


def require_module(extra: str, module: str, purpose: str) -> None:
    """Fail early with :class:`MissingExtra` unless ``module`` (brought by ``extra``)
    imports, e.g. before a long generation whose end needs it."""
    with requires_extra(extra, purpose):
        importlib.import_module(module)
