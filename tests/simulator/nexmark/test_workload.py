"""The nexmark workload: records by kind, seeded, a kinds filter that keeps the full stream's
events, ground truth equal to the oracle's drops, every output format read back."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from windtunnel.oracle.engine import replay
from windtunnel.oracle.expect import check
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.stream import events_of
from windtunnel.oracle.scenario import load_scenario
from windtunnel.simulator.column_outputs import COLUMN_WRITERS
from windtunnel.simulator.kafka_columns import KafkaColumns, line_bytes, payload_pieces
from windtunnel.simulator.nexmark.workload import FIELDS
from windtunnel.simulator.outputs import WRITERS, write_scenario
from windtunnel.simulator.payloads import payload_dicts, payload_json
from windtunnel.simulator.profile_truth import drops_under, simulate_under
from windtunnel.simulator.records import kafka_records
from windtunnel.simulator.simulation import Simulation
from windtunnel.simulator.truth import TRUTH_NAMES
from windtunnel.simulator.workloads import simulate


def records(sim: Simulation) -> list[tuple[str, int, int]]:
    """Each record's payload JSON, arrival and lane."""
    out: list[tuple[str, int, int]] = []
    for table in sim.chunks():
        payloads = payload_json(sim.workload, table)
        out += zip(payloads, table["arrival"].tolist(), table["key"].tolist(), strict=True)
    return out


def labels(sim: Simulation) -> dict[int, str]:
    out: dict[int, str] = {}
    for table in sim.chunks():
        for seq, code in zip(table["seq"].tolist(), table["truth"].tolist(), strict=True):
            if code:
                out[seq] = TRUTH_NAMES[code]
    return out


def test_each_record_has_its_kinds_fields_in_nexmarks_order() -> None:
    sim = simulate("nexmark", events=3_000, seed=1, prob_delayed_event=0)
    table = next(sim.chunks())
    texts, dicts = payload_json(sim.workload, table), payload_dicts(sim.workload, table)
    assert [json.loads(t) for t in texts] == dicts
    assert all(list(d) == list(FIELDS[d["event_type"]]) for d in dicts)
    assert Counter(d["event_type"] for d in dicts[:1_000]) == {
        "person": 20,
        "auction": 60,
        "bid": 920,
    }


def test_same_seed_same_records() -> None:
    assert records(simulate("nexmark", events=2_000, seed=5)) == records(
        simulate("nexmark", events=2_000, seed=5)
    )
    assert records(simulate("nexmark", events=2_000, seed=5)) != records(
        simulate("nexmark", events=2_000, seed=6)
    )


