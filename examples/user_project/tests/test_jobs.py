"""Our job against the spec it claims (specs/failed_logins.yaml), on the spec's own
stream and on streams windtunnel generates (late rows, disorder, micro-batches, nulls).

``--windtunnel-examples N`` sets how many generated streams (default 100);
a divergence fails the test with windtunnel's report and writes a counterexample file.
"""

import pytest


@pytest.mark.spark
def test_failed_logins_holds_to_its_spec(windtunnel_check, jobs_module, spec):
    windtunnel_check(f"{jobs_module}:failed_logins", spec)


def test_the_spec_says_what_we_think(windtunnel_oracle, spec):
    """The oracle's reading of the spec (no Spark): a row 90 s behind the newest is still
    counted, one whose window was already emitted is dropped."""
    result = windtunnel_oracle(spec)
    alice = [e.row for e in result.emissions if e.group == "alice"]
    assert alice[0] == {"failures": 2, "bytes": 160}
    assert [d.seq for d in result.drops] == [6]
