"""The simulator's benchmarks run at a tiny size in this process, their checks against the
naive Faker loop included (the records it times have the loop's fields and types): a check
that fails raises AssertionError."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest

RUNS = {
    "simulator": (
        ["--events", "1000", "--naive", "50", "--memory-events", "500", "1000", "--repeat", "1"],
        "check: the payload stream's records have the naive loop's 7 fields and types",
    ),
    "generate_e2e": (
        ["--events", "200", "--naive", "20", "--repeat", "1"],
        "check: auth spark-dir holds 200 records, the naive loop's fields and types",
    ),
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_the_generator_benchmark_writes_the_naive_loops_records_at_a_tiny_size(
    name: str, benchmark: Callable[[str], ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    arguments, check = RUNS[name]
    benchmark(name).main(arguments)
    out = capsys.readouterr().out
    assert check in out, out
    assert "ratio" in out, out
