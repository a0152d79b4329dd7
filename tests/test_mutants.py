"""The mutant registry (tools/mutants.py) cannot rot silently: every mutant's snippet
occurs exactly once in its file, changes it, and names tests that exist. Runs no mutant
(``python benchmarks/mutation.py`` does)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _registry() -> ModuleType:
    spec = importlib.util.spec_from_file_location("windtunnel_mutants", ROOT / "tools" / "mutants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


MUTANTS = _registry().MUTANTS


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.id)
def test_snippet_occurs_exactly_once_and_tests_exist(mutant) -> None:
    text = (ROOT / mutant.path).read_text(encoding="utf-8")
    assert text.count(mutant.original) == 1, f"{mutant.id}: snippet not exactly once in {mutant.path}"
    assert text.replace(mutant.original, mutant.replacement) != text
    for test in mutant.tests:
        if not test.startswith("-") and test != "not spark":
            assert (ROOT / test.split("::")[0]).is_file(), test


def test_ids_are_unique_and_the_issue_list_is_covered() -> None:
    ids = [m.id for m in MUTANTS]
    assert len(ids) == len(set(ids))
    semantic = [m for m in MUTANTS if not m.id.startswith("sanity")]
    assert len(semantic) >= 20
    paths = {m.path.split("/")[0] + "/" + m.path.split("/")[1] for m in semantic}
    assert {"oracle/windows", "oracle/model", "oracle/profiles"} <= paths
    assert any(m.path.startswith("spark_impl/") for m in semantic)


def test_unknown_id_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="known: sanity-import-breaks"):
        _registry().mutant_named("nope")
