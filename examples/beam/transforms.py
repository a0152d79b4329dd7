"""Beam transforms to check against ``clicks.yaml``: each takes the keyed ``PCollection`` of
``(user, event)`` the check feeds and returns ``(user, clicks)`` per window pane.

    windtunnel check examples/beam/clicks.yaml --beam-transform examples.beam.transforms:click_counts
    windtunnel check examples/beam/clicks.yaml --beam-transform examples.beam.transforms:discarding_counts

``discarding_counts`` is the broken twin: it discards fired panes, so the on-time and late
panes count only the clicks since the pane before.
"""

from __future__ import annotations

import apache_beam as beam
from apache_beam.transforms import trigger, window


def _counts(keyed: beam.PCollection, mode: int) -> beam.PCollection:
    return (
        keyed
        | "window" >> beam.WindowInto(
            window.FixedWindows(60),
            trigger=trigger.AfterWatermark(early=trigger.AfterCount(3),
                                           late=trigger.AfterCount(1)),
            accumulation_mode=mode,
            allowed_lateness=600,
        )
        | "count" >> beam.combiners.Count.PerKey()
    )


def click_counts(keyed: beam.PCollection) -> beam.PCollection:
    """Per-user clicks, accumulating panes (what clicks.yaml says)."""
    return _counts(keyed, trigger.AccumulationMode.ACCUMULATING)


def discarding_counts(keyed: beam.PCollection) -> beam.PCollection:
    """The same, discarding fired panes: diverges from clicks.yaml."""
    return _counts(keyed, trigger.AccumulationMode.DISCARDING)
