"""One SparkSession for the whole test run (only built when a Spark test asks for it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from windtunnel.spark_impl.session import spark_session

    session = spark_session(shuffle_partitions=2)
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
