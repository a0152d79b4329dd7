"""windtunnel on Spark Structured Streaming.

The public API, imported lazily so that ``import windtunnel.spark_impl.session`` stays
light (PySpark loads only when one of these names is used):

- :func:`apply_window`: the general operator: the default profile's windows on any streaming or batch DataFrame,
  exact per event (``windtunnel.spark_impl.general.operator``);
- :func:`stock_window`: the same spec compiled to stock ``window()``/``session_window()``
  with ``withWatermark`` (``windtunnel.spark_impl.stock.mapping``);
- :func:`run_job`, :class:`Sink`, :func:`load_job_spec`, :func:`records_source`,
  :func:`kafka_source`, :func:`dataframe_source`: windowed jobs (``windtunnel.spark_impl.job``);
- :func:`replay_scenario`, :func:`compare_with_oracle`: scenarios on Spark
  (``windtunnel.spark_impl.harness.replay``);
- :func:`spark_session`: local, ``spark://`` or ``sc://`` sessions (``windtunnel.spark_impl.session``).
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "apply_window": "general.operator",
    "stock_window": "stock.mapping",
    "run_job": "jobs.run",
    "Sink": "jobs.sinks",
    "load_job_spec": "jobs.spec",
    "records_source": "jobs.sources",
    "kafka_source": "jobs.sources",
    "dataframe_source": "jobs.sources",
    "replay_scenario": "harness.replay",
    "compare_with_oracle": "harness.replay",
    "spark_session": "session",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'windtunnel.spark_impl' has no attribute {name!r}")
    return getattr(importlib.import_module(f"windtunnel.spark_impl.{home}"), name)
