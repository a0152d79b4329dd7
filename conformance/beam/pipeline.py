"""Scenarios as Beam pipelines on the DirectRunner, fed by ``TestStream`` (Beam's streaming
test source), one pipeline per scenario.

The pipeline is ``TestStream | transform | capture``: the ``TestStream`` emits each event as
``(key, payload)`` stamped with its event time (an event or a ``batch`` is one
``add_elements`` call), moves the watermark as the scenario's rules say (``{watermark: T}``
items; after each bundle, under ``beam_watermark: max_event_time``, to the largest event time
minus tolerance; to infinity at the end) and advances processing time with the wall clock.
``transform`` is a user's function from that keyed ``PCollection`` to their windowed,
triggered and combined one, or :func:`spec_transform` (the spec's own ``WindowInto`` and
``GroupByKey``). Every output is captured with its window, timestamp and ``PaneInfo``.

The spec's own pipeline runs on a scale where a millisecond is a second (Beam's runner API
carries processing-time delays in whole seconds; :mod:`.engine`); a user's runs in real time.
Runs on ``BundleBasedDirectRunner``: the pure-Python runner (Beam 2.77's ``DirectRunner``
hands streaming pipelines to Prism, a binary it downloads, which fails offline).
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any

from windtunnel.conformance.beam.engine import (
    REAL_TIME_US,
    SECONDS_US,
    beam_pane,
    emissions,
    instant,
    micros,
    windowing,
)
from windtunnel.oracle.model.errors import InvalidSpec, MissingExtra
from windtunnel.oracle.model.fields import getter
from windtunnel.oracle.model.results import Output, PaneEmission
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Watermark, checked
from windtunnel.oracle.model.timeparse import NotATime, timestamp_ms
from windtunnel.oracle.profiles.beam.operator import beam_windows
from windtunnel.oracle.scenario import Scenario
from windtunnel.oracle.windows.window_rows import Rows

try:
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions, TypeOptions
    from apache_beam.testing.test_stream import TestStream
    from apache_beam.transforms.window import TimestampedValue
except ModuleNotFoundError as exc:  # pragma: no cover - without the [beam] extra
    raise MissingExtra("beam", "apache_beam", "checking against Beam") from exc

Transform = Callable[[Any], Any]
"""A user's ``transform(keyed: PCollection[(key, payload)]) -> PCollection[(key, value)]``."""

_RUNS: dict[int, list[tuple[Any, Any, Any, Any, Any]]] = {}
_LOCK = threading.Lock()
_IDS = itertools.count()


class _Capture(beam.DoFn):  # type: ignore[misc]
    """Keeps every output with its window, timestamp and pane under the run's id (the
    DirectRunner runs in this process)."""

    def __init__(self, run: int) -> None:
        self.run = run

    def process(self, element: Any, window: Any = beam.DoFn.WindowParam,
                timestamp: Any = beam.DoFn.TimestampParam,
                pane: Any = beam.DoFn.PaneInfoParam) -> None:
        key, value = element
        with _LOCK:
            _RUNS[self.run].append((key, value, window, timestamp, pane))


def spec_transform(scenario: Scenario, unit_us: int = SECONDS_US) -> Transform:
    """The spec's own windowing: ``WindowInto`` with its window function, trigger,
    accumulation mode, timestamp combiner and allowed lateness, then ``GroupByKey``."""
    spec = beam_windows(scenario.query.window)
    windowed = windowing(spec, unit_us)

    def transform(keyed: Any) -> Any:
        return (keyed
                | "window" >> beam.WindowInto(
                    windowed.windowfn, trigger=windowed.triggerfn,
                    accumulation_mode=windowed.accumulation_mode,
                    timestamp_combiner=windowed.timestamp_combiner,
                    allowed_lateness=windowed.allowed_lateness)
                | "group" >> beam.GroupByKey())

    return transform


