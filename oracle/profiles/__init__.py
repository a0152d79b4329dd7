"""Profiles: each documented system's window semantics as named rules.

``registry`` holds :class:`Profile` and the lookup; ``builtin`` the profiles that are
rule values only (tenzir, flink, spark); ``kdb``, ``ekuiper`` and ``timeplus`` bring
their own operators and register on import (``windtunnel.oracle`` imports them).
"""

from windtunnel.oracle.profiles.builtin import FLINK, SPARK_PROFILE, TENZIR
from windtunnel.oracle.profiles.registry import (
    ARTICLE,
    EKUIPER_SOURCE,
    FLINK_SOURCE,
    PROFILES,
    PROTON_TESTS,
    SPARK,
    TENZIR_PAGE,
    TENZIR_TESTS,
    Profile,
    check_rule_owners,
    check_supported,
    profile_named,
    register,
)

__all__ = [
    "ARTICLE",
    "EKUIPER_SOURCE",
    "FLINK",
    "FLINK_SOURCE",
    "PROFILES",
    "PROTON_TESTS",
    "SPARK",
    "SPARK_PROFILE",
    "TENZIR",
    "TENZIR_PAGE",
    "TENZIR_TESTS",
    "Profile",
    "check_rule_owners",
    "check_supported",
    "profile_named",
    "register",
]
