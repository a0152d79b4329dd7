"""The driver heap a local session gets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from windtunnel.spark_impl.driver_memory import local_driver_memory

GIB = 1024**3


@pytest.mark.parametrize(
    ("physical_bytes", "memory"),
    [(24 * GIB, "4096m"), (8 * GIB, "2048m"), (2 * GIB, "1024m"), (64 * GIB, "4096m")],
)
def test_a_local_driver_gets_a_quarter_of_the_memory_up_to_4g(
    physical_bytes: int, memory: str
) -> None:
    assert local_driver_memory(physical_bytes, environ={}) == memory


@pytest.mark.parametrize(
    "submit_args",
    ["--driver-memory 2g pyspark-shell", "--conf spark.driver.memory=2g pyspark-shell"],
)
def test_the_users_submit_args_keep_their_driver_memory(submit_args: str) -> None:
    assert local_driver_memory(24 * GIB, environ={"PYSPARK_SUBMIT_ARGS": submit_args}) is None


def test_the_users_spark_defaults_keep_their_driver_memory(tmp_path: Path) -> None:
    (tmp_path / "spark-defaults.conf").write_text("# mine\nspark.driver.memory   3g\n")
    assert local_driver_memory(24 * GIB, environ={"SPARK_CONF_DIR": str(tmp_path)}) is None
    (tmp_path / "spark-defaults.conf").write_text("spark.executor.memory 3g\n")
    assert local_driver_memory(24 * GIB, environ={"SPARK_CONF_DIR": str(tmp_path)}) == "4096m"


@pytest.mark.spark
def test_the_local_session_runs_with_that_heap(spark: Any) -> None:
    """The test run's own session was built by spark_session: its JVM has the heap."""
    expected = local_driver_memory()
    jvm = spark.sparkContext._jvm
    max_mb = jvm.java.lang.Runtime.getRuntime().maxMemory() // (1024 * 1024)
    assert expected is not None
    # the JVM reports the heap less one survivor space: within 15% of what was asked
    assert int(expected.removesuffix("m")) * 0.85 <= max_mb <= int(expected.removesuffix("m"))
