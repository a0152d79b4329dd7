"""Results: ``Emission`` and ``Drop`` values, and a ``Result`` that writes them out.

Their fields are exactly the contract's JSON lines fields. Windows are half-open
``[start_ms, end_ms)`` for fixed windows; trailing and session windows carry their
own bounds; count windows carry event offsets ``[start_offset, end_offset)``. An emission
of a profile with triggered panes (``beam``) also carries its :class:`Pane`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.extras import requires_extra

EMIT_REASONS = frozenset(
    {"close", "idle_timeout", "end_of_input", "event", "update", "count", "timer", "complete"}
)
DROP_REASONS = frozenset({"late", "null_time", "not_a_time"})


@dataclass(frozen=True, slots=True)
class WindowRef:
    """A window's identity in output: times and/or event offsets (all optional, not all None)."""

    start_ms: int | None = None
    end_ms: int | None = None
    start_offset: int | None = None
    end_offset: int | None = None

    def __post_init__(self) -> None:
        if self.start_ms is None and self.start_offset is None:
            raise InvalidSpec(
                "window", self, "needs start_ms or start_offset", "give window bounds"
            )

    def to_json(self) -> dict[str, int]:
        out: dict[str, int] = {}
        if self.start_offset is not None and self.end_offset is not None:
            out["start_offset"] = self.start_offset
            out["end_offset"] = self.end_offset
        if self.start_ms is not None and self.end_ms is not None:
            out["start_ms"] = self.start_ms
            out["end_ms"] = self.end_ms
        return out


PANE_TIMINGS = ("early", "on_time", "late")
"""A pane's timing: before the watermark passed the window's end, the first pane after it
(fired by the watermark), or any later pane."""


@dataclass(frozen=True, slots=True)
class Pane:
    """Which firing of its window an emission is (Beam's ``PaneInfo``) and its output time.

    ``index`` counts the window's panes from 0; ``nonspeculative_index`` counts the panes
    after the watermark passed the window's end (-1 for an early pane); ``first`` is
    ``index == 0``; ``last`` says the window's trigger finished; ``timestamp_ms`` is the
    output's event time (the timestamp combiner's). ``fired_by`` says which part of the
    trigger fired and why (for explanations; not part of the pane's identity, never
    compared). Raises InvalidSpec for an unknown timing or a negative index.
    """

    timing: str
    index: int
    nonspeculative_index: int
    first: bool
    last: bool
    timestamp_ms: int
    fired_by: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.timing not in PANE_TIMINGS:
            raise InvalidSpec("pane.timing", self.timing, "unknown timing",
                              f"use one of {', '.join(PANE_TIMINGS)}")
        if self.index < 0 or self.nonspeculative_index < -1:
            raise InvalidSpec("pane.index", self.index, "must not be negative",
                              "count panes from 0 (nonspeculative_index -1 when early)")

    def to_json(self) -> dict[str, Any]:
        return {
            "timing": self.timing,
            "index": self.index,
            "nonspeculative_index": self.nonspeculative_index,
            "first": self.first,
            "last": self.last,
            "timestamp_ms": self.timestamp_ms,
        }

    def describe(self) -> str:
        """``pane 2 late, last, at 9`` (the flags that are set)."""
        flags = "".join(f", {n}" for n, on in (("first", self.first), ("last", self.last)) if on)
        return f"pane {self.index} {self.timing}{flags}, at {self.timestamp_ms}"


@dataclass(frozen=True, slots=True)
class Emission:
    """One output row of one window.

    ``reason`` says what emitted it (``close``, ``idle_timeout``, ``end_of_input``,
    ``event``, ...); ``after_seq`` is the seq of the last input event consumed before
    it (None if none); ``wall_ms`` the wall clock then; ``partial`` is true when the
    window was emitted before its event-time close point (it may miss events).
    """

    window: WindowRef
    group: Any
    row: Mapping[str, Any]
    reason: str
    after_seq: int | None
    wall_ms: int
    partial: bool = False
    type: str = field(default="emit", init=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "emit",
            "window": self.window.to_json(),
            "group": self.group,
            "row": dict(self.row),
            "reason": self.reason,
            "after_seq": self.after_seq,
            "wall_ms": self.wall_ms,
            "partial": self.partial,
        }


@dataclass(frozen=True, slots=True)
class PaneEmission(Emission):
    """An emission of a profile whose windows fire in panes (``beam``): an
    :class:`Emission` and its :class:`Pane` (JSON: a ``pane`` object after ``partial``)."""

    pane: Pane | None = None

    def to_json(self) -> dict[str, Any]:
        data = Emission.to_json(self)
        if self.pane is not None:
            data["pane"] = self.pane.to_json()
        return data