def test_stream(scenario: Scenario, with_seq: bool = False,
                unit_us: int = REAL_TIME_US) -> TestStream:
    """The scenario as a ``TestStream`` of ``(key, payload)`` elements (``(key, (seq,
    payload))`` with ``with_seq``; see the module docstring). Raises InvalidSpec for
    ``end_of_input: discard`` (a TestStream always ends with the watermark at infinity)."""
    rules = scenario.rules
    if rules.end_of_input != "flush":
        raise InvalidSpec("rules.end_of_input", rules.end_of_input,
                          "a TestStream ends with the watermark at infinity",
                          "check with end_of_input: flush (the default)")
    spec = beam_windows(scenario.query.window)
    time_of = getter(spec.on)
    keys = [getter(p) for p in scenario.query.group_by]
    stream = TestStream()
    wall, watermark = scenario.start_wall_ms, None
    if wall:
        stream.advance_processing_time(micros(wall, unit_us))

    def move_wall(to_ms: int) -> None:
        nonlocal wall
        if to_ms > wall:
            stream.advance_processing_time(micros(to_ms - wall, unit_us))
            wall = to_ms

    def move_watermark(to_ms: int) -> None:
        nonlocal watermark
        if watermark is None or to_ms > watermark:
            stream.advance_watermark_to(instant(to_ms, unit_us))
            watermark = to_ms

    for item in checked(scenario.items, scenario.start_wall_ms):
        if isinstance(item, Event | Batch):
            bundle, top = [], None
            for event in (item,) if isinstance(item, Event) else item.events:
                if event.at_ms is not None:
                    move_wall(event.at_ms)
                try:
                    t_ms = timestamp_ms(time_of(event.payload), scenario.time_unit_ms)
                except NotATime:
                    t_ms = None
                if t_ms is None:
                    continue
                values = tuple(k(event.payload) for k in keys)
                key = None if not values else values[0] if len(values) == 1 else values
                value = (event.seq, dict(event.payload)) if with_seq else dict(event.payload)
                bundle.append(TimestampedValue((key, value), instant(t_ms, unit_us)))
                top = t_ms if top is None else max(top, t_ms)
            if bundle:
                stream.add_elements(bundle)
            if top is not None and rules.beam_watermark == "max_event_time":
                move_watermark(top - spec.tolerance_ms)
        elif isinstance(item, Advance):
            move_wall(item.to_ms)
        elif isinstance(item, Watermark):
            move_watermark(item.to_ms)
        elif isinstance(item, End):
            break
    stream.advance_watermark_to_infinity()
    return stream


STALL_GRACE_S = 1.0
"""How long a pipeline may go on without a new output once its ``TestStream`` is exhausted
before it counts as stalled (the DirectRunner keeps running while a processing-time timer is
pending, and TestStream's clock never moves again)."""
DEADLINE_S = 120.0
"""A pipeline still running after this long counts as stalled too."""


def run_pipeline(scenario: Scenario, transform: Transform | None = None) -> tuple[list[Output], str]:
    """The scenario's emissions on the DirectRunner, and why it stalled ("" if it finished):
    ``transform``'s outputs, each value the row (a mapping, or the one aggregate column's
    value); without ``transform`` the spec's own (:func:`spec_transform`), whose grouped
    ``(seq, payload)`` values become the query's rows. A stalled pipeline is cancelled; its
    outputs until then are returned."""
    run = next(_IDS)
    with _LOCK:
        _RUNS[run] = []
    options = PipelineOptions(runner="BundleBasedDirectRunner")
    options.view_as(StandardOptions).streaming = True
    options.view_as(TypeOptions).allow_unsafe_triggers = True
    unit_us = REAL_TIME_US if transform is not None else SECONDS_US
    chosen = transform or spec_transform(scenario, unit_us)
    logging.getLogger("apache_beam").setLevel(logging.CRITICAL)
    try:
        pipeline = beam.Pipeline(options=options)
        source = pipeline | "input" >> test_stream(scenario, transform is None, unit_us)
        _ = chosen(source) | "capture" >> beam.ParDo(_Capture(run))
        stalled = _finish(pipeline.run(), run)
        with _LOCK:
            captured = list(_RUNS[run])
    finally:
        with _LOCK:
            _RUNS.pop(run, None)
    rows = Rows(scenario.query)
    out: list[Output] = []
    for key, value, window, timestamp, pane in captured:
        group = list(key) if isinstance(key, tuple) else key
        if transform is None:
            payloads = [payload for _, payload in sorted(value, key=lambda v: v[0])]
            out += emissions(rows, group, window, payloads, timestamp, pane, "", None, 0, unit_us)
        else:
            ref, made = beam_pane(window, timestamp, pane, unit_us)
            out.append(PaneEmission(ref, group, _user_row(scenario, value), "", None, 0,
                                    made.timing == "early", made))
    return out, stalled


