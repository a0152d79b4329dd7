"""The benchmarks of checking itself run their smallest meaningful slice: ``windtunnel
check`` as a user runs it (one job shape, both sides: each command must pass and check as
many scenarios) and mutation testing (the sanity mutant alone: the copy of the tree is
what the tests import, its test selection passes unmutated and the mutant is killed; a
semantic mutant's selection costs tens of seconds more). Both start other processes: a cold CLI and JVM, pytest on a copy of the tree."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest

pytestmark = pytest.mark.process


@pytest.mark.slow
@pytest.mark.spark
def test_the_cli_check_benchmark_passes_on_both_sides_at_a_tiny_size(
    benchmark: Callable[[str], ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    benchmark("check_cli").main(["--shapes", "logins_per_user", "--examples", "1"])
    out = capsys.readouterr().out
    assert "logins_per_user:" in out and "x wall" in out, out


def test_the_mutation_benchmark_kills_its_smallest_slice(
    benchmark: Callable[[str], ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    code = benchmark("mutation").main(["--only", "sanity-import-breaks"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "killed 1/1 mutants" in out, out
