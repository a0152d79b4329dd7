"""Running small ``beam`` scenarios and reading their panes in one line each."""

from __future__ import annotations

from typing import Any

from windtunnel.oracle.engine import replay
from windtunnel.oracle.model.results import Drop, Output, pane_of
from windtunnel.oracle.scenario import parse_scenario


def beam(window: Any, items: list[Any], *, rules: dict[str, str] | None = None,
         **top: Any) -> list[Output]:
    """The outputs of a ``profile: beam`` scenario; ``window`` a mapping, or the Beam
    spelling of a windowing function (then ``trigger``/``accumulation``... go in ``top``)."""
    if isinstance(window, str):
        keys = ("trigger", "accumulation", "allowed_lateness", "timestamp_combiner", "tolerance")
        window = {"kind": "beam", "window_fn": window,
                  **{k: top.pop(k) for k in keys if k in top}}
    data = {"profile": "beam", "window": window, "aggregate": top.pop("aggregate", {
        "xs": "collect(ts)"}), "input": items, "rules": rules or {}, **top}
    return list(replay(parse_scenario(data)))


def panes(outputs: list[Output]) -> list[tuple[Any, ...]]:
    """Each emission as (start, end, row values, timing, index, nonspeculative, last,
    timestamp, reason); each drop as ("drop", seq, reason)."""
    found: list[tuple[Any, ...]] = []
    for output in outputs:
        if isinstance(output, Drop):
            found.append(("drop", output.seq, output.reason))
            continue
        pane = pane_of(output)
        assert pane is not None
        (value,) = output.row.values()
        found.append((output.window.start_ms, output.window.end_ms, value, pane.timing,
                      pane.index, pane.nonspeculative_index, pane.last, pane.timestamp_ms,
                      output.reason))
    return found
