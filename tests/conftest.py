"""The quick tier: ``pytest --quick`` runs every test that needs nothing but this Python
process, each Hypothesis property with a twentieth of its examples.

- Deselected: tests marked ``spark`` (a SparkSession) or ``process`` (another program: a
  JVM, a broker, an engine, a server, a fresh Python, a type checker; or real waiting); the
  engine markers ``kafka``, ``tenzir``, ``flink`` and ``cluster`` imply ``process``.
- Hypothesis: every property runs :func:`quick_examples` of its ``max_examples`` (its own
  ``@settings`` or the default profile's). The full run (no ``--quick``, as CI runs it)
  keeps every example and every test.
"""

from __future__ import annotations

from typing import Any

import pytest

ENGINES = ("kafka", "tenzir", "flink", "cluster")
"""Markers of tests that start an engine, a broker or a server: ``process`` too."""

SHARE = 20
"""The quick tier runs one in this many of a property's examples."""

FLOOR = 3
"""And at least this many (never more than all)."""


def quick_examples(max_examples: int) -> int:
    """A property's examples in the quick tier (:data:`SHARE`, :data:`FLOOR`)."""
    return min(max_examples, max(FLOOR, max_examples // SHARE))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--quick", action="store_true", default=False,
        help="the quick tier: skip spark- and process-marked tests, and run each Hypothesis "
        "property with a twentieth of its examples",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(name) for name in ENGINES):
            item.add_marker(pytest.mark.process)
    if not config.getoption("--quick"):
        return
    kept, dropped = [], []
    for item in items:
        slow = item.get_closest_marker("spark") or item.get_closest_marker("process")
        (dropped if slow else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    scaled: set[int] = set()
    for item in kept:
        test = getattr(item, "obj", None)
        if test is None or id(test) in scaled:
            continue
        _fewer_examples(test)
        scaled.add(id(test))


def _fewer_examples(test: Any) -> None:
    """A Hypothesis test's settings with :func:`quick_examples` of its examples (Hypothesis
    reads them from the test when it runs; a test that is not one is left alone)."""
    from hypothesis import settings

    current = getattr(test, "_hypothesis_internal_use_settings", None)
    if isinstance(current, settings):
        test._hypothesis_internal_use_settings = settings(
            current, max_examples=quick_examples(current.max_examples))
