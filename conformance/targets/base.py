"""The target contract and the targets that need no engine: the leaf of the targets package.

A target turns scenarios into outputs (emissions, and drops if it reports them). It
runs many scenarios per call (:meth:`Target.run_many`) so that an engine with a high
per-query cost (a Spark streaming query) pays it once per call, not once per scenario.
A target may also have ``solo()`` (the same target with each scenario in a query of its
own, for shrinking: a Spark job) and ``plan(scenario)`` (what the implementation's plan
says it does, a :class:`~windtunnel.conformance.job_plan.JobPlan`: a Spark job, a Flink SQL
query); :mod:`windtunnel.conformance.failure` uses them where present.

Here: :class:`TargetRun` and the :class:`Target` protocol, :func:`oracle_target` (the
oracle under a profile: a cheap stand-in, and the reference in tests),
:func:`callable_target` (any Python callable from a scenario to outputs) and
:func:`load_function`. This module imports nothing else of the package: the engine
targets (``spark``, ``tenzir``, ...) build on it, and the registry
(:mod:`windtunnel.conformance.targets.registry`) names them.

Micro-batches: a scenario's ``batch`` items are micro-batches and lone events go one
per micro-batch; ``advance`` items join the micro-batch being built; end of input rides
in the last one (:func:`micro_batch_of_seq`, :func:`micro_batch_of_items`). The oracle's
outputs are tagged with the micro-batch of the input item during which they happened
(:func:`oracle_micro_batches_of`): an idle window closed by a later ``advance`` or by a
later event's arrival time comes out in that later micro-batch, as on Spark.
"""

from __future__ import annotations

import importlib
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from windtunnel.conformance.differential import canonical
from windtunnel.oracle.engine import operator_for, run
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.results import Emission, Output
from windtunnel.oracle.model.stream import Advance, Batch, End, Event, Item, checked
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.scenario import Scenario
from windtunnel.oracle.windows.driver import Driver


@dataclass(frozen=True, slots=True)
class TargetRun:
    """What a target produced for one scenario.

    ``micro_batches``: per output, the micro-batch it came out in (None for an output
    whose micro-batch is unknown); None when the target does not report timing.
    """

    outputs: tuple[Output, ...]
    micro_batches: tuple[int | None, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.outputs, tuple):
            raise InvalidSpec(
                "TargetRun.outputs", self.outputs, "must be a tuple", "wrap them in tuple(...)"
            )
        if self.micro_batches is not None and len(self.micro_batches) != len(self.outputs):
            raise InvalidSpec(
                "TargetRun.micro_batches",
                len(self.micro_batches),
                f"needs one entry per output ({len(self.outputs)})",
                "give None for an output whose micro-batch is unknown, or micro_batches=None",
            )


@runtime_checkable
class Target(Protocol):
    """An implementation under check: ``name``, what it reports, and a batched run."""

    @property
    def name(self) -> str:
        """Shown in reports (``spark-stock``, ``oracle:flink``, ``my_jobs:windowed``)."""
        ...

    @property
    def reports_drops(self) -> bool:
        """Whether its outputs include drops (else drops are not compared)."""
        ...

    @property
    def reports_timing(self) -> bool:
        """Whether :attr:`TargetRun.micro_batches` is given (else timing is not compared)."""
        ...

    def run_many(self, scenarios: Sequence[Scenario]) -> list[TargetRun]:
        """One :class:`TargetRun` per scenario, in order."""
        ...


def micro_batch_of_seq(items: Iterable[Item]) -> dict[int, int]:
    """The micro-batch index (0, 1, ...) of every event seq: each ``Batch`` is one
    micro-batch, lone events one each; ``Advance`` items join the micro-batch being
    built (an advance right before a batch is a micro-batch of its own)."""
    index = 0
    pending = False  # the micro-batch being built holds advances only
    found: dict[int, int] = {}
    for item in items:
        if isinstance(item, Advance):
            pending = True
        elif isinstance(item, Batch):
            if pending:
                index += 1
            for event in item.events:
                found[event.seq] = index
            index += 1
            pending = False
        elif isinstance(item, Event):
            found[item.seq] = index
            index += 1
            pending = False
        elif isinstance(item, End):
            break
    return found


