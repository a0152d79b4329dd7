"""The profile registry: a profile is a named set of semantic rules, each rule with its source.

A profile is data: a :class:`Rules` value, a source per rule, the window kinds it
supports and the options it cannot express. Operators read only the rules, so a
scenario can name a profile and override single rules. Every profile module calls
:func:`register` (``builtin.py`` for tenzir, flink and spark; one subpackage per
engine with its own operators).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.rules import RULE_OWNERS, RULE_VALUES, Rules

# Public sources the profiles cite (each rule's source is a URL plus the sentence relied on).
TENZIR_PAGE = "https://docs.tenzir.com/reference/operators/window"
TENZIR_TESTS = "https://github.com/tenzir/tenzir/tree/main/test/tests/operators/window"
ARTICLE = "https://learn.padho.ai/wiki/windowing-tumbling-sliding-session"
FLINK_SOURCE = (
    "https://github.com/apache/flink/blob/master/flink-runtime/src/main/java/org/apache/flink/"
    "streaming/runtime/operators/windowing/WindowOperator.java"
)
FLINK_WATERMARKS = (
    "https://github.com/apache/flink/blob/master/flink-core/src/main/java/org/apache/flink/api/"
    "common/eventtime/BoundedOutOfOrdernessWatermarks.java"
)
FLINK_MEASURED = "Flink 2.3.0, measured (docs/engines.md, Flink; windtunnel check --target flink)"
EKUIPER_SOURCE = "https://github.com/lf-edge/ekuiper/tree/master/internal/topo/node"
PROTON_TESTS = "https://github.com/timeplus-io/proton (tests/stream/test_stream_smoke)"
SPARK = "measured with PySpark 4.3.0 (docs/semantics.md, Spark)"


@dataclass(frozen=True, slots=True)
class Profile:
    """A named :class:`Rules` value.

    ``sources`` maps a rule name to where it comes from; ``kinds`` lists the window
    kinds the profile supports (empty: every registered kind); ``unsupported`` maps a
    window option (``idle_timeout``, ``max_events``, ...) or ``pass_through`` (no
    aggregate) or ``ungrouped_session`` or ``session_update`` (sessions in output mode
    ``update``) or a stage before the window (``where``, ``deduplicate``) to why the engine
    cannot express it; ``options`` lists the opt-in window options (:data:`OPT_IN_OPTIONS`)
    the profile accepts; ``output_modes`` lists the query output modes it models
    (``append``: each window emitted once).
    """

    name: str
    summary: str
    rules: Rules
    sources: Mapping[str, str] = field(default_factory=dict)
    kinds: tuple[str, ...] = ()
    unsupported: Mapping[str, str] = field(default_factory=dict)
    options: tuple[str, ...] = ()
    output_modes: tuple[str, ...] = ("append",)

    def __post_init__(self) -> None:
        unknown = set(self.sources) - set(RULE_VALUES)
        if unknown:
            raise InvalidSpec(
                f"profile {self.name}.sources", sorted(unknown)[0], "not a rule", "fix the name"
            )
        foreign = {
            rule: f"not applicable to {self.name} (a {owner} rule; kept default)"
            for rule, owner in RULE_OWNERS.items() if owner != self.name
        }
        if any(rule not in self.sources for rule in foreign):
            object.__setattr__(self, "sources", {**foreign, **self.sources})

    def source(self, rule: str) -> str:
        """Where ``rule``'s value in this profile comes from ("" if not recorded)."""
        return self.sources.get(rule, "")


OPT_IN_OPTIONS: tuple[str, ...] = ("allowed_lateness",)
"""Window options only the profiles naming them in ``Profile.options`` accept (Flink's)."""


def check_supported(profile: Profile, query: Any) -> None:
    """Raise InvalidSpec when ``query`` uses a kind or option ``profile`` cannot express."""
    window = query.window
    kind = getattr(window, "kind", type(window).__name__)
    mode = getattr(query, "output_mode", "append")
    if mode not in profile.output_modes:
        raise InvalidSpec(
            "output_mode", mode,
            f"not modelled for profile {profile.name} (output modes are Spark's)",
            "remove output_mode, or use profile: spark",
        )
    for option in OPT_IN_OPTIONS:
        given = getattr(window, f"{option}_ms", None)
        if given is not None and option not in profile.options:
            takers = ", ".join(p.name for p in PROFILES.values() if option in p.options)
            raise InvalidSpec(
                f"window.{option}", given, f"not supported by profile {profile.name}",
                f"remove {option} or use profile {takers or 'flink'}",
            )
    if profile.kinds and kind not in profile.kinds:
        takers = ", ".join(p.name for p in PROFILES.values() if kind in p.kinds)
        raise InvalidSpec(
            "window.kind",
            kind,
            f"not supported by profile {profile.name}",
            f"use one of {', '.join(profile.kinds)}, or profile {takers} for {kind}"
            if takers else f"use one of {', '.join(profile.kinds)} or another profile",
        )
    for option, why in profile.unsupported.items():
        value: Any
        if option == "pass_through":
            used = query.aggregate is None
            where, value, fix = "aggregate", None, "add aggregate: {n: count()}"
        elif option == "ungrouped_session":
            used = kind == "session" and not query.group_by
            where, value, fix = "group_by", [], "add group_by: [user]"
        elif option == "session_update":
            used = kind == "session" and mode == "update"
            where, value, fix = "output_mode", mode, "use output_mode: append or complete"
        elif option in ("where", "deduplicate"):  # stages before the window
            found = [s for s in getattr(query, "stages", ()) if s.kind == option]
            used = bool(found)
            value = str(found[0]) if found else None
            where, fix = option, f"remove {option}: or use another profile"
        else:
            value = getattr(window, f"{option}_ms", getattr(window, option, None))
            used = value is not None and (option != "tolerance" or value != 0)
            where, fix = f"window.{option}", f"remove {option} or use another profile"
        if used:
            raise InvalidSpec(where, value, f"not supported by profile {profile.name}: {why}", fix)


def check_rule_owners(profile: str, rules: Rules) -> None:
    """Raise InvalidSpec when ``rules`` changes a rule only another profile's operator reads
    (:data:`~windtunnel.oracle.model.rules.RULE_OWNERS`)."""
    default = Rules()
    for rule, owner in RULE_OWNERS.items():
        value = getattr(rules, rule)
        if owner != profile and value != getattr(default, rule):
            raise InvalidSpec(f"rules.{rule}", value, f"a rule of profile {owner} only",
                              f"remove it, or use profile: {owner}")


PROFILES: dict[str, Profile] = {}


def register(profile: Profile) -> Profile:
    """Add ``profile`` to :data:`PROFILES` (used by the modules defining profiles)."""
    PROFILES[profile.name] = profile
    return profile


def profile_named(name: object) -> Profile:
    """The profile called ``name``; raises InvalidSpec listing the known profiles."""
    if isinstance(name, str) and name in PROFILES:
        return PROFILES[name]
    raise InvalidSpec("profile", name, "unknown profile", f"use one of {', '.join(PROFILES)}")
