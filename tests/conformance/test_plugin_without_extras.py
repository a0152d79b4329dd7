"""The auto-loaded plugin never breaks a pytest run: without pyspark, a scenario under
``--windtunnel-engine spark`` is skipped with the install hint, other tests still pass."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.process  # runs pytest in a fresh Python

ROOT = Path(__file__).resolve().parents[2]
NO_SPARK = """
import sys


class Absent:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.partition(".")[0] in ("pyspark", "pandas"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Absent)
"""


def test_spark_scenarios_are_skipped_with_the_install_hint(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nwindtunnel_scenarios = *.yaml\n")
    pytester.makeconftest(NO_SPARK)
    (pytester.path / "brute-force.yaml").write_text((ROOT / "examples" / "brute-force.yaml").read_text())
    pytester.makepyfile(test_x="def test_one():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs", "--windtunnel-engine", "spark")
    result.assert_outcomes(passed=1, skipped=1)
    skipped = [line for line in result.outlines if line.startswith("SKIPPED")]
    assert len(skipped) == 1
    assert "module=pyspark is not installed" in skipped[0]
    assert "pip install 'windtunnel[spark]'" in skipped[0]


def test_the_plugin_module_imports_only_pytest_at_load(pytester: pytest.Pytester) -> None:
    """Loading the plugin pulls in none of windtunnel's parts (a broken or partial install
    cannot stop pytest from starting)."""
    pytester.makepyfile(
        test_x="""
        import sys

        PLUGIN = {"windtunnel.conformance", "windtunnel.conformance.plugin",
                  *(f"windtunnel.conformance.plugin.{m}"
                    for m in ("options", "collection", "spark", "fixtures"))}

        def test_nothing_of_windtunnel_loaded():
            loaded = sorted(m for m in sys.modules if m.startswith("windtunnel."))
            assert "windtunnel.conformance.plugin" in loaded
            assert [m for m in loaded if m not in PLUGIN] == []
        """
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
