"""Progress of a long command on stderr: a rich bar on a terminal, lines when piped.

On a terminal (stderr is a TTY) a rich progress bar shows the count, the rate and the
time left; notes print above it. Piped or redirected, each step prints one line,
``LABEL: DONE/TOTAL UNIT (P%), RATE UNIT/s, ETA 1m20s`` (``/min`` for slow units such as
scenarios), at most one line per ``every_s`` seconds plus the last, so a CI log shows the
command moving. Nothing goes to stdout, which stays the command's result.

The time left is the units left at the rate so far. With ``warm_up`` the first step is
start-up (a Spark session, a JVM): it shows no estimate, and later ones count only the steps
after it, so the first estimate is not the start-up's cost spread over the whole run.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import IO, Any

import click


def duration_text(seconds: float) -> str:
    """``45s``, ``12m05s``, ``3h20m``, ``4d3h``, ``42y`` (rounded down)."""
    total = max(0, int(seconds))
    if total < 60:
        return f"{total}s"
    if total < 3600:
        return f"{total // 60}m{total % 60:02d}s"
    if total < 86_400:
        return f"{total // 3600}h{total % 3600 // 60:02d}m"
    if total < 365 * 86_400:
        return f"{total // 86_400}d{total % 86_400 // 3600}h"
    return f"{total // (365 * 86_400):,}y"


def is_terminal(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(callable(isatty) and isatty())


class Progress:
    """Counts ``unit`` towards ``total`` (None: unknown) for ``label``; use as a context
    manager. ``per_minute`` states the rate per minute instead of per second; ``every_s``
    spaces the piped lines; ``enabled`` False prints nothing; ``warm_up``: the first step
    holds the start-up (no time left is estimated from it); ``clock``: seconds, monotonic."""

    def __init__(
        self,
        label: str,
        total: int | None,
        unit: str,
        *,
        per_minute: bool = False,
        every_s: float = 0.0,
        enabled: bool = True,
        stream: IO[str] | None = None,
        warm_up: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.per_minute = per_minute
        self.every_s = every_s
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.warm_up = warm_up
        self.clock = clock
        self.done = 0
        self._started = clock()
        self._warm: tuple[int, float] | None = None  # (done, time) after the first step
        self._last_line = float("-inf")
        self._pending = False
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Progress:
        self._started = self.clock()
        if self.enabled and is_terminal(self.stream):
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
            )
            from rich.progress import (
                Progress as RichProgress,
            )

            self._bar = RichProgress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"), TimeElapsedColumn(),
                TextColumn("{task.fields[eta]}"), console=Console(file=self.stream),
                transient=False, get_time=self.clock,
            )  # fmt: skip
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total, rate="", eta="")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        elif self._pending and exc[0] is None:
            self._line()

    def rate(self) -> float:
        """Units per second (per minute with ``per_minute``) so far."""
        seconds = self.clock() - self._started
        per_s = self.done / seconds if seconds > 0 else 0.0
        return per_s * 60 if self.per_minute else per_s

    def eta_s(self) -> float | None:
        """Seconds left at the rate so far, after the start-up step with ``warm_up`` (None:
        total or rate unknown, or only the start-up step done)."""
        done, since = (0, self._started) if not self.warm_up else self._warm or (0, 0.0)
        if self.total is None or (self.warm_up and self._warm is None) or self.done <= done:
            return None
        seconds = self.clock() - since
        return max(0.0, (self.total - self.done) * seconds / (self.done - done))

    def _eta_text(self) -> str:
        eta = self.eta_s()
        return f"ETA {duration_text(eta)}" if eta is not None and self.done < (self.total or 0) else ""

    def _rate_text(self) -> str:
        rate = self.rate()
        shown = f"{rate:,.0f}" if rate >= 10 else f"{rate:.1f}"
        return f"{shown} {self.unit}/{'min' if self.per_minute else 's'}"

    def _line(self) -> None:
        self._pending = False
        self._last_line = self.clock()
        if self.total:
            count = f"{self.done:,}/{self.total:,} {self.unit} ({100 * self.done // self.total}%)"
        else:
            count = f"{self.done:,} {self.unit}"
        eta = self._eta_text()
        tail = f", {eta}" if eta else ""
        elapsed = duration_text(self.clock() - self._started)
        click.echo(f"{self.label}: {count} in {elapsed}, {self._rate_text()}{tail}", file=self.stream)

    def status(self) -> str:
        """``25%, 196 rows/s, ETA 1m17s`` (the parts that are known)."""
        parts = [f"{100 * self.done // self.total}%"] if self.total else []
        parts.append(self._rate_text())
        eta = self._eta_text()
        if eta:
            parts.append(eta)
        return ", ".join(parts)

    def advance(self, n: int, line: str | None = None) -> None:
        """``n`` more units done: the bar moves, or a line prints (spaced by ``every_s``).
        ``line`` (one per step, e.g. a micro-batch) prints above the bar, or piped with
        :meth:`status` appended, every time."""
        self.done += n
        if self._warm is None:
            self._warm = (self.done, self.clock())
        if not self.enabled:
            return
        if self._bar is not None:
            if line is not None:
                self._bar.console.print(line, markup=False, highlight=False)
            self._bar.update(self._task, advance=n, rate=self._rate_text(), eta=self._eta_text())
            return
        if line is not None:
            click.echo(f"{line}; {self.status()}", file=self.stream)
            return
        self._pending = True
        finished = self.total is not None and self.done >= self.total
        if finished or self.clock() - self._last_line >= self.every_s:
            self._line()

    def note(self, text: str) -> None:
        """A line of its own (above the bar on a terminal)."""
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.console.print(text, markup=False, highlight=False)
        else:
            click.echo(text, file=self.stream)
