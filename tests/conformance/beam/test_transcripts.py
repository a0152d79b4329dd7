"""Beam's own trigger transcripts (``apache_beam/testing/data/trigger_transcripts.yaml``, read
from the installed apache-beam) run step by step through the ``beam`` profile: every positive
case passes field for field, every negative case fails as Beam's harness says it must, and
the one case left out is named with its reason. Skipped without the ``[beam]`` extra."""

from __future__ import annotations

import importlib.util

import pytest

from windtunnel.conformance.beam.transcripts import load_cases, run_case

pytestmark = [
    pytest.mark.beam,
    pytest.mark.skipif(importlib.util.find_spec("apache_beam") is None,
                       reason="needs apache-beam (the [beam] extra): the transcripts ship in it"),
]

CASES = load_cases() if importlib.util.find_spec("apache_beam") is not None else []
GC_STATE = ("State at step 2 (state): window [0, 9] expected absent, the profile holds it "
            "tombstone")
"""garbage_collection's one state expectation that neither Beam's driver nor the profile
meets (docs/engines.md, Beam): both hold [0, 9] as a finished window at watermark -inf."""


def test_the_transcripts_are_eighteen_cases_thirteen_positive_five_negative() -> None:
    assert len(CASES) == 18
    assert sum(c.error is None for c in CASES) == 13
    assert [c.name for c in CASES if c.data is None] == [
        "timestamp_combiner_custom_timestamping_earliest#2"]
    (left_out,) = [c for c in CASES if c.data is None]
    assert "defined in Beam's trigger_test.py" in left_out.left_out


@pytest.mark.parametrize("case", [c for c in CASES if c.error is None and c.data is not None],
                         ids=lambda c: c.name)
def test_a_positive_case_passes_field_for_field(case: object) -> None:
    problems = run_case(case)  # type: ignore[arg-type]
    if case.name == "garbage_collection":  # type: ignore[attr-defined]
        assert problems == [GC_STATE]
    else:
        assert problems == []


@pytest.mark.parametrize("case", [c for c in CASES if c.error is not None], ids=lambda c: c.name)
def test_a_negative_case_fails_with_beams_error(case: object) -> None:
    problems = run_case(case)  # type: ignore[arg-type]
    assert problems and problems[0].startswith(case.error)  # type: ignore[attr-defined]


def test_beams_own_driver_also_holds_the_garbage_collection_window() -> None:
    from apache_beam.transforms import trigger
    from apache_beam.transforms.core import Windowing
    from apache_beam.transforms.window import FixedWindows, IntervalWindow, WindowFn
    from apache_beam.utils.timestamp import MIN_TIMESTAMP
    from apache_beam.utils.windowed_value import WindowedValue

    fn = FixedWindows(10)
    driver = trigger.GeneralTriggerDriver(Windowing(
        fn, trigger.AfterCount(2), trigger.AccumulationMode.DISCARDING, allowed_lateness=10), None)
    state = trigger.InMemoryUnmergedState()
    bundle = [WindowedValue(t, t, fn.assign(WindowFn.AssignContext(t))) for t in
              (1, 2, 3, 10, 11, 25)]
    list(driver.process_elements(state, bundle, MIN_TIMESTAMP, MIN_TIMESTAMP))
    merged = trigger.MergeableStateAdapter(state)
    assert merged.get_state(IntervalWindow(0, 10), driver.TOMBSTONE)
    assert merged.get_state(IntervalWindow(10, 20), driver.TOMBSTONE)
