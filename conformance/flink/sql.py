"""A user's Flink SQL job held to a spec: ``windtunnel check SPEC --flink-sql query.sql``.

The file holds two statements: a ``CREATE TABLE`` with a ``WATERMARK FOR`` clause (its
connector options are ignored: windtunnel feeds the scenario's events instead) and a query
over that table with a windowing TVF (``TUMBLE``, ``HOP``, ``CUMULATE`` (held to ``kind:
cumulate``), ``SESSION``). Each scenario becomes one branch of one job
(``SqlHarness.java``): the declared schema as a view of the scenario's events, the query
over it. Watermarks follow the declared expression, emitted after every row that raises
them. An event's fields are the table's columns (by name); the window's ``on`` field is fed
as epoch milliseconds (a ``TIMESTAMP(3)`` or ``TIMESTAMP_LTZ(3)`` column). Events without a
usable time are not fed (Flink SQL fails a job on a null rowtime).

The query's rows are the emissions: ``window_start`` and ``window_end`` give the window, the
``group_by`` columns the group (a dotted path by its last part), one column per aggregate
named as in the spec (and the ``aggregate_by`` columns). A row emitted on the final
watermark is ``end_of_input`` (partial), else ``close``. Flink SQL drops late rows without a
trace, so drops are not compared.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from windtunnel.conformance.flink.windows import Prepared
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.results import Emission, Output, WindowRef
from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.windows.driver import group_value

_CREATE = re.compile(
    r"^\s*CREATE\s+(?:TEMPORARY\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?`?([\w.]+)`?", re.I
)
OPTION = "--flink-sql"


@dataclass(frozen=True, slots=True)
class FlinkSql:
    """A Flink SQL file split into its ``CREATE TABLE`` (``ddl``, naming ``table``) and
    its query."""

    path: str
    ddl: str
    table: str
    query: str


def statements(text: str) -> list[str]:
    """``text`` split at semicolons outside quotes and comments; empty statements dropped."""
    out: list[str] = []
    current: list[str] = []
    quote: str | None = None
    lines = [re.sub(r"^\s*--.*$", "", line) for line in text.splitlines()]
    for char in "\n".join(lines):
        if quote is not None:
            quote = None if char == quote else quote
        elif char in "'`\"":
            quote = char
        elif char == ";":
            out.append("".join(current))
            current = []
            continue
        current.append(char)
    out.append("".join(current))
    return [s.strip() for s in out if s.strip()]


def load_sql(path: str) -> FlinkSql:
    """Read and split a Flink SQL file; InvalidSpec naming ``--flink-sql`` when it is not
    one ``CREATE TABLE ... WATERMARK FOR ...`` and one ``SELECT`` query."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidSpec(OPTION, path, f"cannot be read ({exc.strerror})",
                          "give the path of a .sql file") from None
    parts = statements(text)
    creates = [s for s in parts if _CREATE.match(s)]
    queries = [s for s in parts if re.match(r"^\s*(SELECT|WITH)\b", s, re.I)]
    fix = ("write one CREATE TABLE with a WATERMARK FOR clause and one SELECT over it, "
           "separated by ;")
    if len(creates) != 1 or len(queries) != 1 or len(parts) != 2:
        raise InvalidSpec(OPTION, path, f"has {len(creates)} CREATE TABLE and {len(queries)} "
                          f"queries among {len(parts)} statements", fix)
    if not re.search(r"\bWATERMARK\s+FOR\b", creates[0], re.I):
        raise InvalidSpec(OPTION, path, "its CREATE TABLE has no WATERMARK FOR clause",
                          "add e.g. WATERMARK FOR ts AS ts - INTERVAL '2' SECOND")
    match = _CREATE.match(creates[0])
    assert match is not None
    return FlinkSql(path, creates[0], match.group(1), queries[0])


def feed_lines(prepared: Prepared, on: str) -> list[str]:
    """The harness's ``E`` lines: each fed event's payload with its time as epoch ms."""
    if "." in on:
        raise InvalidSpec("window.on", on, f"{OPTION} feeds top-level fields only",
                          "window on a top-level field")
    lines = []
    for seq, payload in prepared.payloads.items():
        row = dict(payload)
        row[on] = prepared.times[seq]
        lines.append(f"E\t{prepared.sid}\t{seq}\t{json.dumps(row, default=str)}")
    return lines


def emissions_of(query: Query, records: Sequence[tuple[str, dict[str, Any]]], path: str) -> list[Output]:
    """The contract's emissions from the query's rows ``(reason, row)``."""
    out: list[Output] = []
    columns = [p.rsplit(".", 1)[-1] for p in query.group_by]
    for reason, record in records:
        for needed in ("window_start", "window_end", *columns, *query.aggregate_by,
                       *(a.name for a in query.aggregate or ())):
            if needed not in record:
                raise InvalidSpec(OPTION, path, f"its query returns no column {needed!r} "
                                  f"(it returns {', '.join(record)})",
                                  f"select {needed} (named as in the spec)")
        group = group_value(tuple(record[c] for c in columns))
        row = {name: record[name] for name in query.aggregate_by}
        for aggregation in query.aggregate or ():
            value = record[aggregation.name]
            row[aggregation.name] = float(value) if aggregation.function == "avg" and value is not None else value
        ref = WindowRef(int(record["window_start"]), int(record["window_end"]))
        out.append(Emission(ref, group, row, reason, None, 0, reason == "end_of_input"))
    return out
