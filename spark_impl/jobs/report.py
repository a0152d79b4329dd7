"""What a job run did: the path it ran on, its micro-batches and what it left."""

from __future__ import annotations

from dataclasses import dataclass

from windtunnel.spark_impl.jobs.query_progress import BatchProgress


@dataclass(frozen=True, slots=True)
class JobReport:
    """What a job run did: the ``path`` it ran on (``production``, ``general`` or ``stock``:
    :func:`~windtunnel.spark_impl.jobs.path.choose_path`), its micro-batches with data, and
    totals."""

    path: str
    batches: tuple[BatchProgress, ...] = ()
    checkpoint: str | None = None
    """Where the run's state is kept (None: a temporary checkpoint, removed after the run)."""
    timed_out: bool = False
    """True when ``timeout_s`` stopped the query."""
    open_windows: int | None = None
    """Windows not emitted when the run stopped (their state is in the checkpoint), where
    the run can count them (the production and stock paths); None: not counted."""

    @property
    def rows_in(self) -> int:
        return sum(b.rows_in for b in self.batches)

    @property
    def rows_out(self) -> int:
        return sum(b.rows_out for b in self.batches)
