"""The ``tenzir`` target: scenarios run on the real Tenzir engine (the ``[tenzir]`` extra).

Scenarios with one query share one TQL pipeline (:mod:`windtunnel.conformance.tql`):
one ``tenzir`` process per query and call, so a call with 50 scenarios costs about as
much as one. Outputs become the contract's emissions:

- the window: fixed and trailing windows from ``$window.start``/``$window.end``; a
  session from its members' first and last event times (Tenzir gives only
  ``$window.start``); a count window from ``$window.begin``/``$window.finish``;
- the group: the scenario's ``group_by`` value of the window's key;
- the row: the ``summarize`` columns (``window_start``/``window_end`` from the window),
  or, pass-through, each member event's payload as the scenario gave it;
- reason and ``partial``: Tenzir does not say why a window closed. The target names
  it from the stream: ``close`` when the key's clock (its largest event time) reached
  the window's close point, else ``end_of_input`` (partial); a session that reached its
  event cap ``close``; a full count window ``count``; trailing windows ``close``;
  pass-through deliveries of fixed and count windows ``event``.

Drops: Tenzir reports late events only as a count in a warning. Every window's members
are collected (``__seqs``), so an event with a usable time that no window received was
dropped as ``late``; a null ``on`` is ``null_time``, a value that is not a time
``not_a_time``. The windows a late drop names are the ones it missed: its fixed target
windows, or the session it would have joined.

The target reports no timing (wall clock and micro-batches are not Tenzir's).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from windtunnel.conformance.targets.base import TargetEntry, TargetRun
from windtunnel.conformance.tql import (
    EventInfo,
    Prepared,
    avg_columns,
    ms_of_iso,
    paced,
    paced_lines,
    pipeline,
    prepare,
)
from windtunnel.oracle.model.errors import EngineUnavailable
from windtunnel.oracle.model.results import Drop, Emission, Output, WindowRef
from windtunnel.oracle.model.spec import (
    CountWindows,
    FixedWindows,
    Query,
    SessionWindows,
    TrailingCountWindows,
    TrailingWindows,
)
from windtunnel.oracle.scenario import Scenario

TIMEOUT_S = 300.0
"""A pipeline run that takes longer than this is stopped (an engine hang is an error)."""


def tenzir_binary() -> str | None:
    """The ``tenzir`` executable: beside this Python (the extra's venv), else on PATH."""
    beside = Path(sys.executable).with_name("tenzir")
    if beside.exists():
        return str(beside)
    return shutil.which("tenzir")


def tenzir_version(binary: str) -> str:
    """The engine's version as ``tenzir version`` prints it (``v6.20.0``)."""
    done = subprocess.run(
        [binary, "version | write_ndjson"], capture_output=True, text=True, timeout=60
    )
    try:
        return str(json.loads(done.stdout.splitlines()[0])["version"])
    except (IndexError, KeyError, ValueError):
        return "unknown"


def run_pipeline(binary: str, text: str, lines: Sequence[str]) -> list[dict[str, Any]]:
    """Run ``text`` with ``lines`` on stdin; the NDJSON records it wrote.

    Raises EngineUnavailable when the engine fails (its first error line quoted).
    """
    env = dict(os.environ, TENZIR_TQL2="true")
    try:
        done = subprocess.run(
            [binary, text],
            input="\n".join(lines) + "\n",
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            env=env,
        )
    except subprocess.TimeoutExpired:
        raise EngineUnavailable(
            f"tenzir did not finish within {TIMEOUT_S:.0f} s; run fewer scenarios per call "
            "(--batch-size)"
        ) from None
    errors = [line for line in done.stderr.splitlines() if line.startswith("error")]
    if done.returncode != 0 or errors:
        first = errors[0] if errors else done.stderr.strip().splitlines()[-1:]
        raise EngineUnavailable(
            f"tenzir failed (exit {done.returncode}): {first}; the pipeline was:\n{text}"
        )
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


@dataclass(frozen=True, slots=True)
class TenzirTarget:
    """The real engine; reports drops (from the member lists), no timing."""

    binary: str
    name: str = "tenzir"
    reports_drops: bool = True
    reports_timing: bool = False

    def run_many(self, scenarios: Sequence[Scenario]) -> list[TargetRun]:
        by_query: dict[str, list[int]] = defaultdict(list)
        texts: dict[str, str] = {}
        for index, scenario in enumerate(scenarios):
            text = pipeline(scenario.query)
            texts[text] = text
            by_query[text].append(index)
        runs: list[TargetRun | None] = [None] * len(scenarios)
        for text, indices in by_query.items():
            prepared = {sid: prepare(scenarios[sid], sid) for sid in indices}
            pace = paced(scenarios[indices[0]].query)
            if pace:
                lines = paced_lines([prepared[sid] for sid in indices])
            else:
                lines = [line for sid in indices for line in prepared[sid].lines]
            records = run_pipeline(self.binary, text, lines)
            per: dict[int, list[dict[str, Any]]] = defaultdict(list)
            for record in records:
                per[int(record["__g"]["s"])].append(record)
            timing = max((prepared[sid].end_wall_ms for sid in indices), default=0) if pace else None
            for sid in indices:
                outputs = outputs_of(scenarios[sid].query, prepared[sid], per[sid], timing)
                runs[sid] = TargetRun(tuple(outputs))
        return [run for run in runs if run is not None]


def tenzir_target(spark: Any = None) -> TenzirTarget:
    """The ``tenzir`` target; raises EngineUnavailable when the engine is not installed."""
    binary = tenzir_binary()
    if binary is None:
        raise EngineUnavailable(
            "the tenzir engine is not installed; install the extra: "
            'pip install "windtunnel[tenzir]"'
        )
    return TenzirTarget(binary)


# --- outputs ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Window:
    """One window of one key as the engine emitted it (rows of one summarize or the
    pass-through events)."""

    group_index: int
    raw: dict[str, Any]
    rows: list[dict[str, Any]]
    seqs: list[int]


def _windows(
    records: Sequence[dict[str, Any]], passthrough: bool, one_row_each: bool
) -> list[_Window]:
    """Records grouped into windows: a window is a (key, ``$window``) pair; with
    ``one_row_each`` (a ``summarize`` without ``aggregate_by``) every record is a window
    of its own (sessions of one key can share a start: events at one time past a cap)."""
    found: dict[str, _Window] = {}
    for number, record in enumerate(records):
        raw = record["__w"]
        ident = json.dumps([record["__g"]["g"], raw, number if one_row_each else 0], sort_keys=True)
        window = found.get(ident)
        if window is None:
            window = found[ident] = _Window(int(record["__g"]["g"]), raw, [], [])
        if passthrough:
            window.seqs.append(int(record["__seq"]))
            window.rows.append(record)
        else:
            window.seqs.extend(int(s) for s in record["__seqs"])
            window.rows.append(record)
    return list(found.values())


IDLE_MARGIN_MS = 100
"""In a paced run, a window not closed by its clock and emitted at least this long before
the run's end wall time was force-closed by ``idle_timeout``; later ones were flushed at
the end. Events that arrived up to half of it after the emission count as seen by then."""


def _emitted(record: dict[str, Any]) -> int:
    """When a paced run emitted ``record`` (``__e``, epoch ms)."""
    return ms_of_iso(str(record["__e"]))


def outputs_of(
    query: Query,
    prepared: Prepared,
    records: Sequence[dict[str, Any]],
    pace: int | None = None,
) -> list[Output]:
    """The contract's outputs of one scenario from the engine's records. ``pace``, for a
    paced run: the run's end wall time; a window's reason then follows the clock of the
    events that had arrived when it was emitted, and one emitted well before the end was
    force-closed (``idle_timeout``)."""
    spec = query.window
    passthrough = query.aggregate is None
    events = {info.seq: info for info in prepared.events}
    clock: dict[int, int] = {}
    for info in prepared.events:
        if info.t_ms is not None:
            clock[info.group_index] = max(clock.get(info.group_index, info.t_ms), info.t_ms)
    out: list[Output] = []
    received: set[int] = set()
    windows = _windows(records, passthrough, not passthrough and not query.aggregate_by)
    latest: dict[int, int] = {}
    for window in windows:
        if "start" in window.raw and window.raw["start"] is not None:
            start = ms_of_iso(window.raw["start"])
            latest[window.group_index] = max(latest.get(window.group_index, start), start)
    walls = dict(zip((info.seq for info in prepared.events), prepared.walls, strict=False))
    for window in windows:
        received.update(window.seqs)
        later = "start" in window.raw and (
            latest[window.group_index] > ms_of_iso(window.raw["start"])
            or _followed(window, windows)
        )
        key_clock = clock.get(window.group_index)
        emitted_wall = None
        if pace is not None and window.rows and "__e" in window.rows[0] and window.seqs:
            first_row = window.rows[0]
            arrived = first_row.get("__arrived") or max(str(r["__a"]) for r in window.rows)
            latest_wall = max(walls[q] for q in window.seqs)
            emitted_wall = latest_wall + _emitted(first_row) - ms_of_iso(str(arrived))
            seen = emitted_wall + IDLE_MARGIN_MS // 2  # events that had arrived by then
            times = [i.t_ms for i in prepared.events if i.group_index == window.group_index
                     and i.t_ms is not None and walls[i.seq] <= seen]
            key_clock = max(times, default=None)
            later = "start" in window.raw and any(
                other.group_index == window.group_index and other.seqs and other is not window
                and ms_of_iso(other.raw["start"]) >= ms_of_iso(window.raw["start"])
                and min(other.seqs) > max(window.seqs, default=-1)
                and min(walls[q] for q in other.seqs) <= seen
                for other in windows
            )
        ref, reason, partial = _judged(spec, window, events, key_clock, later, passthrough)
        if (
            reason == "end_of_input" and emitted_wall is not None and pace is not None
            and emitted_wall < pace - IDLE_MARGIN_MS
        ):
            reason = "idle_timeout"
        group = prepared.groups[window.group_index]
        if passthrough:
            for seq in window.seqs:
                row = dict(events[seq].payload)
                out.append(Emission(ref, group, row, reason, None, 0, partial))
            continue
        for record in window.rows:
            out.append(Emission(ref, group, _row(query, record, ref), reason, None, 0, partial))
    out.extend(_drops(spec, prepared, received))
    return out


def _followed(window: _Window, windows: Sequence[_Window]) -> bool:
    """Whether another window of the same key and start holds later events (sessions cut by
    a cap at one timestamp: the earlier ones were closed by the cap, not by the input's end)."""
    if not window.seqs:
        return False
    last = max(window.seqs)
    return any(
        other is not window and other.group_index == window.group_index
        and other.raw == window.raw and other.seqs and min(other.seqs) > last
        for other in windows
    )


def _row(query: Query, record: dict[str, Any], ref: WindowRef) -> dict[str, Any]:
    row: dict[str, Any] = {name: record.get(name) for name in query.aggregate_by}
    for aggregation in query.aggregate or ():
        if aggregation.function == "window_start":
            row[aggregation.name] = ref.start_ms
        elif aggregation.function == "window_end":
            row[aggregation.name] = ref.end_ms
        elif aggregation.function == "avg":
            total, n = (record.get(column) for column in avg_columns(aggregation.name))
            row[aggregation.name] = total / n if n else None
        else:
            row[aggregation.name] = record.get(aggregation.name)
    return row


def _judged(
    spec: Any,
    window: _Window,
    events: dict[int, EventInfo],
    clock_ms: int | None,
    later: bool,
    passthrough: bool,
) -> tuple[WindowRef, str, bool]:
    """The window's bounds, and why it closed (see the module docstring); ``later``: a
    session of the same key started after this one (so event time closed this one)."""
    raw = window.raw
    times = [t for t in (events[s].t_ms for s in window.seqs) if t is not None]
    if isinstance(spec, CountWindows):
        ref = WindowRef(start_offset=int(raw["begin"]), end_offset=int(raw["finish"]))
        if passthrough:
            return ref, "event", False
        full = len(window.seqs) >= spec.count
        return ref, "count" if full else "end_of_input", not full
    if isinstance(spec, TrailingWindows):
        return WindowRef(ms_of_iso(raw["start"]), ms_of_iso(raw["end"])), "close", False
    if isinstance(spec, TrailingCountWindows):
        return WindowRef(start_offset=int(raw["begin"]), end_offset=int(raw["finish"])), "close", False
    if isinstance(spec, SessionWindows):
        first, last = min(times), max(times)
        ref = WindowRef(first, last)
        capped = (spec.max_events is not None and len(window.seqs) >= spec.max_events) or (
            spec.max_duration_ms is not None and last >= first + spec.max_duration_ms
        )
        watermark = None if clock_ms is None else clock_ms - spec.tolerance_ms
        closed = capped or later or (watermark is not None and watermark > last + spec.gap_ms)
        return ref, "close" if closed else "end_of_input", not closed
    assert isinstance(spec, FixedWindows)
    ref = WindowRef(ms_of_iso(raw["start"]), ms_of_iso(raw["end"]))
    if passthrough:
        return ref, "event", False
    assert ref.end_ms is not None
    closed = clock_ms is not None and clock_ms >= ref.end_ms + spec.tolerance_ms
    return ref, "close" if closed else "end_of_input", not closed


def _drops(spec: Any, prepared: Prepared, received: set[int]) -> list[Drop]:
    """Events no window received: unusable times, else ``late`` -- or, for trailing
    windows, ``no_window`` when the event was not behind its key's clock (it arrived in
    order but no fired window covered it). See the module docstring."""
    drops = []
    clock: dict[int, int] = {}
    for info in prepared.events:
        group = prepared.groups[info.group_index] if prepared.grouped else None
        before = clock.get(info.group_index)
        if info.t_ms is not None:
            clock[info.group_index] = info.t_ms if before is None else max(before, info.t_ms)
        if info.seq in received:
            continue
        if info.unusable is not None:
            drops.append(Drop(info.seq, info.unusable, (), "dropped by tenzir", group))
            continue
        if isinstance(spec, TrailingCountWindows):  # no event time: never late
            drops.append(Drop(info.seq, "no_window", (), "dropped by tenzir (no_window)", group))
            continue
        assert info.t_ms is not None
        reason = "late"
        windows: tuple[WindowRef, ...] = ()
        if isinstance(spec, FixedWindows):
            every = spec.every_ms or spec.size_ms
            last = info.t_ms - info.t_ms % every
            starts = range(last, info.t_ms - spec.size_ms, -every)
            windows = tuple(WindowRef(s, s + spec.size_ms) for s in sorted(starts))
        elif isinstance(spec, SessionWindows):
            windows = (WindowRef(info.t_ms, info.t_ms),)
        elif isinstance(spec, TrailingWindows) and (
            before is None or info.t_ms >= before - spec.tolerance_ms
        ):
            reason = "no_window"
        drops.append(Drop(info.seq, reason, windows, f"dropped by tenzir ({reason})", group))
    return drops


ENTRY = TargetEntry(
    tenzir_target,
    "the real Tenzir engine's window operator (the [tenzir] extra runs TQL pipelines)",
)

__all__ = ["ENTRY", "TenzirTarget", "outputs_of", "run_pipeline", "tenzir_binary", "tenzir_target"]
