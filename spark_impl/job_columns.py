"""The columns a user's job sees: declared fields' types, and a job that reads a column the
spec's events do not have (Spark's analysis error, named).

Spark refuses such a job when it builds its plan (``AnalysisException`` with the condition
``UNRESOLVED_COLUMN.*``, ``UNRESOLVED_COLUMN_AMONG_FIELD_NAMES`` or ``FIELD_NOT_FOUND``).
:func:`missing_column_error` turns that into one line naming the column and the fix:
declare the field under ``fields:`` or add it to an input event (docs/scenarios.md,
"fields"), instead of blaming the job.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import types as T

from windtunnel.oracle.model.errors import InvalidSpec

DECLARED_TYPES = {"string": T.StringType(), "int": T.LongType(), "float": T.DoubleType(),
                  "bool": T.BooleanType()}
"""The column type of each declared field type (docs/scenarios.md, "fields")."""

CONDITIONS = ("UNRESOLVED_COLUMN", "UNRESOLVED_COLUMN_AMONG_FIELD_NAMES", "FIELD_NOT_FOUND")
"""Spark's error conditions (their prefix before a dot) for a column or field not found."""


def _condition(exc: BaseException) -> str:
    for name in ("getCondition", "getErrorClass"):
        method = getattr(exc, name, None)
        if callable(method):
            try:
                found = method()
            except Exception:  # a Connect error without a condition
                continue
            if found:
                return str(found)
    return ""


def missing_column(exc: BaseException) -> str | None:
    """The column (a dotted path) Spark could not find, or None for any other error."""
    condition = _condition(exc)
    if condition.split(".")[0] not in CONDITIONS:
        return None
    get = getattr(exc, "getMessageParameters", None)
    parameters: dict[str, Any] = (get() or {}) if callable(get) else {}
    name = parameters.get("objectName") or parameters.get("colName") or parameters.get(
        "fieldName")
    if not name:
        return None
    return ".".join(part.strip("`") for part in str(name).split("`.`"))


def missing_column_error(
    exc: BaseException, job_name: str, columns: Sequence[str]
) -> InvalidSpec | None:
    """One line for a job reading a column the events lack (``columns``: the ones they
    have), or None when ``exc`` is not that."""
    name = missing_column(exc)
    if name is None:
        return None
    return InvalidSpec(
        "--job", job_name,
        f"the job reads column {name}, which the spec's events do not have (they have: "
        f"{', '.join(columns)})",
        f"declare it under fields: (e.g. fields: {{{name}: string}}) or add it to an input "
        "event",
    )
