"""The ``beam`` profile: its rules, the ``beam`` scenario kind and its operator.

Scenario kind ``beam``: ``{kind: beam, window_fn: "FixedWindows(60)", trigger:
"AfterWatermark(early=AfterCount(3), late=AfterCount(1))", accumulation: accumulating,
allowed_lateness: 10min, timestamp_combiner: end_of_window, on: ts, tolerance: 0s}``;
numbers inside ``window_fn`` and ``trigger`` are seconds (Beam's unit), other durations
follow the file's ``time_unit``. The generic ``fixed`` kind runs as ``FixedWindows`` (or
``SlidingWindows`` with ``every``), ``session`` as ``Sessions``, with the default trigger.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from windtunnel.oracle.engine import register_operator
from windtunnel.oracle.model.rules import RULE_OWNERS, RULE_VALUES, Rules
from windtunnel.oracle.model.spec import FixedWindows, SessionWindows
from windtunnel.oracle.profiles import Profile, register
from windtunnel.oracle.profiles.beam.operator import BeamOperator
from windtunnel.oracle.profiles.beam.rules import BEAM_RULES
from windtunnel.oracle.profiles.beam.spec import (
    BeamWindows,
    accumulation_mode,
    parse_window_fn,
    timestamp_combiner,
)
from windtunnel.oracle.profiles.beam.triggers import Default, parse_trigger
from windtunnel.oracle.profiles.stage_sources import stage_sources
from windtunnel.oracle.scenario_windows import duration, window_kind

GUIDE: Final = "https://beam.apache.org/documentation/programming-guide/"
BEAM_SDK: Final = "https://github.com/apache/beam/blob/master/sdks/python/apache_beam"
TRIGGER_PY: Final = f"{BEAM_SDK}/transforms/trigger.py"
WINDOW_PY: Final = f"{BEAM_SDK}/transforms/window.py"
ESTIMATORS_PY: Final = f"{BEAM_SDK}/io/watermark_estimators.py"
TEST_STREAM_PY: Final = f"{BEAM_SDK}/testing/test_stream.py"

_SOURCES: Final = {
    "beam_watermark": f'{ESTIMATORS_PY}: MonotonicWatermarkEstimator "assumes that timestamps of '
    'all ouput records are increasing monotonically" (its watermark is the latest timestamp '
    f'seen); {TEST_STREAM_PY}: advance_watermark_to "Advance the watermark to a given Unix '
    'timestamp" ({watermark: T}; rule value injected: only they move it) (B3)',
    "beam_expiry": f'{TRIGGER_PY}: GeneralTriggerDriver "if input_watermark > window.end + '
    f'self.allowed_lateness: continue"; {GUIDE}#default-trigger: "the default trigger emits '
    'exactly once, and late data is discarded. This is because the default windowing '
    'configuration has an allowed lateness value of 0." (rule value reaches) (B4)',
    "beam_processing_time": f"{TRIGGER_PY}: process_timer passes a processing-time timer's "
    "time to should_fire, on_fire and the pane's timing as the watermark, and "
    "_ParallelTriggerFn.on_fire asks its parts should_fire(TimeDomain.WATERMARK, ...); "
    f'{GUIDE}#composite-trigger-types: "AfterFirst takes multiple triggers and emits the first '
    'time any of its argument triggers is satisfied" (rule value guide) (B9)',
    "end_of_input": f"{TEST_STREAM_PY}: advance_watermark_to_infinity \"Advance the watermark "
    'to the end of time, completing this TestStream." (flush; discard: the input stops without '
    "that watermark, as Beam's trigger transcripts end) (B3)",
    "clock_scope": f'{GUIDE}#event-time-triggers: "The watermark is a global progress metric" '
    "(one input watermark for every key) (B3)",
    "clock_moves": f"{ESTIMATORS_PY}: the watermark is read between bundles: a bundle is judged "
    "against the watermark before it (B3, B4)",
    "session_gap": f"{WINDOW_PY}: Sessions.merge \"if end > w.start\" (sessions exactly gap apart "
    "stay apart) (B2)",
    "every_greater_than_size": f"{WINDOW_PY}: SlidingWindows only requires size > 0; a period "
    "larger than the size leaves gaps (no_window) (B1)",
    "late_test": f'{GUIDE}#watermarks-and-late-data: "Once the watermark progresses past the end '
    'of a window, any further element that arrives with a timestamp in that window is '
    'considered late data." (per window) (B4)',
    "close_at": f'{GUIDE}#event-time-triggers: "The AfterWatermark trigger emits the contents of '
    'a window after the watermark passes the end of the window" (watermark >= end) (B5)',
    "empty_windows": f"{TRIGGER_PY}: a window exists once an element joined it (B12)",
}


def _sources() -> dict[str, str]:
    found = {
        rule: "not applicable to beam (its own operator reads only the rules cited here; kept "
        "default)" for rule in RULE_VALUES if RULE_OWNERS.get(rule) in (None, "beam")
    }
    found.update(stage_sources("beam"))
    found.update(_SOURCES)
    return found


BEAM = register(
    Profile(
        name="beam",
        summary="Apache Beam's windowing and triggers (the Python SDK's trigger driver): early, "
        "on-time and late panes, accumulating or discarding, allowed lateness, timestamp "
        "combiners; one watermark per stream.",
        rules=BEAM_RULES,
        sources=_sources(),
        kinds=("fixed", "session", "beam"),
        unsupported={
            "idle_timeout": "Beam windows have no idle timeout (use a processing-time trigger)",
            "max_duration": "Beam's Sessions have no maximum duration",
            "max_events": "Beam's Sessions have no event cap",
            "where": "a filter before WindowInto is the pipeline's own transform",
            "deduplicate": "deduplication before WindowInto is the pipeline's own transform",
        },
        options=("allowed_lateness",),
    )
)

register_operator(BeamWindows, profile="beam")(BeamOperator)
register_operator(FixedWindows, profile="beam")(BeamOperator)
register_operator(SessionWindows, profile="beam")(BeamOperator)


@window_kind("beam", ("window_fn", "trigger", "accumulation", "allowed_lateness",
                      "timestamp_combiner", "on", "tolerance"))
def _beam(block: Mapping[str, Any], time_unit: str, rules: Rules) -> BeamWindows:
    trigger = Default() if block.get("trigger") is None else parse_trigger(block["trigger"])
    accumulation = block.get("accumulation")
    return BeamWindows(
        parse_window_fn(block.get("window_fn", "GlobalWindows()")),
        trigger=trigger,
        accumulation=None if accumulation is None else accumulation_mode(accumulation),
        allowed_lateness_ms=duration(block, "allowed_lateness", time_unit, 0) or 0,
        timestamp_combiner=timestamp_combiner(block.get("timestamp_combiner", "end_of_window")),
        on=block.get("on", "ts"),
        tolerance_ms=duration(block, "tolerance", time_unit, 0) or 0,
    )
