"""Fixtures of the oracle's tests.

``run_query``: the oracle's rule tests run on both implementations of a window kind, the
reference operators (``oracle/windows/``) and the kind's fast path (``oracle/fast/``); see
:mod:`implementations`. Tests that compare with the reference directly use
``windtunnel.oracle.engine.reference_outputs``.
"""

from __future__ import annotations

import pytest

from .implementations import RunQuery


@pytest.fixture(params=["reference", "fast"])
def run_query(request: pytest.FixtureRequest) -> RunQuery:
    """``run`` on the reference operators or on the query's fast path (skipped, with the
    reason, where no fast path takes the run)."""
    return RunQuery(request.param)
