"""Beam's spellings of triggers and windowing functions: parsed by a small grammar (never
``eval``), written back the same way, wrong input named with its position."""

from __future__ import annotations

import pytest

from windtunnel.oracle import InvalidSpec
from windtunnel.oracle.profiles.beam.spec import WindowFn, accumulation_mode, parse_window_fn
from windtunnel.oracle.profiles.beam.spec import timestamp_combiner as combiner
from windtunnel.oracle.profiles.beam.triggers import (
    AfterAll,
    AfterAny,
    AfterCount,
    AfterEach,
    AfterProcessingTime,
    AfterWatermark,
    Always,
    Default,
    Never,
    OrFinally,
    Repeatedly,
    parse_trigger,
    uses_processing_time,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Default", Default()),
        ("DefaultTrigger()", Default()),
        ("AfterWatermark(early=AfterCount(3), late=AfterCount(1))",
         AfterWatermark(AfterCount(3), AfterCount(1))),
        ("AfterWatermark()", AfterWatermark()),
        ("trigger.AfterCount(count=2)", AfterCount(2)),
        ("AfterProcessingTime(60)", AfterProcessingTime(60_000)),
        ("AfterProcessingTime(delay=0.5)", AfterProcessingTime(500)),
        ("AfterProcessingTime(250ms)", AfterProcessingTime(250)),
        ("Repeatedly(AfterAny(AfterCount(100), AfterProcessingTime(1min)))",
         Repeatedly(AfterAny((AfterCount(100), AfterProcessingTime(60_000))))),
        ("AfterAll(AfterCount(2), Never)", AfterAll((AfterCount(2), Never()))),
        ("AfterEach(AfterCount(1), _Never(), Always)",
         AfterEach((AfterCount(1), Never(), Always()))),
        ("OrFinally(Repeatedly(AfterCount(2)), AfterWatermark())",
         OrFinally(Repeatedly(AfterCount(2)), AfterWatermark())),
    ],
)
def test_a_trigger_is_read_from_beams_spelling_and_written_back(text: str, value: object) -> None:
    parsed = parse_trigger(text)
    assert parsed == value
    assert parse_trigger(str(parsed)) == parsed


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("__import__('os').system('true')", "position"),
        ("AfterCount(2", "position 12"),
        ("AfterCount(2))", "position 13"),
        ("AfterCount(0)", "positive integer"),
        ("AfterCount(1.5)", "whole number"),
        ("AfterCount(2s)", "whole number"),
        ("AfterWatermark(early=3)", "must be a trigger"),
        ("AfterWatermark(AfterCount(1))", "at most 0 positional"),
        ("AfterWatermark(soon=AfterCount(1))", "no argument soon"),
        ("Repeatedly(AfterCount(1), AfterCount(2))", "at most 1 positional"),
        ("Repeatedly()", "one trigger"),
        ("OrFinally(AfterCount(1))", "two triggers"),
        ("AfterAny()", "at least one trigger"),
        ("AfterProcessingTime(0.0005)", "finer than 1 ms"),
        ("AfterFirst(AfterCount(1))", "unknown trigger AfterFirst"),
        ("AfterCount(count=1, count=2)", "given twice"),
        ("", "Beam spelling"),
    ],
)
def test_a_wrong_trigger_is_an_input_error_saying_what_and_where(text: str, found: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        parse_trigger(text)
    assert error.value.field == "window.trigger"
    assert found in str(error.value)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("FixedWindows(60)", WindowFn("fixed", size_ms=60_000)),
        ("FixedWindows(10ms, offset=13ms)", WindowFn("fixed", size_ms=10, offset_ms=3)),
        ("SlidingWindows(30, 5)", WindowFn("sliding", size_ms=30_000, period_ms=5_000)),
        ("SlidingWindows(size=4ms, period=6ms, offset=8ms)",
         WindowFn("sliding", size_ms=4, period_ms=6, offset_ms=2)),
        ("Sessions(gap_size=10min)", WindowFn("sessions", gap_ms=600_000)),
        ("window.GlobalWindows()", WindowFn("global")),
        ("GlobalWindows", WindowFn("global")),
    ],
)
def test_a_windowing_function_is_read_in_seconds_or_with_units(text: str, value: WindowFn) -> None:
    parsed = parse_window_fn(text)
    assert parsed == value
    assert parse_window_fn(str(parsed)) == parsed


@pytest.mark.parametrize(
    ("text", "found"),
    [("FixedWindows()", "is required"), ("FixedWindows(0)", "positive"),
     ("Sessions(10, 5)", "at most 1"), ("CalendarWindows(1)", "unknown windowing function"),
     ("GlobalWindows(5)", "at most 0")],
)
def test_a_wrong_windowing_function_is_an_input_error(text: str, found: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        parse_window_fn(text)
    assert found in str(error.value)


def test_accumulation_modes_and_timestamp_combiners_take_beams_names_too() -> None:
    assert accumulation_mode("AccumulationMode.ACCUMULATING") == "accumulating"
    assert accumulation_mode("discarding") == "discarding"
    assert combiner("TimestampCombiner.OUTPUT_AT_EARLIEST") == "earliest"
    assert combiner("OUTPUT_AT_EOW") == "end_of_window"
    with pytest.raises(InvalidSpec):
        accumulation_mode("retracting")
    with pytest.raises(InvalidSpec):
        combiner("OUTPUT_AT_EARLIEST_TRANSFORMED")


def test_processing_time_is_found_anywhere_in_a_trigger() -> None:
    assert uses_processing_time(parse_trigger(
        "AfterWatermark(late=Repeatedly(AfterAny(AfterCount(2), AfterProcessingTime(1))))"))
    assert not uses_processing_time(parse_trigger("AfterEach(AfterCount(2), Default)"))
