"""A judge: runs scenarios on a target and says which diverge from the oracle under a
profile (:func:`~windtunnel.conformance.mismatch.compare_run`), remembering every verdict so
that a stream is run once."""

from __future__ import annotations

from collections.abc import Sequence

from windtunnel.conformance.mismatch import Mismatch, compare_run
from windtunnel.conformance.targets import (
    Target,
    TargetRun,
    oracle_micro_batches_of,
    oracle_outputs,
)
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.results import Output
from windtunnel.oracle.scenario import Scenario

Verdict = tuple[Mismatch, TargetRun]


class Judge:
    """Runs scenarios on ``target`` and compares them with the oracle under ``profile``
    (``compare``: ``rows`` or ``final``)."""

    def __init__(self, target: Target, profile: str, compare: str = "rows") -> None:
        self.target = target
        self.profile = profile
        self.compare = compare
        self._verdicts: dict[str, Verdict] = {}

    def expected(self, scenario: Scenario) -> tuple[Output, ...]:
        return oracle_outputs(scenario, self.profile)

    def known(self, scenario: Scenario) -> Verdict | None:
        """The verdict already reached on ``scenario``'s stream, if any."""
        return self._verdicts.get(repr(scenario.items))

    def remember(self, scenario: Scenario, verdict: Verdict) -> None:
        """Take ``verdict`` as this judge's on ``scenario``'s stream (reached elsewhere on
        the same target)."""
        self._verdicts[repr(scenario.items)] = verdict

    def judge(self, scenarios: Sequence[Scenario]) -> list[Verdict]:
        """Each scenario's mismatch (empty: it agrees) and run. Raises InvalidSpec when the
        target returns another number of runs, and what the target raises."""
        runs = self.target.run_many(scenarios)
        if len(runs) != len(scenarios):
            raise InvalidSpec(
                "target",
                self.target.name,
                f"returned {len(runs)} runs for {len(scenarios)} scenarios",
                "return one TargetRun per scenario from run_many",
            )
        out = []
        for scenario, got in zip(scenarios, runs, strict=True):
            want = self.expected(scenario)
            timing = self.target.reports_timing
            final = self.compare == "final"
            mismatch = compare_run(
                want,
                oracle_micro_batches_of(scenario, want, self.profile) if timing and not final
                else (),
                got,
                drops=self.target.reports_drops,
                timing=self.target.reports_timing,
                exact=bool(getattr(self.target, "exact", False)),
                final_by=scenario.query.aggregate_by if final else None,
                ignored=tuple(getattr(self.target, "ignored", ())),
            )
            self._verdicts[repr(scenario.items)] = (mismatch, got)
            out.append((mismatch, got))
        return out

    def fails(self, scenarios: Sequence[Scenario]) -> list[bool]:
        """Whether each scenario diverges."""
        return [bool(m) for m, _ in self.judge(scenarios)]

    def fails_or_not_run(self, scenarios: Sequence[Scenario]) -> list[bool]:
        """:meth:`fails`, with scenarios the target refuses to run (InvalidSpec) counted as
        not failing: while shrinking, a stream the target cannot take is no counterexample."""
        try:
            return self.fails(scenarios)
        except InvalidSpec:
            return [False] * len(scenarios)

    def mismatch_of(self, scenario: Scenario) -> Mismatch | None:
        """The remembered mismatch of ``scenario``'s stream (None: not judged yet)."""
        verdict = self.known(scenario)
        return None if verdict is None else verdict[0]
