"""One SparkSession for the whole test run (built only when a Spark test asks for it)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Any:
    """The shared local session (getOrCreate: CLI commands in the same run reuse it)."""
    from windtunnel.spark_impl.session import spark_session

    session = spark_session(shuffle_partitions=2)
    session.sparkContext.setLogLevel("ERROR")
    return session
