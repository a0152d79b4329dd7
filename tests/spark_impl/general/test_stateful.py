"""The stateful processor loads light: Spark unpickles it in a fresh driver-side Python
process at every query start, so the step (numpy, pandas, the oracle) must wait until used.
No Spark session: the processor is pickled here and unpickled in a new interpreter."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import pytest
from pyspark import cloudpickle

from windtunnel.oracle.engine import DEFAULT_RULES
from windtunnel.oracle.model.spec import Query, SessionWindows
from windtunnel.spark_impl.general.processor import make_steps
from windtunnel.spark_impl.general.stateful import WindowProcessor

PROBE = """
import json, pickle, sys
processor = pickle.loads(sys.stdin.buffer.read())
heavy = ("pandas", "numpy", "pyarrow", "windtunnel.oracle")
before = sorted(m for m in heavy if m in sys.modules)
steps = type(processor.steps).__name__
after = sorted(m for m in heavy if m in sys.modules)
print(json.dumps({"before": before, "steps": steps, "after": after}))
"""


def probe(processor: WindowProcessor) -> dict[str, object]:
    data = cloudpickle.dumps(processor, protocol=pickle.HIGHEST_PROTOCOL)
    done = subprocess.run(
        [sys.executable, "-c", PROBE], input=data, capture_output=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.process  # a fresh Python
def test_unpickling_the_processor_imports_no_step_module_until_the_step_is_used() -> None:
    query = Query(SessionWindows(5_000, on="ts"), group_by=("k",))
    result = probe(WindowProcessor(make_steps(query, DEFAULT_RULES), system_tick_ms=1_000))
    assert result["before"] == []
    assert result["steps"] == "ReferenceSteps"