def _finish(result: Any, run: int) -> str:
    """Wait for the DirectRunner's result; cancel a stalled pipeline and say why."""
    failure: list[BaseException] = []

    def wait() -> None:
        try:
            result.wait_until_finish()
        except Exception as exc:  # the runner's own stall detection, or a failing transform
            failure.append(exc)

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    context = result._evaluation_context
    source = next(t for t in context._step_names if t.full_label.startswith("input/"))
    started, quiet_since, seen = time.monotonic(), time.monotonic(), -1
    while waiter.is_alive():
        waiter.join(0.02)
        if not waiter.is_alive():
            break
        with _LOCK:
            count = len(_RUNS[run])
        if count != seen or not context.is_done(source):
            seen, quiet_since = count, time.monotonic()
        elif time.monotonic() - quiet_since > STALL_GRACE_S:
            _cancel(result)
            return ("the input ended but the DirectRunner did not finish (a processing-time "
                    "timer is still pending and TestStream's clock never moves again, or "
                    "its watermark stopped)")
        if time.monotonic() - started > DEADLINE_S:
            _cancel(result)
            return f"still running after {DEADLINE_S:g} s"
    if failure:
        error = failure[0]
        if isinstance(error, TypeError) and "derive from BaseException" in str(error):
            # the runner offers its stall as a tuple, (Exception('Monitor task detected a
            # pipeline stall.'), None, None), and raising that raises this TypeError
            return ("the DirectRunner detected a pipeline stall: nothing left to run, "
                    "watermarks not complete")
        where = _innermost(error)
        if where is not None and "/apache_beam/" in where:  # the runner's own failure
            return f"the DirectRunner failed: {type(error).__name__}: {error} at {where}"
        raise InvalidSpec("--beam-transform", type(error).__name__,
                          f"the pipeline failed: {error}" + (f" at {where}" if where else ""),
                          "fix the transform") from None
    return ""


def _innermost(error: BaseException) -> str | None:
    """``file:line`` of the innermost frame of ``error``'s traceback."""
    frames = traceback.extract_tb(error.__traceback__)
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else None


def _cancel(result: Any) -> None:
    """Stop the DirectRunner's workers and release the thread waiting for it."""
    result.cancel()
    executor = result._executor._executor
    executor.visible_updates.offer(type(executor)._VisibleExecutorUpdate())


def _user_row(scenario: Scenario, value: Any) -> dict[str, Any]:
    """A user's output value as the query's row: a mapping is the row; any other value is
    the row's one aggregate column (a tuple as a list). Raises InvalidSpec otherwise."""
    columns = [a.name for a in scenario.query.aggregate or ()]
    if isinstance(value, Mapping):
        return dict(value)
    if len(columns) == 1:
        return {columns[0]: list(value) if isinstance(value, tuple) else value}
    raise InvalidSpec("--beam-transform", repr(value)[:80],
                      f"outputs (key, value) where value is not a mapping of the spec's "
                      f"aggregate columns {columns}",
                      "return (key, {column: value, ...}) from the transform")
