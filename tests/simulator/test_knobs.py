"""Knobs are validated with clear errors naming the knob; text options convert with units."""

from __future__ import annotations

import pytest

from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.simulator.knobs import (
    KNOB_HELP,
    KNOB_NAMES,
    Knobs,
    LateSpec,
    knobs_from_options,
    parse_late_window,
)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"events": 0}, "events"),
        ({"events": None}, "events"),
        ({"rate_per_s": 0}, "rate"),
        ({"rate_shape": "square"}, "rate_shape"),
        ({"burst_duty": 1.0}, "burst_duty"),
        ({"keys": 0}, "keys"),
        ({"hot_keys": 200}, "hot_keys"),
        ({"hot_fraction": 0.5}, "hot_fraction"),
        ({"sparse_keys": 100}, "sparse_keys"),
        ({"delay": "gamma"}, "delay"),
        ({"delay": "uniform"}, "max_out_of_order"),
        ({"late_fraction": 1.5}, "late_fraction"),
        ({"late_fraction": 0.95}, "late_fraction"),
        ({"null_fraction": 0.6, "late_fraction": 0.5}, "late_fraction"),
        ({"idle_gap_ms": 1000}, "idle_gap"),
        ({"idle_partitions": 3}, "idle_partitions"),
        ({"batch_size": 10, "batch_interval_ms": 10}, "batch_size"),
        ({"timestamp_type": "Now"}, "timestamp_type"),
        ({"topic": ""}, "topic"),
        ({"seed": 1.5}, "seed"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_knobs_name_the_knob(changes: dict, field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        Knobs(**changes)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}=")


def test_every_knob_is_documented() -> None:
    assert set(KNOB_HELP) == set(KNOB_NAMES)


def test_text_options_convert_units_and_names() -> None:
    knobs = knobs_from_options(
        {
            "rate": "250",
            "max-out-of-order": "5s",
            "delay": "uniform",
            "late-fraction": "0.05",
            "late-window": "1min+10s",
            "start": "2026-03-01T00:00:00Z",
            "keys": "7",
            "batch-interval": "1s",
        }
    )
    assert knobs.rate_per_s == 250.0
    assert knobs.max_out_of_order_ms == 5_000
    assert knobs.late_window == LateSpec(60_000, tolerance_ms=10_000)
    assert knobs.start_ms == 1_772_323_200_000
    assert knobs.keys == 7 and knobs.batch_interval_ms == 1_000


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"nope": "1"}, "nope"),
        ({"keys": "many"}, "keys"),
        ({"keys": "2.5"}, "keys"),
        ({"max-out-of-order": "5 parsecs"}, "max_out_of_order"),
        ({"late-window": "0s"}, "late_window.size"),
    ],
)
def test_bad_text_options_name_the_knob(options: dict, field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        knobs_from_options(options)
    assert info.value.field == field


def test_late_window_syntax() -> None:
    assert parse_late_window("10min/1min+2min") == LateSpec(600_000, 60_000, 120_000)
    assert parse_late_window("5s@stream") == LateSpec(5_000, clock_scope="stream")


def test_every_knob_is_in_the_docs_table_and_a_generate_option() -> None:
    from pathlib import Path

    from windtunnel.cli.generate import generate_command

    docs = (Path(__file__).parents[2] / "docs" / "simulator.md").read_text()
    options = {o for p in generate_command.params for o in p.opts}
    for knob in KNOB_NAMES:
        option = "--" + knob.removesuffix("_ms").removesuffix("_per_s").replace("_", "-")
        assert f"| `{knob}` |" in docs and f"`{option}" in docs, knob
        assert option in options, knob