def micro_batch_of_items(items: Sequence[Item]) -> list[int]:
    """The micro-batch of every item, numbered as :func:`micro_batch_of_seq` numbers
    events: an ``advance`` belongs to the micro-batch being built, and the end of input
    (and anything after the last micro-batch) to the last one."""
    index = 0
    pending = False
    found: list[int] = []
    for item in items:
        if isinstance(item, Advance):
            pending = True
            found.append(index)
        elif isinstance(item, Batch):
            if pending:
                index += 1
            found.append(index)
            index += 1
            pending = False
        elif isinstance(item, Event):
            found.append(index)
            index += 1
            pending = False
        else:
            found.append(index if pending else max(index - 1, 0))
    return found


def oracle_micro_batches_of(
    scenario: Scenario, outputs: Sequence[Output], profile: str | None = None
) -> tuple[int | None, ...]:
    """Per output of ``outputs`` (the oracle's for ``scenario`` under ``profile``), the
    micro-batch of the input item during which the oracle produced it; None for drops.

    The oracle is fed item by item (no fast path) and its outputs are matched to
    ``outputs`` as multisets of canonical JSON lines, so the fast paths' outputs get the
    same tags as the reference's."""
    name = profile or scenario.profile.name
    rules = profile_named(name).rules.with_overrides(dict(scenario.rule_overrides))
    driver = Driver(
        scenario.query,
        lambda q, ctx: operator_for(q, ctx, name),
        rules,
        time_unit_ms=scenario.time_unit_ms,
        start_wall_ms=scenario.start_wall_ms,
        profile=name,
    )
    items = list(checked(scenario.items, scenario.start_wall_ms))
    tags: dict[str, list[int]] = {}
    for item, batch in zip(items, micro_batch_of_items(items), strict=True):
        produced: list[Output] = []
        driver.feed(item, produced)
        for output in produced:
            tags.setdefault(canonical(output, ()), []).append(batch)
    found: list[int | None] = []
    for output in outputs:
        queue = tags.get(canonical(output, ()), [])
        found.append(queue.pop(0) if isinstance(output, Emission) and queue else None)
    return tuple(found)


def oracle_micro_batches(
    outputs: Sequence[Output], items: Iterable[Item]
) -> tuple[int | None, ...]:
    """Per output, the micro-batch of the event its emission followed (``after_seq``);
    None for drops and for emissions before any event."""
    where = micro_batch_of_seq(items)
    return tuple(
        where.get(o.after_seq) if isinstance(o, Emission) and o.after_seq is not None else None
        for o in outputs
    )


def oracle_outputs(scenario: Scenario, profile: str | None = None) -> tuple[Output, ...]:
    """The oracle's outputs for ``scenario`` under ``profile`` (default: the scenario's
    own), with the scenario's ``rules:`` overrides applied on top of the profile's rules.
    Raises InvalidSpec when the profile cannot run the scenario's window."""
    name = profile or scenario.profile.name
    rules = profile_named(name).rules.with_overrides(dict(scenario.rule_overrides))
    return run(
        scenario.query,
        scenario.items,
        rules=rules,
        profile=name,
        time_unit_ms=scenario.time_unit_ms,
        start_wall_ms=scenario.start_wall_ms,
    ).outputs


@dataclass(frozen=True, slots=True)
class OracleTarget:
    """The oracle under ``profile`` as a target; reports drops and micro-batch timing."""

    profile: str
    name: str = ""
    reports_drops: bool = True
    reports_timing: bool = True

    def __post_init__(self) -> None:
        profile_named(self.profile)  # raises InvalidSpec for an unknown profile
        if not self.name:
            object.__setattr__(self, "name", f"oracle:{self.profile}")

    def run_many(self, scenarios: Sequence[Scenario]) -> list[TargetRun]:
        runs = []
        for scenario in scenarios:
            outputs = oracle_outputs(scenario, self.profile)
            runs.append(TargetRun(outputs, oracle_micro_batches_of(scenario, outputs, self.profile)))
        return runs


