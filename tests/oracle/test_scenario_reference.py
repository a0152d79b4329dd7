"""docs/scenarios.md documents every key the scenario parser accepts.

The keys come from the parser's own constants (the single source of truth its "unknown key"
errors use), so a key added to the parser without documentation fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import windtunnel.oracle  # noqa: F401  (registers every profile's window kinds)
from windtunnel.oracle.clauses import QUERY_KEYS, SYNTAXES
from windtunnel.oracle.expect import DROP_KEYS, EMISSION_KEYS, EXPECT_KEYS, WINDOW_REF_KEYS
from windtunnel.oracle.model.field_specs import FIELD_TYPES
from windtunnel.oracle.model.rules import RULE_VALUES
from windtunnel.oracle.model.spec import AGGREGATE_FUNCTIONS
from windtunnel.oracle.model.timeparse import UNIT_MS
from windtunnel.oracle.profiles import PROFILES
from windtunnel.oracle.profiles.ekuiper.spec import EKUIPER_UNITS_MS, EKUIPER_WINDOWS
from windtunnel.oracle.profiles.kdb.profile import TRIGGERS
from windtunnel.oracle.profiles.timeplus.spec import TIMEPLUS_WINDOWS
from windtunnel.oracle.scenario import RESERVED_ITEM_KEYS, TOP_LEVEL_KEYS
from windtunnel.oracle.scenario_blocks import DEDUPLICATE_KEYS, FIELD_KEYS
from windtunnel.oracle.scenario_windows import WINDOW_KINDS

DOC = Path(__file__).resolve().parents[2] / "docs" / "scenarios.md"


def _documented() -> set[str]:
    """Every word written in backticks in docs/scenarios.md (``a: b`` counts ``a``)."""
    prose = re.sub(r"^```.*?^```", "", DOC.read_text(encoding="utf-8"), flags=re.M | re.S)
    spans = re.findall(r"`([^`\n]+)`", prose)
    words: set[str] = set()
    for span in spans:
        words.add(span.strip())
        words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", span))
    return words


def _accepted() -> list[tuple[str, str]]:
    keys: list[tuple[str, str]] = []
    keys += [("top-level key", k) for k in TOP_LEVEL_KEYS]
    keys += [("input item key", k) for k in RESERVED_ITEM_KEYS]
    keys += [("window key", "kind")]
    for kind, (options, _parser) in WINDOW_KINDS.items():
        keys.append(("window kind", kind))
        keys += [(f"{kind} window key", k) for k in options]
    keys += [("expect key", k) for k in EXPECT_KEYS]
    keys += [("expected emission key", k) for k in EMISSION_KEYS]
    keys += [("expected drop key", k) for k in DROP_KEYS]
    keys += [("window mapping key", k) for k in WINDOW_REF_KEYS]
    keys += [("query key", k) for k in QUERY_KEYS]
    keys += [("query syntax", k) for k in SYNTAXES]
    keys += [("rule", k) for k in RULE_VALUES]
    keys += [(f"value of rule {r}", v) for r, values in RULE_VALUES.items() for v in values]
    keys += [("profile", name) for name in PROFILES]
    keys += [("aggregate function", f) for f in AGGREGATE_FUNCTIONS]
    keys += [("time unit", u) for u in UNIT_MS]
    keys += [("kdb_global trigger", t) for t in TRIGGERS]
    keys += [("ekuiper window type", t) for t in EKUIPER_WINDOWS]
    keys += [("ekuiper unit", u) for u in EKUIPER_UNITS_MS]
    keys += [("timeplus window type", t) for t in TIMEPLUS_WINDOWS]
    keys += [("deduplicate key", k) for k in DEDUPLICATE_KEYS]
    keys += [("fields key", k) for k in FIELD_KEYS]
    keys += [("field type", t) for t in FIELD_TYPES]
    return keys


@pytest.mark.parametrize(("what", "key"), _accepted(), ids=lambda v: str(v))
def test_every_accepted_key_is_documented(what: str, key: str) -> None:
    assert key in _documented(), f"{what} `{key}` is accepted by the parser but not in {DOC.name}"


def test_the_check_fails_for_an_undocumented_key() -> None:
    assert "no_such_scenario_key" not in _documented()
    assert len(_accepted()) > 150