@pytest.mark.parametrize("kinds", ["bid", "auction", "person,bid"])
def test_some_kinds_are_the_full_streams_records_of_those_kinds(kinds: str) -> None:
    knobs = {
        "seed": 8,
        "out_of_order_group_size": 100,
        "delay": "uniform",
        "max_out_of_order": "1s",
    }
    wanted = tuple(f'{{"event_type":"{k}"' for k in kinds.split(","))
    full = [
        r for r in records(simulate("nexmark", events=12_000, **knobs)) if r[0].startswith(wanted)
    ]
    some = records(simulate("nexmark", events=len(full) // 2, kinds=kinds, **knobs))
    assert some == full[: len(some)]


GROUND_TRUTH_CASES: list[dict[str, Any]] = [
    {"late_fraction": 0.05},
    {"late_fraction": 0.05, "out_of_order_group_size": 50, "duplicate_fraction": 0.02,
     "null_fraction": 0.01},
    {"kinds": "bid", "late_window": "10s@stream", "late_fraction": 0.03, "batch_size": 100},
    {"rate": 500, "prob_delayed_event": 0.5, "occasional_delay": "20s", "clock_skew": "1s",
     "late_fraction": 0.01},
]  # fmt: skip


@pytest.mark.parametrize("knobs", GROUND_TRUTH_CASES)
def test_labels_are_the_oracles_drops(knobs: dict[str, Any]) -> None:
    options = {"events": 3_000, "seed": 11, **knobs}
    labelled = labels(simulate("nexmark", **options))
    oracle = drops_under(simulate("nexmark", **options), "tenzir")
    assert {seq: TRUTH_NAMES[code] for seq, code in oracle.items()} == labelled
    assert "late" in labelled.values()


def test_a_scenario_labelled_under_flink_replays_with_flinks_drops(tmp_path: Path) -> None:
    options = {"events": 2_000, "seed": 2, "rate": 200, "prob_delayed_event": 0.3,
               "occasional_delay": "20s"}  # fmt: skip
    sim = simulate_under(lambda: simulate("nexmark", **options), "flink")
    write_scenario(sim, tmp_path / "flink.yaml")
    scenario = load_scenario(tmp_path / "flink.yaml")
    assert scenario.profile.name == "flink" and scenario.expect is not None
    assert {r for _, r in scenario.expect.drops} == {"late", "filtered"}
    assert check(scenario.expect, replay(scenario).outputs) == []


def test_the_default_query_windows_the_bids_only() -> None:
    sim = simulate("nexmark", events=1_000, seed=1)
    table = next(sim.chunks())
    filtered = table["truth"] == TRUTH_NAMES.index("filtered")
    assert (filtered == (table["p_kind"] != 2)).all()
    assert sim.workload.where() == "event_type = 'bid'"
    assert simulate("nexmark", events=10, kinds="bid").workload.where() is None


KNOBS: dict[str, Any] = {
    "events": 1_500, "seed": 21, "late_fraction": 0.05, "null_fraction": 0.01,
    "duplicate_fraction": 0.01, "batch_size": 300,
}  # fmt: skip


def write(fmt: str, path: Path, columns: bool = False, **knobs: Any) -> Path:
    writer = (COLUMN_WRITERS if columns else WRITERS)[fmt]
    writer(simulate("nexmark", **{**KNOBS, **knobs}), path, lambda n: None)
    return path


def expected_payloads(**knobs: Any) -> list[dict[str, Any]]:
    sim = simulate("nexmark", **{**KNOBS, **knobs})
    return [d for table in sim.chunks() for d in payload_dicts(sim.workload, table)]


def test_a_scenario_file_replays_with_its_ground_truth(tmp_path: Path) -> None:
    scenario = load_scenario(write("scenario", tmp_path / "s.yaml"))
    assert scenario.expect is not None
    assert {r for _, r in scenario.expect.drops} == {"late", "null_time", "filtered"}
    assert check(scenario.expect, replay(scenario).outputs) == []
    assert [e.payload for e in events_of(scenario.items)] == expected_payloads()


def test_kafka_shaped_files_hold_the_payloads(tmp_path: Path) -> None:
    want = expected_payloads()
    lines = write("jsonl", tmp_path / "r.jsonl").read_text().splitlines()
    assert [json.loads(json.loads(line)["value"]) for line in lines] == want
    table = pq.read_table(write("parquet", tmp_path / "r.parquet")).to_pylist()
    assert [json.loads(row["value"]) for row in table] == want
    out = write("spark-dir", tmp_path / "d")
    files = sorted(p for p in out.iterdir() if not p.name.startswith("_"))
    assert len(files) == 5
    rows = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    assert [json.loads(r["value"]) for r in rows] == want


@pytest.mark.parametrize("kinds", ["person,auction,bid", "bid"])
def test_payload_pieces_join_to_the_payloads_and_their_escapes(kinds: str) -> None:
    sim = simulate("nexmark", **KNOBS, kinds=kinds)
    for table in sim.chunks():
        payloads = payload_json(sim.workload, table)
        raw = pc.binary_join_element_wise(*payload_pieces(sim.workload, table, escaped=False), "")
        escaped = pc.binary_join_element_wise(
            *payload_pieces(sim.workload, table, escaped=True), ""
        )
        assert raw.to_pylist() == payloads
        assert escaped.to_pylist() == [json.dumps(p)[1:-1] for p in payloads]


def test_kafka_lines_are_the_per_record_kafka_records() -> None:
    sim = simulate("nexmark", **KNOBS)
    columns = KafkaColumns(sim)
    for table in sim.chunks():
        lines = bytes(line_bytes(columns.json_lines(table))).decode().splitlines()
        records_ = kafka_records(sim, table)
        assert [json.loads(line)["value"] for line in lines] == records_.value
        assert [json.loads(line)["key"] for line in lines] == records_.key


def test_typed_columns_leave_a_kinds_missing_fields_null(tmp_path: Path) -> None:
    want = expected_payloads()
    lines = write("jsonl", tmp_path / "c.jsonl", columns=True).read_text().splitlines()
    labels_ = ("seq", "arrival_ms", "truth", "tag")
    assert [{k: v for k, v in json.loads(x).items() if k not in labels_} for x in lines] == want
    table = pq.read_table(write("parquet", tmp_path / "c.parquet", columns=True))
    for name in ("id", "auction", "price", "expires", "dateTime"):
        assert str(table.schema.field(name).type) == "int64"
    rows = table.to_pylist()
    assert [
        {k: v for k, v in row.items() if v is not None and k not in labels_} for row in rows
    ] == [{k: v for k, v in payload.items() if v is not None} for payload in want]
    bids = pq.read_table(write("parquet", tmp_path / "b.parquet", columns=True, kinds="bid"))
    assert bids.schema.names[: len(FIELDS["bid"])] == list(FIELDS["bid"])


def test_nexmark_events_are_evenly_spaced() -> None:
    with pytest.raises(InvalidInput) as info:
        simulate("nexmark", rate_shape="poisson")
    assert info.value.field == "rate_shape"
    with pytest.raises(InvalidInput) as info:
        simulate("payments", kinds="bid")
    assert info.value.field == "kinds"
