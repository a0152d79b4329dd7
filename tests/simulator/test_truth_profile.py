"""Ground truth under another profile (``generate --truth-profile P``): every record's
label is what P does with it, as the oracle decides on the same stream read back from
a scenario file."""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel.oracle.engine import run
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.results import Drop
from windtunnel.oracle.profiles import profile_named
from windtunnel.oracle.scenario import load_scenario
from windtunnel.simulator.outputs import write_scenario
from windtunnel.simulator.profile_truth import simulate_under
from windtunnel.simulator.simulation import Simulation
from windtunnel.simulator.truth import TRUTH_NAMES
from windtunnel.simulator.workloads import simulate

KNOBS = {
    "events": 1200, "seed": 5, "late_fraction": 0.05, "max_out_of_order_ms": 2_000,
    "batch_size": 40, "null_fraction": 0.01, "keys": 8,
}  # fmt: skip


def make() -> Simulation:
    return simulate("bare", **KNOBS)


def labels(simulation: Simulation) -> dict[int, str]:
    out: dict[int, str] = {}
    for table in simulation.chunks():
        for seq, code in zip(table["seq"].tolist(), table["truth"].tolist(), strict=True):
            if code:
                out[seq] = TRUTH_NAMES[code]
    return out


def oracle_drops(path: Path, profile: str) -> dict[int, str]:
    """The drops ``profile`` makes on the stream written at ``path`` (default labels)."""
    scenario = load_scenario(path)
    rules = profile_named(profile).rules.with_overrides(dict(scenario.rule_overrides))
    result = run(
        scenario.query, scenario.items, rules=rules, profile=profile,
        time_unit_ms=scenario.time_unit_ms, start_wall_ms=scenario.start_wall_ms,
    )  # fmt: skip
    return {o.seq: o.reason for o in result.outputs if isinstance(o, Drop)}


@pytest.fixture(scope="module")
def stream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("truth") / "stream.yaml"
    write_scenario(make(), path)
    return path


@pytest.mark.parametrize("profile", ["flink", "spark", "ekuiper"])
def test_labels_are_the_profiles_drops(stream: Path, profile: str) -> None:
    simulation = simulate_under(make, profile)
    got = labels(simulation)
    assert got == oracle_drops(stream, profile)
    assert simulation.summary.truth["late"] == sum(1 for r in got.values() if r == "late")
    assert simulation.summary.dropped_by_design == len(got)


def test_spark_labels_differ_from_the_default_rule(stream: Path) -> None:
    """Stock Spark decides lateness per micro-batch: on this stream it drops other records
    than the default profile (so the labels above are not the default's by accident)."""
    assert labels(simulate_under(make, "spark")) != labels(make())


def test_default_profile_through_the_oracle_gives_the_default_labels() -> None:
    assert labels(simulate_under(make, "tenzir")) == labels(make())


def test_a_written_scenario_names_the_profile_and_replays(tmp_path: Path) -> None:
    path = tmp_path / "flink.yaml"
    write_scenario(simulate_under(make, "flink"), path)
    text = path.read_text()
    assert "profile: flink" in text
    assert "ground truth for profile flink" in text
    scenario = load_scenario(path)
    from windtunnel.oracle.engine import replay
    from windtunnel.oracle.expect import check

    assert scenario.expect is not None
    assert check(scenario.expect, replay(scenario).outputs) == []


@pytest.mark.parametrize(
    ("profile", "message"),
    [
        ("nope", "unknown profile"),
    ],
)
def test_profiles_that_cannot_label_say_why(profile: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        simulate_under(make, profile)


def test_ekuiper_labels_what_it_loses_at_the_end() -> None:
    """eKuiper loses windows still open at the end of input and reports their records as
    dropped with reason end_of_input: those records are labelled so, not delivered."""
    simulation = simulate_under(make, "ekuiper")
    got = labels(simulation)
    assert "end_of_input" in got.values()
    assert simulation.summary.truth["end_of_input"] == sum(1 for r in got.values() if r == "end_of_input")
