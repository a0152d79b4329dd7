"""One table, three renderings: rich on a terminal, plain aligned text when piped, CSV.

On a terminal the table wraps to the terminal's width: the columns marked ``wrap`` (a
replay's ``row / message``, a comparison's profile cells and causes) fold, the others
keep their width. Piped, it is plain text no wider than :data:`PLAIN_WIDTH` columns
where the unwrapped columns allow: a wrapped cell continues on the next lines (the other
cells left blank there), and a ``note`` column (a comparison's causes) that would not fit
moves under its row as an indented ``header: text`` line. Plain output is stable for
scripts and golden files.
"""

from __future__ import annotations

import csv
import io
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

import click

from windtunnel.oracle.model.errors import InvalidSpec

PLAIN_WIDTH = 120
"""The widest a plain table gets when its wrapping columns can shrink enough."""
MIN_WRAP_WIDTH = 16
"""By default a wrapping column never gets narrower than this (or its header)."""
GAP = "  "


@dataclass(frozen=True, slots=True)
class Table:
    """``headers``, ``rows`` of text cells (one per header), the indexes of the columns
    that may wrap (``wrap``, never narrower than ``min_wrap``) and whether plain text may
    print the last column under its row instead (``note``)."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    wrap: tuple[int, ...] = ()
    note: bool = False
    min_wrap: int = MIN_WRAP_WIDTH

    def __post_init__(self) -> None:
        for index, row in enumerate(self.rows):
            if len(row) != len(self.headers):
                raise InvalidSpec(
                    f"rows[{index}]", row, f"has {len(row)} cells for {len(self.headers)} headers",
                    "give one cell per header",
                )
        for column in self.wrap:
            if not 0 <= column < len(self.headers):
                raise InvalidSpec("wrap", column, "is not a column index", "give 0..len(headers)-1")


def plain(table: Table, width: int = PLAIN_WIDTH) -> str:
    """Aligned text, header underlined with dashes, lines right-stripped, wrapping columns
    narrowed (down to :data:`MIN_WRAP_WIDTH`) so that lines fit ``width`` where possible."""
    widths = _widths(table, width)
    if table.note and sum(widths) + len(GAP) * (len(widths) - 1) > width:
        return _with_notes(table, width)
    rows = [[_lines(cell, widths[i], i in table.wrap) for i, cell in enumerate(row)] for row in table.rows]
    out = [_line(table.headers, widths), GAP.join("-" * w for w in widths)]
    for row in rows:
        for k in range(max(len(cell) for cell in row)):
            out.append(_line([cell[k] if k < len(cell) else "" for cell in row], widths))
    return "\n".join(out) + "\n"


def _with_notes(table: Table, width: int) -> str:
    """The table without its last column, each row's last cell under it (when not empty)."""
    inner = Table(
        table.headers[:-1],
        tuple(row[:-1] for row in table.rows),
        tuple(i for i in table.wrap if i < len(table.headers) - 1),
        min_wrap=table.min_wrap,
    )
    widths = _widths(inner, width)
    indent = " " * (widths[0] + len(GAP))
    label = table.headers[-1].replace("(", "").replace(")", "")
    out = [_line(inner.headers, widths), GAP.join("-" * w for w in widths)]
    for row in table.rows:
        cells = [_lines(cell, widths[i], i in inner.wrap) for i, cell in enumerate(row[:-1])]
        for k in range(max(len(cell) for cell in cells)):
            out.append(_line([cell[k] if k < len(cell) else "" for cell in cells], widths))
        if row[-1]:
            out += textwrap.wrap(
                f"{label}: {row[-1]}", width, initial_indent=indent,
                subsequent_indent=indent + "  ", break_on_hyphens=False,
            )
    return "\n".join(out) + "\n"


def _widths(table: Table, width: int) -> list[int]:
    natural = [max([len(h), *(len(r[i]) for r in table.rows)]) for i, h in enumerate(table.headers)]
    fixed = sum(w for i, w in enumerate(natural) if i not in table.wrap)
    room = width - fixed - len(GAP) * (len(natural) - 1)
    wrapping = sorted(table.wrap, key=lambda i: natural[i])
    widths = list(natural)
    for done, column in enumerate(wrapping):  # narrow columns keep their width first
        share = room // (len(wrapping) - done)
        floor = max(table.min_wrap, len(table.headers[column]))
        widths[column] = max(floor, min(natural[column], share))
        room -= widths[column]
    return widths


def _lines(cell: str, width: int, wraps: bool) -> list[str]:
    if not wraps or len(cell) <= width:
        return [cell]
    return textwrap.wrap(cell, width, break_on_hyphens=False) or [""]


def _line(cells: Sequence[str], widths: Sequence[int]) -> str:
    return GAP.join(cell.ljust(w) for cell, w in zip(cells, widths, strict=True)).rstrip()


def csv_text(table: Table) -> str:
    """The headers and every cell in full, as CSV (RFC 4180 quoting, ``\\n`` line ends)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.headers)
    writer.writerows(table.rows)
    return buffer.getvalue()


def rich_table(table: Table) -> object:
    """The table as a ``rich.table.Table``: wrapping columns fold, the others do not wrap;
    cells are plain text (brackets are not markup)."""
    from rich import box
    from rich.table import Table as RichTable
    from rich.text import Text

    out = RichTable(box=box.SIMPLE_HEAD, show_lines=False, pad_edge=False, collapse_padding=True)
    for index, header in enumerate(table.headers):
        if index in table.wrap:
            out.add_column(header, overflow="fold", ratio=1, min_width=table.min_wrap)
        else:  # keeps its width unless the terminal is too narrow even for that
            out.add_column(header, overflow="fold")
    for row in table.rows:
        out.add_row(*(Text(cell) for cell in row))
    return out


def is_terminal(stream: IO[str] | None = None) -> bool:
    """Whether ``stream`` (stdout by default) is a terminal."""
    stream = stream if stream is not None else sys.stdout
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def echo_table(table: Table, fmt: str = "table") -> None:
    """Print ``table`` as ``fmt``: ``table`` (rich on a terminal, else plain) or ``csv``."""
    if fmt == "csv":
        click.echo(csv_text(table), nl=False)
    elif is_terminal():
        from rich.console import Console

        Console(highlight=False).print(rich_table(table))
    else:
        click.echo(plain(table), nl=False)
