"""Whether the user set a Spark setting themselves, outside windtunnel's calls: a session
windtunnel starts leaves such settings alone."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def named_by_user(
    key: str, flag: str | None = None, environ: Mapping[str, str] | None = None
) -> bool:
    """Whether ``key`` (``spark.driver.memory``) or its spark-submit ``flag``
    (``--driver-memory``) is in ``PYSPARK_SUBMIT_ARGS``, or ``key`` in ``spark-defaults.conf``
    (``SPARK_CONF_DIR``, else ``SPARK_HOME/conf``)."""
    env = os.environ if environ is None else environ
    submit = env.get("PYSPARK_SUBMIT_ARGS", "")
    if key in submit or (flag is not None and flag in submit):
        return True
    conf_dir = env.get("SPARK_CONF_DIR") or (
        str(Path(env["SPARK_HOME"]) / "conf") if env.get("SPARK_HOME") else None
    )
    defaults = Path(conf_dir) / "spark-defaults.conf" if conf_dir else None
    if defaults is None or not defaults.is_file():
        return False
    lines = defaults.read_text(encoding="utf-8", errors="replace").splitlines()
    return any(line.split()[:1] == [key] for line in lines)
