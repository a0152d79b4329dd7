"""The SparkSession of a pytest run: started once, on first use, by the scenarios that run
on Spark and by the ``windtunnel_spark`` fixture. Imports only pytest at load; Spark and
windtunnel's Spark side are imported when a session is first needed."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest


def spark_replay() -> Any:
    """``windtunnel.spark_impl.harness.replay`` (MissingExtra without the ``spark`` extra)."""
    from windtunnel.oracle.model.extras import requires_extra

    with requires_extra("spark", "--windtunnel-target spark"):
        from windtunnel.spark_impl.harness import replay  # type: ignore[import-not-found,unused-ignore]
    return replay


def session(config: pytest.Config) -> Any:
    """The SparkSession for this run (started once; getOrCreate reuses a running one).
    Skips the test without the ``spark`` extra; fails it when Spark cannot start."""
    from windtunnel.oracle.model.errors import EngineUnavailable, MissingExtra
    from windtunnel.oracle.model.extras import requires_extra

    try:
        with requires_extra("spark", "the windtunnel_spark fixture"):
            from windtunnel.spark_impl.session import (  # type: ignore[import-not-found,unused-ignore]
                CHECK_CONF,
                spark_session,
            )

            spark = spark_session(
                config.getoption("--windtunnel-master"), config.getoption("--windtunnel-remote"),
                conf=CHECK_CONF, local_files=True, closure_checks=True,
            )
    except MissingExtra as exc:
        pytest.skip(str(exc))
    except EngineUnavailable as exc:
        pytest.fail(f"windtunnel_spark: {exc}", pytrace=False)
    with contextlib.suppress(Exception):  # Spark Connect sessions have no SparkContext
        spark.sparkContext.setLogLevel("ERROR")
    return spark


@pytest.fixture(scope="session")
def windtunnel_spark(pytestconfig: pytest.Config) -> Any:
    """The session's SparkSession: windtunnel's ``spark_session()`` (UTC, RocksDB state
    store, no UI; docs/spark.md), local unless ``--windtunnel-master``/``--windtunnel-remote``."""
    return session(pytestconfig)

