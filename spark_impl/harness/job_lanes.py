"""A job's scenarios in lanes: several streaming queries side by side in one Spark session.

Spark's watermark is one per query, so a query holds scenarios one after another
(:func:`windtunnel.spark_impl.harness.user_job.shifted_plans`) and pays each of their micro-batches in
turn; a micro-batch is mostly fixed cost (planning, offset and commit logs, task launches, the
sink's callback), much of it waiting. Lanes run ``lanes`` such queries at once, each on its
own share of the scenarios (:func:`split`: about equal micro-batches per lane), each in a
thread of this process driving its query; results come back per lane, in order.

Starting a query costs more than a micro-batch: its scripted source runs in a Python process
Spark starts for that query, which must connect back to the JVM within 10 s. Many starting at
once on a busy machine miss that ("Python worker failed to connect back"), so at most
:data:`STARTING` queries start at a time (a query has started once its first micro-batch is
done, :class:`Gate`), and a query that failed to connect back is run once more.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.spark_impl.errors import missed_start

DEFAULT_LANES = 3
"""Queries side by side (docs/conformance.md, "The per-scenario floor", has the measurements)."""

STARTING = 2
"""Queries starting at once."""

POLL_S = 0.05

T = TypeVar("T")

Started = Callable[[Any], None]
"""Told the StreamingQuery once it is started; returns once its first micro-batch is done
(told None: a query that starts no Python process, released at once)."""

Task = Callable[[Started], T]
"""One query's work: builds and runs the query, telling ``started`` about it."""


def split(weights: Sequence[int], lanes: int) -> list[list[int]]:
    """The indexes of ``weights`` (each scenario's micro-batches) in at most ``lanes`` groups
    of about equal total (heaviest first, each to the lightest group), each group ascending;
    no empty groups. Raises InvalidSpec for ``lanes`` < 1."""
    if isinstance(lanes, bool) or not isinstance(lanes, int) or lanes < 1:
        raise InvalidSpec("lanes", lanes, "must be an integer >= 1", "give e.g. 8")
    groups: list[list[int]] = [[] for _ in range(min(lanes, len(weights)))]
    totals = [0] * len(groups)
    for index in sorted(range(len(weights)), key=lambda i: (-weights[i], i)):
        lightest = totals.index(min(totals))
        groups[lightest].append(index)
        totals[lightest] += max(weights[index], 1)
    return [sorted(g) for g in groups]


class Gate:
    """Lets at most ``slots`` queries start at once (see the module docstring)."""

    def __init__(self, slots: int = STARTING) -> None:
        self._slots = threading.Semaphore(slots)

    @contextmanager
    def starting(self) -> Iterator[Started]:
        """Holds a slot until the query told to the yielded callback has finished its first
        micro-batch (or stopped), or until the block ends."""
        self._slots.acquire()
        held = [True]

        def started(query: Any) -> None:
            while query is not None and query.isActive and query.lastProgress is None:
                time.sleep(POLL_S)
            if held[0]:
                held[0] = False
                self._slots.release()

        try:
            yield started
        finally:
            if held[0]:
                held[0] = False
                self._slots.release()


def run_lanes(lanes: Sequence[Sequence[Task[T]]], gate: Gate | None = None) -> list[list[T]]:
    """Each lane's tasks one after another, the lanes side by side in threads; per lane, the
    results in order. A task failing with a :func:`~windtunnel.spark_impl.errors.missed_start` error runs once more. After
    every lane has stopped, the first error (in lane order) is raised."""
    gate = gate or Gate()
    results: list[list[T]] = [[] for _ in lanes]
    errors: list[BaseException | None] = [None] * len(lanes)

    def lane(index: int) -> None:
        try:
            for task in lanes[index]:
                results[index].append(_attempt(task, gate))
        except BaseException as exc:  # re-raised in the caller's thread
            errors[index] = exc

    if len(lanes) == 1:
        lane(0)
    else:
        threads = [threading.Thread(target=lane, args=(i,), name=f"windtunnel-lane-{i}",
                                    daemon=True) for i in range(len(lanes))]
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():  # a timed wait: Ctrl-C reaches this thread at once
                thread.join(0.2)
    for error in errors:
        if error is not None:
            raise error
    return results


def _attempt(task: Task[T], gate: Gate) -> T:
    for attempt in (1, 2):
        with gate.starting() as started:
            try:
                return task(started)
            except InvalidSpec as exc:
                if attempt == 2 or not missed_start(exc):
                    raise
    raise AssertionError("unreachable")  # pragma: no cover
