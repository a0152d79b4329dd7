"""The ``beam`` specs the agreement runs draw streams for: every window kind with every
trigger family, each cell a rotation of accumulation modes, allowed lateness, timestamp
combiners and watermark rules (times in ms, small, so 1 ms edges are hit; keys ``a``-``c``).

Used by ``benchmarks/beam_agreement.py`` (the full run) and the suite's sample. No Beam
import here: the specs are the oracle's.
"""

from __future__ import annotations

import itertools
from typing import Any, Final

from windtunnel.oracle.scenario import Scenario, parse_scenario

WINDOW_KINDS: Final[dict[str, tuple[str, ...]]] = {
    "fixed": ("FixedWindows(10ms)", "FixedWindows(10ms, offset=3ms)"),
    "sliding": ("SlidingWindows(10ms, 4ms)", "SlidingWindows(4ms, 6ms)"),
    "sessions": ("Sessions(5ms)", "Sessions(3ms)"),
    "global": ("GlobalWindows()",),
}
TRIGGER_FAMILIES: Final[dict[str, tuple[str, ...]]] = {
    "default": ("Default",),
    "watermark": (
        "AfterWatermark()",
        "AfterWatermark(early=AfterCount(2))",
        "AfterWatermark(early=AfterCount(2), late=AfterCount(1))",
        "AfterWatermark(late=AfterCount(2))",
    ),
    "count": ("AfterCount(2)", "Repeatedly(AfterCount(3))", "Repeatedly(AfterCount(1))"),
    "processing_time": (
        "AfterProcessingTime(5ms)",
        "Repeatedly(AfterProcessingTime(3ms))",
        "AfterWatermark(early=AfterProcessingTime(4ms), late=AfterProcessingTime(2ms))",
    ),
    "composite": (
        "AfterAny(AfterCount(3), AfterProcessingTime(4ms))",
        "Repeatedly(AfterAll(AfterCount(2), AfterProcessingTime(3ms)))",
        "AfterEach(AfterCount(2), AfterCount(1), Never)",
        "OrFinally(Repeatedly(AfterCount(2)), AfterWatermark())",
        "Repeatedly(AfterEach(AfterCount(1), AfterCount(2)))",
        "AfterAny(Never, AfterWatermark(early=AfterCount(1)))",
    ),
}
OPTIONS: Final = tuple(itertools.product(
    ("accumulating", "discarding"),
    (0, 5, 20),
    ("end_of_window", "earliest", "latest"),
    (("max_event_time", 0), ("max_event_time", 2), ("injected", 0)),
))
"""(accumulation, allowed_lateness ms, timestamp combiner, (beam_watermark, tolerance ms))."""
AGGREGATE: Final = {"n": "count()", "xs": "collect(x)"}


def cell_specs(kind: str, family: str, count: int = 8) -> list[Scenario]:
    """``count`` specs of one cell: its window functions and triggers in turn, with the
    options rotated so that each cell sees every mode, lateness, combiner and watermark."""
    specs = []
    fns, triggers = WINDOW_KINDS[kind], TRIGGER_FAMILIES[family]
    for index in range(count):
        accumulation, lateness, combiner, (watermark, tolerance) = OPTIONS[
            (index * 7 + len(kind) + len(family)) % len(OPTIONS)]
        window: dict[str, Any] = {
            "kind": "beam", "window_fn": fns[index % len(fns)],
            "trigger": triggers[index % len(triggers)], "accumulation": accumulation,
            "allowed_lateness": lateness, "timestamp_combiner": combiner, "on": "ts",
            "tolerance": tolerance,
        }
        specs.append(parse_scenario({
            "name": f"beam-{kind}-{family}-{index}", "profile": "beam",
            "rules": {"beam_watermark": watermark}, "window": window, "group_by": ["k"],
            "aggregate": AGGREGATE, "input": [],
        }))
    return specs
