"""State of the foreachBatch exact path (:mod:`windtunnel.spark_impl.batch_exact`), versioned
by micro-batch id.

Version ``N`` is the state after micro-batch ``N``: one file ``<directory>/<N>.state``
(a pickled :class:`~windtunnel.spark_impl.fast_state.FastState` and the number of output
rows that micro-batch wrote), written to a temporary name and renamed, so a reader sees a
whole version or none. Micro-batch ``N`` starts from the newest version below ``N``; Spark
replays an uncommitted micro-batch with the same id after a restart, so the replay reads
the same version as the first attempt and overwrites version ``N``: nothing lost, nothing
counted twice. ``rows/<N>`` keeps each micro-batch's output row count and the input rows its
step read (``"<out> <in>"``; older checkpoints hold the output count alone). Versions below ``N - 1`` are deleted once ``N`` is written (the last two
stay, so micro-batch ``N`` can be replayed).

The process that runs the micro-batches (the driver, or a Spark Connect server's
foreachBatch worker) keeps the version it wrote in memory too, so the next micro-batch
skips reading the file.
"""

from __future__ import annotations

import os
import pickle
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SUFFIX = ".state"
_VERSION = re.compile(r"^(\d+)\.state$")
_CACHE: dict[str, tuple[int, Any]] = {}
"""Per state directory: (version, state) last written by this process."""


@dataclass(frozen=True, slots=True)
class Version:
    """One saved version: the micro-batch id, its state, its output row count and the input
    rows its step read (None: not known)."""

    batch_id: int
    state: Any
    rows_out: int
    rows_in: int | None = None

    def __post_init__(self) -> None:
        if self.batch_id < 0 or self.rows_out < 0 or (self.rows_in is not None and self.rows_in < 0):
            raise ValueError(
                f"batch_id={self.batch_id}, rows_out={self.rows_out} and rows_in={self.rows_in} must be >= 0"
            )


class BatchStateStore:
    """State versions by micro-batch id in ``directory`` (created when missing)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def versions(self) -> list[int]:
        """Saved micro-batch ids, ascending."""
        if not self.directory.is_dir():
            return []
        found = (_VERSION.match(p.name) for p in self.directory.iterdir())
        return sorted(int(m.group(1)) for m in found if m)

    def before(self, batch_id: int) -> Version | None:
        """The newest version below ``batch_id`` (the state micro-batch ``batch_id`` starts
        from), or None before the first. The in-memory copy is handed out at most once:
        the caller changes it in place."""
        older = [v for v in self.versions() if v < batch_id]
        if not older:
            return None
        newest = older[-1]
        cached = _CACHE.pop(str(self.directory), None)
        if cached is not None and cached[0] == newest:
            return Version(newest, cached[1], self.rows_out(newest))
        return self.read(newest)

    def read(self, batch_id: int) -> Version:
        """Version ``batch_id`` from its file."""
        with open(self._path(batch_id), "rb") as handle:
            state, rows_out = pickle.load(handle)
        return Version(batch_id, state, rows_out)

    def rows_out(self, batch_id: int) -> int:
        """Output rows micro-batch ``batch_id`` wrote (a small file kept for every micro-batch,
        also after its state version is deleted). Raises FileNotFoundError before it ran."""
        return self.counts(batch_id)[0]

    def counts(self, batch_id: int) -> tuple[int, int | None]:
        """(output rows, input rows the step read or None) of micro-batch ``batch_id``.
        Raises FileNotFoundError before it ran."""
        words = (self.directory / "rows" / str(batch_id)).read_text().split()
        return int(words[0]), int(words[1]) if len(words) > 1 else None

    def latest(self) -> Version | None:
        """The newest version, or None."""
        versions = self.versions()
        return self.read(versions[-1]) if versions else None

    def save(self, version: Version) -> None:
        """Write ``version`` (replacing one with the same id) and delete versions older than
        the one before it."""
        self.directory.mkdir(parents=True, exist_ok=True)
        final = self._path(version.batch_id)
        temporary = final.with_name(f".{final.name}.{os.getpid()}.tmp")
        with open(temporary, "wb") as handle:
            pickle.dump((version.state, version.rows_out), handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, final)
        rows = self.directory / "rows"
        rows.mkdir(exist_ok=True)
        counts = str(version.rows_out) + ("" if version.rows_in is None else f" {version.rows_in}")
        (rows / str(version.batch_id)).write_text(counts)
        for old in self.versions():
            if old < version.batch_id - 1:
                self._path(old).unlink(missing_ok=True)
        _CACHE[str(self.directory)] = (version.batch_id, version.state)

    def size_bytes(self) -> int:
        """Bytes of the newest version file (0 without one)."""
        versions = self.versions()
        return self._path(versions[-1]).stat().st_size if versions else 0

    def _path(self, batch_id: int) -> Path:
        return self.directory / f"{batch_id}{SUFFIX}"


def forget_cached(directory: str | Path) -> None:
    """Drop this process's in-memory copy for ``directory`` (tests: simulate a restart)."""
    _CACHE.pop(str(Path(directory)), None)