def oracle_target(profile: str) -> OracleTarget:
    """The oracle under ``profile``; raises InvalidSpec for an unknown profile."""
    return OracleTarget(profile)


ScenarioFunction = Callable[[Scenario], "Sequence[Output] | TargetRun"]


@dataclass(frozen=True, slots=True)
class CallableTarget:
    """Any Python callable from a scenario to its outputs (or a :class:`TargetRun`)."""

    function: ScenarioFunction
    name: str
    reports_drops: bool = False
    reports_timing: bool = False

    def run_many(self, scenarios: Sequence[Scenario]) -> list[TargetRun]:
        runs = []
        for scenario in scenarios:
            got = self.function(scenario)
            runs.append(got if isinstance(got, TargetRun) else TargetRun(tuple(got)))
        return runs


def callable_target(
    fn: ScenarioFunction,
    name: str | None = None,
    reports_drops: bool = False,
    reports_timing: bool = False,
) -> CallableTarget:
    """Wrap ``fn(scenario) -> outputs`` as a target (``run_many`` maps it)."""
    if not callable(fn):
        raise InvalidSpec("target", fn, "must be callable", "give a function scenario -> outputs")
    label = name or getattr(fn, "__qualname__", None) or repr(fn)
    return CallableTarget(fn, label, reports_drops, reports_timing)


def _innermost_file_line(exc: BaseException) -> str | None:
    """``path:line`` of the innermost frame of ``exc``'s traceback in a real file (not
    importlib's frozen frames)."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if not frame.filename.startswith("<"):
            return f"{frame.filename}:{frame.lineno}"
    return None


def import_failure(exc: BaseException, module_name: str) -> tuple[str, str]:
    """The rule and fix for a module that failed to import: not found, a syntax error
    (file and line), or an exception while its code ran (its innermost file and line)."""
    if isinstance(exc, SyntaxError):
        spot = f"{exc.filename}:{exc.lineno}" if exc.filename else "?"
        return (f"module {module_name!r} cannot be imported: a syntax error at {spot}: {exc.msg}",
                "fix the syntax there")
    top = module_name.split(".")
    missing = getattr(exc, "name", None)
    if isinstance(exc, ModuleNotFoundError) and missing in {
        ".".join(top[: i + 1]) for i in range(len(top))
    }:
        return (f"module {module_name!r} cannot be imported: it is not found",
                "check the name and that its directory is on PYTHONPATH")
    where = _innermost_file_line(exc)
    at = f" at {where}" if where else ""
    return (f"module {module_name!r} cannot be imported: it raised{at} {type(exc).__name__}: {exc}",
            "fix the module (or install what it imports)")


def load_function(spec: str, option: str = "--job") -> Callable[..., Any]:
    """Import ``module:function`` (dotted attribute paths allowed after the colon).

    Raises InvalidSpec naming ``option`` when the form is wrong, the module cannot be
    imported (its file and line for a syntax error or an exception inside it) or the
    attribute is missing or not callable.
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise InvalidSpec(option, spec, "must be module:function", "write e.g. my_jobs:windowed")
    try:
        found: Any = importlib.import_module(module_name)
    except Exception as exc:  # the module's own code failed: name the file and line
        raise InvalidSpec(option, spec, *import_failure(exc, module_name)) from None
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise InvalidSpec(
                option, spec, f"{module_name} has no attribute {attribute!r}", "check the name"
            )
        found = getattr(found, part)
    if not callable(found):
        raise InvalidSpec(option, spec, "is not callable", "name a function")
    return found  # type: ignore[no-any-return]


TargetFactory = Callable[[Any], Target]
"""Builds a target from a Spark session (or None: the target starts what it needs)."""


@dataclass(frozen=True, slots=True)
class TargetEntry:
    """A named target: its factory, a one-line description, and the oracle profile that
    stands in for it when shrinking (None: shrink against the target itself)."""

    factory: TargetFactory
    description: str
    stand_in: str | None = None

    def __post_init__(self) -> None:
        if not callable(self.factory):
            raise InvalidSpec(
                "TargetEntry.factory", self.factory, "must be callable",
                "give a function spark -> Target",
            )
