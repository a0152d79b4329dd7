"""Targets: the implementations ``windtunnel check`` holds against the oracle.

- :mod:`~windtunnel.conformance.targets.base`: the contract (:class:`Target`,
  :class:`TargetRun`, :class:`TargetEntry`), micro-batch numbering, and the targets that
  need no engine (the oracle under a profile, any Python callable); imports nothing else
  of the package;
- :mod:`~windtunnel.conformance.targets.spark`, :mod:`~windtunnel.conformance.targets.tenzir`:
  the engine targets, each built on ``base`` alone;
- :mod:`~windtunnel.conformance.targets.registry`: targets by name, built-in and from the
  ``windtunnel.targets`` entry points of other packages.

This package re-exports the names users import (``from windtunnel.conformance.targets
import target_named, oracle_target, ...``).
"""

from windtunnel.conformance.targets.base import (
    CallableTarget,
    OracleTarget,
    Target,
    TargetEntry,
    TargetFactory,
    TargetRun,
    callable_target,
    load_function,
    micro_batch_of_items,
    micro_batch_of_seq,
    oracle_micro_batches,
    oracle_micro_batches_of,
    oracle_outputs,
    oracle_target,
)
from windtunnel.conformance.targets.registry import (
    GROUP,
    TARGETS,
    describe_targets,
    entry_point_problems,
    is_named,
    known_targets,
    register_target,
    stand_in_of,
    target_named,
    targets,
)

__all__ = [
    "GROUP",
    "TARGETS",
    "CallableTarget",
    "OracleTarget",
    "Target",
    "TargetEntry",
    "TargetFactory",
    "TargetRun",
    "callable_target",
    "describe_targets",
    "entry_point_problems",
    "is_named",
    "known_targets",
    "load_function",
    "micro_batch_of_items",
    "micro_batch_of_seq",
    "oracle_micro_batches",
    "oracle_micro_batches_of",
    "oracle_outputs",
    "oracle_target",
    "register_target",
    "stand_in_of",
    "target_named",
    "targets",
]
