"""The cause of a Spark failure in one line, instead of the wrappers around it.

A failure inside a job reaches the driver wrapped several times: a Python UDF's
exception inside a ``PythonException`` inside a ``foreachBatch`` traceback inside a
``StreamingQueryException`` whose text goes on with the query's whole plan; a JVM
exception inside a Py4J error or a ``Caused by:`` chain. :func:`root_cause` finds the
innermost exception line (``ValueError: bytes too large: 120``,
``ArithmeticException: [DIVIDE_BY_ZERO] Division by zero. ...``) and the user's code it
came from (the innermost traceback frame outside PySpark, Py4J, the standard library and
windtunnel, or the DataFrame call site Spark names), and :func:`cause_line` says both in
one line. Nothing here imports pyspark: it reads exception text and attributes.
"""

from __future__ import annotations

import re
import sysconfig
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

LIMIT = 300
"""Characters of the cause kept in the one-line message."""

_EXCEPTION = re.compile(
    r"^(?:Caused by: )?(?P<cls>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*"
    r"(?:Error|Exception|Exit|Interrupt|Failure|Timeout|Unavailable|Lost|Exhausted))"
    r"(?::\s*(?P<msg>.*))?$"
)
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')
_CALLED_FROM = re.compile(r"^(?P<path>/[^:\s]+\.py):(?P<line>\d+)$")
_SQLSTATE = re.compile(r"\s*SQLSTATE: \w+")
_QUERY_PREFIX = re.compile(r"^\[STREAM_FAILED\] Query \[id = [^\]]*\] terminated with exception: ")
_WRAPPERS = (
    "An exception was thrown from the Python worker",
    "An error occurred while calling",
    "An exception was raised by the Python Proxy",
)
"""Messages of exceptions that only wrap the one that matters."""
_WRAPPER_CLASSES = ("StreamingQueryException", "Py4JJavaError", "Py4JError")
_ENDS = ("\n=== Streaming Query ===", "\nJVM stacktrace:", "\n== Physical Plan ==")
_LIBRARIES = ("/pyspark/", "/py4j/", "<frozen ", "<string>")
_OWN = Path(__file__).resolve().parent.parent
"""The folder holding windtunnel's parts (``oracle``, ``spark_impl``, ...)."""
_STDLIB = sysconfig.get_paths().get("stdlib", "")
_MISSED_START = "failed to connect back"
"""Spark's message when a Python process it started for a query did not connect back to the
JVM within Spark's fixed 10 s."""

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Cause:
    """The innermost exception: ``text`` (``ValueError: bytes too large: 120``) and
    ``where`` it was raised in the user's code (``/path/jobs.py:12, in boom``; None
    when unknown)."""

    text: str
    where: str | None = None

    def __post_init__(self) -> None:
        if not self.text:
            raise ValueError("a cause needs text")

    def line(self) -> str:
        """``text (at where)`` cut to :data:`LIMIT` characters, on one line."""
        text = " ".join(self.text.split())
        if len(text) > LIMIT:
            text = text[: LIMIT - 3] + "..."
        return f"{text} (at {self.where})" if self.where else text


_OWN_PARTS = ("oracle", "simulator", "spark_impl", "conformance", "cli")
_INSTALLED = re.compile(r"/windtunnel/(?:" + "|".join(_OWN_PARTS) + r")/")
"""windtunnel's own modules where they are installed (site-packages, a shipped zip)."""


def _is_user_path(path: str) -> bool:
    if any(mark in path for mark in _LIBRARIES) or _INSTALLED.search(path):
        return False
    resolved = Path(path).resolve()
    if _STDLIB and str(resolved).startswith(str(Path(_STDLIB).resolve()) + "/"):
        return "site-packages" in resolved.parts or "dist-packages" in resolved.parts
    return not any(resolved.is_relative_to(_OWN / part) for part in _OWN_PARTS)


def _clean(cls: str, message: str | None) -> str:
    name = cls.rsplit(".", 1)[-1] if cls.startswith(("pyspark.", "py4j.", "windtunnel.")) else cls
    text = _SQLSTATE.sub("", message or "").strip().rstrip(";").strip()
    return f"{name}: {text}" if text else name


def _is_wrapper(cls: str, message: str | None) -> bool:
    if cls.rsplit(".", 1)[-1] in _WRAPPER_CLASSES:
        return True
    text = (message or "").strip()
    return not text.rstrip(":") or any(text.startswith(w) for w in _WRAPPERS)


def _where_before(lines: list[str], index: int) -> str | None:
    """The innermost user frame of the traceback that ends at ``lines[index]``."""
    for line in reversed(lines[:index]):
        if _EXCEPTION.match(line):  # an earlier exception's traceback: not this one's
            return None
        frame = _FRAME.match(line)
        if frame and _is_user_path(frame["path"]):
            return f"{frame['path']}:{frame['line']}, in {frame['func'].strip()}"
    return None


def _where_after(lines: list[str], index: int) -> str | None:
    """A DataFrame call site Spark prints after the message (``"x" was called from``)."""
    for line in lines[index + 1 : index + 8]:
        found = _CALLED_FROM.match(line.strip())
        if found and _is_user_path(found["path"]):
            return f"{found['path']}:{found['line']}"
    return None


