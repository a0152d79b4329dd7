"""What differs between the oracle's outputs and a target's run: :class:`Mismatch`.

Emissions are compared as multisets of the contract's records without ``wall_ms``,
``after_seq`` and ``message`` (:mod:`windtunnel.conformance.differential`), or with every
field for an ``exact`` target; drops only when the target reports them; the micro-batch each
emission came out in only when the target reports timing (expected: the micro-batch of the
event it followed). With a final-value comparison (``final_by``: a sink that keeps one row
per window) each side's emissions are first reduced to the last row of every window, group
and ``aggregate_by`` value (:func:`final_rows`), compared without ``reason``, ``partial``
and timing.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from windtunnel.conformance.differential import DEFAULT_IGNORED, canonical
from windtunnel.conformance.targets import TargetRun
from windtunnel.oracle.model.results import Drop, Emission, Output
from windtunnel.oracle.model.timefmt import window_text

FINAL_IGNORED = (*DEFAULT_IGNORED, "reason", "partial")
"""Fields a final-value comparison leaves out: a merge sink keeps the values only."""


@dataclass(frozen=True, slots=True)
class Late:
    """An emission both sides produced, in different micro-batches."""

    output: Emission
    expected_batch: int
    actual_batch: int


@dataclass(frozen=True, slots=True)
class Mismatch:
    """What differs for one scenario: outputs the oracle has and the target lacks
    (``missing``), the reverse (``unexpected``), and emissions in another micro-batch."""

    missing: tuple[Output, ...] = ()
    unexpected: tuple[Output, ...] = ()
    timing: tuple[Late, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.missing or self.unexpected or self.timing)


def _compared(outputs: Sequence[Output], drops: bool) -> list[Output]:
    return [o for o in outputs if isinstance(o, Emission) or (drops and isinstance(o, Drop))]


def _minus(
    left: Sequence[Output], right: Sequence[Output], ignored: tuple[str, ...] = DEFAULT_IGNORED
) -> tuple[Output, ...]:
    """The outputs of ``left`` that ``right`` lacks, as multisets of canonical records
    (without the ``ignored`` fields)."""
    counts = Counter(canonical(o, ignored) for o in right)
    out = []
    for output in left:
        key = canonical(output, ignored)
        if counts[key]:
            counts[key] -= 1
        else:
            out.append(output)
    return tuple(out)


def final_rows(
    outputs: Sequence[Output], by: Sequence[str] = (), batches: Sequence[int | None] | None = None
) -> list[Output]:
    """``outputs`` with each window's emissions reduced to its last row per group and
    ``aggregate_by`` value (fields ``by`` of the row): what a sink keeping one row per key
    holds at the end. Emissions count in micro-batch order where ``batches`` gives it (else
    in output order); drops stay as they are."""
    order: Sequence[int] = range(len(outputs))
    if batches is not None:
        order = sorted(order, key=lambda i: (batches[i] is None, batches[i] or 0, i))
    last: dict[str, Output] = {}
    rest: list[Output] = []
    for index in order:
        output = outputs[index]
        if not isinstance(output, Emission):
            rest.append(output)
            continue
        key = json.dumps([output.window.to_json(), output.group, [output.row.get(b) for b in by]],
                         sort_keys=True, default=str)
        last.pop(key, None)
        last[key] = output
    return [*last.values(), *rest]


def compare_run(
    expected: Sequence[Output],
    expected_batches: Sequence[int | None],
    run: TargetRun,
    *,
    drops: bool,
    timing: bool,
    exact: bool = False,
    final_by: Sequence[str] | None = None,
    ignored: Sequence[str] = (),
) -> Mismatch:
    """How ``run`` differs from the oracle's ``expected`` outputs (empty: it agrees);
    ``exact``: every field compared, ``after_seq``, ``wall_ms`` and drop messages too; with
    ``final_by`` (the ``aggregate_by`` fields) the final rows per window only; ``ignored``:
    fields the target cannot know, left out as well (a DirectRunner's ``reason``)."""
    if final_by is not None:
        want = final_rows(_compared(expected, drops), final_by)
        got = final_rows(_compared(run.outputs, drops), final_by,
                         None if run.micro_batches is None else
                         [b for o, b in zip(run.outputs, run.micro_batches, strict=True)
                          if isinstance(o, Emission) or drops])
        return Mismatch(_minus(want, got, FINAL_IGNORED), _minus(got, want, FINAL_IGNORED))
    want = _compared(expected, drops)
    got = _compared(run.outputs, drops)
    left_out = (*(() if exact else DEFAULT_IGNORED), *ignored)
    missing, unexpected = _minus(want, got, left_out), _minus(got, want, left_out)
    if missing or unexpected or not timing or run.micro_batches is None:
        return Mismatch(missing, unexpected)
    return Mismatch(timing=_late(expected, expected_batches, run))


def _late(
    expected: Sequence[Output], batches: Sequence[int | None], run: TargetRun
) -> tuple[Late, ...]:
    """Emissions equal as records whose micro-batches differ (unknown ones not compared)."""
    assert run.micro_batches is not None
    want: dict[str, list[int]] = defaultdict(list)
    got: dict[str, list[int]] = defaultdict(list)
    first: dict[str, Emission] = {}
    for outputs, where, into in ((expected, batches, want), (run.outputs, run.micro_batches, got)):
        for output, batch in zip(outputs, where, strict=True):
            if isinstance(output, Emission) and batch is not None:
                key = canonical(output, DEFAULT_IGNORED)
                into[key].append(batch)
                first.setdefault(key, output)
    late = []
    for key, got_batches in got.items():
        for expected_batch, actual_batch in zip(sorted(want[key]), sorted(got_batches), strict=False):
            if expected_batch != actual_batch:
                late.append(Late(first[key], expected_batch, actual_batch))
    return tuple(late)


def describe_output(output: Output, unit_ms: int = 1) -> str:
    """One short line for an output: window, group, row and reason, or a drop. Times read
    in the unit of ``unit_ms`` (the scenario's), ISO-8601 when epoch-scale
    (:mod:`windtunnel.oracle.model.timefmt`)."""
    if isinstance(output, Drop):
        return f"drop seq {output.seq} ({output.reason})"
    bounds = window_text(output.window, unit_ms)
    group = "" if output.group is None else f" {json.dumps(output.group, default=str)}"
    row = " ".join(f"{k}={json.dumps(v, default=str)}" for k, v in output.row.items())
    partial = " partial" if output.partial else ""
    return f"{bounds}{group} {row} ({output.reason}{partial})".replace("  ", " ")
