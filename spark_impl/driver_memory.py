"""The driver heap of a local session: a quarter of the machine's (or its container's) memory,
unless the user chose one."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from windtunnel.spark_impl.user_settings import named_by_user

LOCAL_DRIVER_MEMORY_CAP_MB = 4096
"""The driver heap a local session gets unless configured: a quarter of the machine's memory
up to this (Spark's own default is 1 GB, which a local session's tasks share with the driver;
docs/spark.md, "Speed", says what it costs the production operator)."""


def local_driver_memory(
    physical_bytes: int | None = None, environ: Mapping[str, str] | None = None
) -> str | None:
    """``spark.driver.memory`` for a local session (``"4096m"``: a quarter of
    ``physical_bytes``, the machine's memory by default, between 1 GB and
    LOCAL_DRIVER_MEMORY_CAP_MB), or None when the user chose it already: ``--driver-memory``
    or ``spark.driver.memory`` in ``PYSPARK_SUBMIT_ARGS``, or ``spark.driver.memory`` in
    ``spark-defaults.conf`` (``SPARK_CONF_DIR``, else ``SPARK_HOME/conf``)."""
    if named_by_user("spark.driver.memory", "--driver-memory", environ):
        return None
    if physical_bytes is None:
        physical_bytes = machine_memory()
        if physical_bytes is None:
            return None
    quarter_mb = physical_bytes // 4 // (1024 * 1024)
    return f"{max(1024, min(LOCAL_DRIVER_MEMORY_CAP_MB, quarter_mb))}m"


CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
"""Where a container's memory limit is (cgroup v2, v1); the JVM sizes its heap by it too."""


def machine_memory() -> int | None:
    """The machine's memory in bytes, or its container's limit when lower; None if unknown."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    for limit in map(Path, CGROUP_LIMITS):
        try:
            text = limit.read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            memory = min(memory, int(text))
    return memory