def pane_of(output: object) -> Pane | None:
    """The pane of an emission of a profile with panes, else None."""
    return output.pane if isinstance(output, PaneEmission) else None


@dataclass(frozen=True, slots=True)
class Drop:
    """An input event that reached no window, with the reason and the windows it missed.

    ``group`` is the event's group value where known (None also when ungrouped); JSON
    carries it only when not None, so consumers of the contract's drop line are unaffected.
    """

    seq: int
    reason: str
    windows: tuple[WindowRef, ...] = ()
    message: str = ""
    group: Any = None
    type: str = field(default="drop", init=False)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": "drop",
            "seq": self.seq,
            "reason": self.reason,
            "windows": [w.to_json() for w in self.windows],
            "message": self.message,
        }
        if self.group is not None:
            data["group"] = self.group
        return data


Output = Emission | Drop


def to_jsonl_line(output: Output) -> str:
    """One compact JSON line (no newline) with the contract's field order."""
    return json.dumps(output.to_json(), separators=(", ", ": "), default=str)


INT_COLUMNS = ("start_ms", "end_ms", "start_offset", "end_offset", "after_seq", "wall_ms", "seq")
"""Result columns holding integers (nullable ``Int64`` in :meth:`Result.to_pandas`)."""


@dataclass(frozen=True, slots=True)
class Result:
    """Everything a run produced, in output order."""

    outputs: tuple[Output, ...]

    @property
    def emissions(self) -> list[Emission]:
        return [o for o in self.outputs if isinstance(o, Emission)]

    @property
    def drops(self) -> list[Drop]:
        return [o for o in self.outputs if isinstance(o, Drop)]

    def __iter__(self) -> Iterator[Output]:
        return iter(self.outputs)

    def __len__(self) -> int:
        return len(self.outputs)

    def to_jsonl(self) -> str:
        """All outputs as JSON lines, each ending in a newline."""
        return "".join(to_jsonl_line(o) + "\n" for o in self.outputs)

    def write_jsonl(self, stream: IO[str]) -> None:
        for output in self.outputs:
            stream.write(to_jsonl_line(output) + "\n")

    def to_pandas(self) -> Any:
        """A pandas DataFrame, one row per output: type, start_ms, end_ms, start_offset,
        end_offset, group, the row's columns prefixed ``row.``, reason, after_seq,
        wall_ms, partial, seq, message (pandas comes with the ``spark`` extra)."""
        with requires_extra("spark", "Result.to_pandas()"):
            import pandas as pd

        records = [flat_record(o) for o in self.outputs]
        columns = [
            "type",
            "start_ms",
            "end_ms",
            "start_offset",
            "end_offset",
            "group",
            "reason",
            "after_seq",
            "wall_ms",
            "partial",
            "seq",
            "message",
        ]
        extra = sorted({k for r in records for k in r if k not in columns})
        frame = pd.DataFrame.from_records(records, columns=columns + extra)
        for name in INT_COLUMNS:
            frame[name] = frame[name].astype("Int64")
        return frame


def flat_record(output: Output) -> dict[str, Any]:
    """A flat dict of one output (used for DataFrames and tables)."""
    data = output.to_json()
    record: dict[str, Any] = {"type": data["type"], "reason": data["reason"]}
    if isinstance(output, Emission):
        record.update(output.window.to_json())
        record["group"] = output.group
        record["after_seq"] = output.after_seq
        record["wall_ms"] = output.wall_ms
        record["partial"] = output.partial
        for key, value in output.row.items():
            record[f"row.{key}"] = value
        pane = pane_of(output)
        if pane is not None:
            for key, value in pane.to_json().items():
                record[f"pane.{key}"] = value
    else:
        record["seq"] = output.seq
        record["group"] = output.group
        record["message"] = output.message
        if output.windows:
            record.update(output.windows[0].to_json())
    return record


def outputs_from_json(lines: Iterable[Mapping[str, Any]]) -> list[Output]:
    """Rebuild outputs from their JSON objects (as written by :func:`to_jsonl_line`)."""
    out: list[Output] = []
    for data in lines:
        if data["type"] == "emit":
            fields = {
                "window": WindowRef(**data["window"]),
                "group": data["group"],
                "row": data["row"],
                "reason": data["reason"],
                "after_seq": data["after_seq"],
                "wall_ms": data["wall_ms"],
                "partial": data["partial"],
            }
            if data.get("pane") is not None:
                out.append(PaneEmission(**fields, pane=Pane(**data["pane"])))
            else:
                out.append(Emission(**fields))
        else:
            out.append(
                Drop(
                    seq=data["seq"],
                    reason=data["reason"],
                    windows=tuple(WindowRef(**w) for w in data["windows"]),
                    message=data.get("message", ""),
                    group=data.get("group"),
                )
            )
    return out
