"""A client of the engine's line harness (``windtunnel.engine.Harness``), and the oracle's
outputs for the same stream as the harness's records (``schema.output_record``)."""

from __future__ import annotations

import json
import subprocess
import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from windtunnel.oracle.engine import operator_for
from windtunnel.oracle.model.fields import getter, hashable
from windtunnel.oracle.model.results import Emission, Output
from windtunnel.oracle.model.rules import Rules
from windtunnel.oracle.model.spec import Query
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item
from windtunnel.oracle.windows.driver import Driver
from windtunnel.spark_impl.engine_spec import engine_spec
from windtunnel.spark_impl.schema import control_step, event_step, output_record


class HarnessProcess:
    """A running harness JVM: scenarios and unit questions over its stdin and stdout."""

    def __init__(self, java: str, classes: Path) -> None:
        self._writer: threading.Thread | None = None
        self.process = subprocess.Popen(
            [java, "-Xss8m", "-cp", str(classes), "windtunnel.engine.Harness"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8",
        )

    def _send(self, lines: Iterable[Any]) -> None:
        """Writes ``lines``; a long text is written from a thread while the caller reads the
        answers, so neither side blocks on a full pipe."""
        assert self.process.stdin is not None
        stdin = self.process.stdin
        text = "".join(json.dumps(line) + "\n" for line in lines)

        def write() -> None:
            stdin.write(text)
            stdin.flush()

        if len(text) < 16_384:
            write()
            return
        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        self._writer = writer

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        text = self.process.stdout.readline()
        if not text:
            raise RuntimeError(f"the harness ended (exit {self.process.poll()})")
        return json.loads(text)  # type: ignore[no-any-return]

    def run(self, lines: Sequence[Any]) -> list[dict[str, Any]]:
        """The output records of one scenario (``lines`` without the reset); raises
        AssertionError with the harness's message when the engine failed."""
        self._send([*lines, {"reset": True}])
        records = []
        while True:
            answer = self._read()
            if "done" in answer:
                self._joined()
                return records
            if "error" in answer:
                while "done" not in self._read():
                    pass
                self._joined()
                raise AssertionError(f"engine error: {answer['error']}")
            records.append(answer)

    def _joined(self) -> None:
        if self._writer is not None:
            self._writer.join()
            self._writer = None

    def until(self, lines: Sequence[Any], key: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Sends ``lines`` (part of a scenario) and reads up to the answer holding ``key`` or an
        error: the output records before it, and the answer."""
        self._send(lines)
        records = []
        while True:
            answer = self._read()
            if key in answer or "error" in answer:
                return records, answer
            records.append(answer)

    def reset(self) -> None:
        """Ends the scenario under way (its outputs are dropped)."""
        self._send([{"reset": True}])
        while "done" not in self._read():
            pass

    def ask(self, line: dict[str, Any]) -> dict[str, Any]:
        """The one-line answer to a unit question (``dumps``, ``repr``, ``time``, ...)."""
        self._send([line])
        return self._read()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def flat_events(items: Iterable[Item]) -> list[Item]:
    """Items with batches flattened (batches do not matter to the default profile)."""
    out: list[Item] = []
    for item in items:
        out.extend(item.events if isinstance(item, Batch) else (item,))
    return out


def _key(values: tuple[Any, ...]) -> Any:
    try:
        hash(values)
    except TypeError:
        return tuple(hashable(v) for v in values)
    return values


class Reference:
    """The oracle's outputs of a stream, fed item by item to its driver, as output records
    (payloads as read from their JSON text): a wall movement (an ``Advance``, or an event arriving later) at the control step after the
    previous event, each event at its own step, end of input after the last event."""

    def __init__(
        self, query: Query, rules: Rules, items: Sequence[Item], time_unit_ms: int, start_wall_ms: int
    ) -> None:
        self.query = query
        self.records: list[dict[str, Any]] = []
        driver = Driver(
            query, lambda q, ctx: operator_for(q, ctx, "tenzir"), rules,
            time_unit_ms=time_unit_ms, start_wall_ms=start_wall_ms,
        )
        first_seq: dict[Any, int] = {}
        getters = [getter(path) for path in query.group_by]
        last: int | None = None
        wall = start_wall_ms
        for item in [*flat_events(items), End()]:
            if isinstance(item, Event):
                # the payload as JSON carries it: a NaN read from JSON is a new object each time
                item = Event(item.seq, json.loads(json.dumps(item.payload)), item.at_ms)
                if item.at_ms is not None and item.at_ms > wall:
                    wall = item.at_ms
                    self._step(driver, Advance(item.at_ms), control_step(last), first_seq)
                first_seq.setdefault(_key(tuple(g(item.payload) for g in getters)), item.seq)
                self._step(driver, item, event_step(item.seq), first_seq)
                last = item.seq
            else:
                if isinstance(item, Advance):
                    wall = max(wall, item.to_ms)
                self._step(driver, item, control_step(last), first_seq)

    def _step(self, driver: Driver, item: Item, step: int, first_seq: dict[Any, int]) -> None:
        out: list[Output] = []
        driver.feed(item, out)
        for index, output in enumerate(out):
            first = first_seq[self._group_key(output.group)] if isinstance(output, Emission) else None
            self.records.append(output_record(output, step, first, index))

    def _group_key(self, group: Any) -> Any:
        n = len(self.query.group_by)
        values = () if n == 0 else (group,) if n == 1 else tuple(group)
        return _key(values)


def harness_lines(
    query: Query,
    rules: Rules,
    items: Sequence[Item],
    *,
    time_unit_ms: int = 1,
    start_wall_ms: int = 0,
    slices: int = 1,
    snapshots: Sequence[tuple[int, str]] = (),
) -> list[dict[str, Any]]:
    """The harness lines of a stream: spec, slices, items (end of input added), with
    ``{"snapshot": kind}`` before item ``i`` for each ``(i, kind)`` of ``snapshots``."""
    lines: list[dict[str, Any]] = [
        {"spec": engine_spec(query, rules, time_unit_ms, start_wall_ms)},
        {"slices": slices},
    ]
    before = defaultdict(list)
    for index, kind in snapshots:
        before[index].append(kind)
    events = [*flat_events(items), End()]
    for index, item in enumerate(events):
        lines.extend({"snapshot": kind} for kind in before[index])
        if isinstance(item, Event):
            lines.append({"seq": item.seq, "at": item.at_ms, "event": item.payload})
        elif isinstance(item, Advance):
            lines.append({"at": item.to_ms})
        elif isinstance(item, End):
            lines.append({"end": True})
    return lines


def by_step_and_slice(
    expected: list[dict[str, Any]], actual: list[dict[str, Any]]
) -> tuple[dict[Any, list[dict[str, Any]]], dict[Any, list[dict[str, Any]]]]:
    """Both record lists keyed by (step, slice), the oracle's records placed in the slice the
    engine put their group in, ``emit_index`` counted per slice as the engine counts it."""
    slice_of: dict[str, int] = {}
    for record in actual:
        assert slice_of.setdefault(record["group"], record["slice"]) == record["slice"], (
            f"group {record['group']} in two slices"
        )
    mine: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for record in actual:
        mine[record["step"], record["slice"]].append({k: v for k, v in record.items() if k != "slice"})
    theirs: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for record in expected:
        key = (record["step"], slice_of.get(record["group"], -1))
        theirs[key].append({**record, "emit_index": len(theirs[key])})
    return dict(theirs), dict(mine)
