"""Loading windtunnel's jar: built from source, checked when it loads, and any load or link
failure demotes queries to the general path with one warning line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from windtunnel.spark_impl.jvm import binding, build

pytestmark = pytest.mark.spark

ENTRY_NEEDING_A_MISSING_CLASS = """
package windtunnel.spark;

public final class Entry {
  public static Object call(String name, Object[] args) {
    return new org.example.gone.Missing().toString();
  }
}
"""
MISSING = "package org.example.gone;\npublic final class Missing {}\n"


def _jar_linked_against_a_class_that_is_gone(tmp_path: Path) -> Path:
    """A jar whose Entry was compiled against ``org.example.gone.Missing``, which the jar
    and Spark lack at run time (as a jar built for another Spark build would)."""
    stub_src = tmp_path / "stub" / "org" / "example" / "gone"
    stub_src.mkdir(parents=True)
    (stub_src / "Missing.java").write_text(MISSING)
    stub_jar = build.compile_jar(tmp_path / "stub.jar", root=tmp_path / "stub")
    src = tmp_path / "src" / "windtunnel" / "spark"
    src.mkdir(parents=True)
    (src / "Entry.java").write_text(ENTRY_NEEDING_A_MISSING_CLASS)
    return build.compile_jar(tmp_path / "broken.jar", root=tmp_path / "src",
                             classpath=[*build.spark_jars(), stub_jar])


def test_the_jar_is_built_from_source_against_the_installed_spark(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(build.CACHE_ENV, str(tmp_path))
    path, how = build.jar_for_spark()
    assert how == "built" and path.parent == tmp_path / "jvm"
    info = build.jar_info(path)
    assert info is not None and info.current
    assert build.jar_for_spark() == (path, "cached")


def test_the_session_loads_and_checks_the_jar(spark: Any) -> None:
    loaded = binding.load(spark)
    assert loaded.jvm is not None, loaded.reason
    assert loaded.jvm.call("selfCheck", *binding_check_args(loaded.jvm)) == "ok"


def binding_check_args(jvm: binding.Jvm) -> tuple[Any, ...]:
    spec, values = binding.check_query()
    array = jvm.gateway.new_array(jvm.gateway.jvm.java.lang.Object, len(values))
    for index, value in enumerate(values):
        array[index] = jvm.gateway.jvm.java.lang.Long(value)
    return spec, array


def test_a_jar_that_does_not_link_demotes_to_the_general_path_with_one_warning(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from windtunnel.oracle.engine import DEFAULT_RULES
    from windtunnel.oracle.model.spec import Aggregation, FixedWindows, Query
    from windtunnel.spark_impl.job import JobSpec, choose_path
    from windtunnel.spark_impl.jobs.path import GENERAL

    broken = _jar_linked_against_a_class_that_is_gone(tmp_path)
    warnings: list[str] = []
    loaded = binding.load(spark, jar=broken, warn=warnings.append)
    assert loaded.jvm is None
    # the JVM names the missing class (NoClassDefFoundError or ClassNotFoundException by
    # where the link fails)
    assert "does not link with this Spark" in loaded.reason
    assert "org/example/gone/Missing" in loaded.reason.replace(".", "/")
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert warnings[0].endswith("queries run on the general path")
    binding.load(spark, jar=broken, warn=warnings.append)
    assert len(warnings) == 1, "warned once per application"

    monkeypatch.setattr(binding, "jar_for_spark", lambda: (broken, "given"))
    monkeypatch.setattr(binding, "_loaded", {})
    query = Query(FixedWindows(10, on="ts"), group_by=("k",), aggregate=(Aggregation("n", "count"),))
    choice = choose_path(JobSpec(query, DEFAULT_RULES), spark=spark,
                         checkpoint=str(tmp_path / "ckpt"))
    assert choice.path == GENERAL
    assert "org.example.gone.Missing" in choice.explain().replace("/", ".")


def test_the_shipped_jar_is_built_from_the_current_sources() -> None:
    # machines with a Java runtime but no javac load SHIPPED: it must be today's code
    info = build.jar_info(build.SHIPPED)
    assert info is not None, f"{build.SHIPPED} is missing: run python tools/build_jar.py"
    assert info.digest == build.source_digest(), "a Java source changed since the jar was built: run python tools/build_jar.py"