def _context_site(exc: Any) -> str | None:
    """The user's call site from a PySpark exception's query context (``file:line``)."""
    getter = getattr(exc, "getQueryContext", None)
    if not callable(getter):
        return None
    try:
        for context in getter() or ():
            site = str(context.callSite())
            path = site.rsplit(":", 1)[0]
            if site and path.endswith(".py") and _is_user_path(path):
                return site
    except Exception:  # a context from a stopped JVM: no site
        return None
    return None


def _traceback_site(error: BaseException) -> str | None:
    """The innermost user frame of a Python exception's own traceback."""
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        if _is_user_path(frame.filename):
            return f"{frame.filename}:{frame.lineno}, in {frame.name}"
    return None


def _plain_first_line(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    first = _QUERY_PREFIX.sub("", first)
    return _SQLSTATE.sub("", first).strip().rstrip(";").strip()


def root_cause(error: BaseException | str) -> Cause:
    """The innermost exception in a Spark failure (see the module docstring); for an
    exception without a recognisable inner one, its own first line."""
    text = str(error)
    for end in _ENDS:
        text = text.split(end, 1)[0]
    lines = [line[2:] if line.startswith(": ") else line for line in text.splitlines()]
    found: tuple[int, str, str | None] | None = None
    for index, line in enumerate(lines):
        match = _EXCEPTION.match(line)
        if match is None or _is_wrapper(match["cls"], match["msg"]):
            continue
        found = (index, match["cls"], match["msg"])
    if found is None:
        first = _plain_first_line(text)
        if not isinstance(error, BaseException):
            return Cause(first or "unknown failure")
        name = type(error).__name__
        if name in _WRAPPER_CLASSES:  # raised where the driver waited: no user site
            return Cause(first or name, _context_site(error))
        where = _context_site(error) or _traceback_site(error)
        if first.startswith(name):
            return Cause(first, where)
        return Cause(f"{name}: {first}" if first else name, where)
    index, cls, message = found
    where = _where_after(lines, index) or _where_before(lines, index)
    if where is None and isinstance(error, BaseException):
        where = _context_site(error)
    return Cause(_clean(cls, message), where)


def cause_line(error: BaseException | str) -> str:
    """:func:`root_cause` as one line: ``ValueError: bytes too large: 120 (at jobs.py:12,
    in boom)``."""
    return root_cause(error).line()


_WATERMARK = re.compile(r"EventTimeWatermark (?:[0-9a-f-]{36}, )?(?P<column>[^#\s,]+)#\d+")


def watermark_columns(result: Any) -> list[str] | None:
    """The columns a DataFrame's plan puts watermarks on (``withWatermark``), or None when
    the plan cannot be read (a Spark Connect DataFrame)."""
    try:
        plan = str(result._jdf.queryExecution().analyzed().toString())
    except Exception:  # Connect DataFrames have no JVM handle
        return None
    return sorted({m["column"].strip("`") for m in _WATERMARK.finditer(plan)})


def spark_duration(ms: int) -> str:
    """Milliseconds as Spark's interval text: ``2 minutes``, ``90 seconds``, ``250 milliseconds``."""
    for unit, size in (("days", 86_400_000), ("hours", 3_600_000), ("minutes", 60_000),
                       ("seconds", 1000)):
        if ms and ms % size == 0:
            return f"{ms // size} {unit}"
    return f"{ms} milliseconds"


def append_mode_fix(result: Any, on: str, tolerance_ms: int) -> str:
    """What to change when Spark refuses a job's aggregation in append mode: add a
    watermark (none in the plan), move it to the window's column ``on`` (it is on
    another), or group by an event-time window of it (it is on ``on`` already)."""
    wanted = f'withWatermark("{on}", "{spark_duration(tolerance_ms)}")'
    columns = watermark_columns(result)
    if columns is None:
        return (f"write the aggregation over window(\"{on}\", ...) after {wanted}, as "
                "append mode requires")
    if not columns:
        return f"the job sets no watermark: call {wanted} before its groupBy, as append mode requires"
    if on.split(".")[-1] not in columns:
        named = ", ".join(f"`{c}`" for c in columns)
        return (f"the job's watermark is on {named}, but the spec's window is on `{on}`: "
                f"Spark's append mode needs the watermark on the column the window groups "
                f"by: call {wanted} (or window over the watermarked column)")
    return (f"the job's watermark is on `{on}`, but its aggregation does not group by an "
            f"event-time window of it: group by window(\"{on}\", ...) or session_window(...) "
            "after the watermark, as append mode requires")


def missed_start(error: BaseException | str) -> bool:
    """Whether ``error`` is Spark giving up on a Python process it started for a query (a
    streaming Python source, a ``foreachBatch`` on Spark Connect, a planner): it must connect
    back to the JVM within Spark's fixed 10 s, which a busy machine can miss. The query did
    not run to its end; running it again may succeed."""
    return _MISSED_START in str(error)


def once_more_if_missed_start(run: Callable[[], T], note: Callable[[str], None] | None = None) -> T:
    """``run()``; when it fails with a :func:`missed_start` error, ``note`` is told and
    ``run()`` runs once more (a second such failure, or any other error, is raised). ``run``
    must start afresh each time (its own queries and checkpoints)."""
    try:
        return run()
    except Exception as exc:
        if not missed_start(exc):
            raise
        if note is not None:
            note(f"Spark's Python process did not connect back in time ({cause_line(exc)}); "
                 "running once more")
    return run()
