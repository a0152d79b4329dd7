"""The vectorised Kafka writers (simulator/kafka_columns.py) against the per-record forms.

The hashes below were produced by the per-record writers (one ``%`` format and one header
list per record) before the vectorised ones replaced them: the same seed and knobs must
keep giving the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.simulator.kafka_columns import (
    PARQUET_SCHEMA,
    KafkaColumns,
    _texts,
    json_string_bodies,
    line_bytes,
    payload_pieces,
)
from windtunnel.simulator.outputs import write_jsonl, write_parquet, write_spark_dir
from windtunnel.simulator.payloads import payload_json
from windtunnel.simulator.records import kafka_records
from windtunnel.simulator.simulation import Simulation
from windtunnel.simulator.workloads import simulate

KNOBS: dict[str, dict[str, Any]] = {
    "auth": {"late_fraction": 0.05, "null_fraction": 0.02, "duplicate_fraction": 0.02},
    "payments": {
        "late_fraction": 0.05,
        "invalid_fraction": 0.02,
        "duplicate_fraction": 0.01,
        "outlier_fraction": 0.01,
        "bridge_fraction": 0.01,
    },
    "iot": {"timestamp_type": "LogAppendTime", "null_fraction": 0.02},
    "plays": {"late_fraction": 0.1, "topic": 'wt%"q\\'},
    "bare": {"duplicate_fraction": 0.05},
}

OLD_JSONL = {
    "auth": "3243ed6ed8f78ad144b3d7bbe0654a6bd28cdf9d017008b4a7b788dd9bde4220",
    "payments": "d68a0643399295abc68b1ce7476b762a9d6f7543d6cb1716ba1621ac0181e4eb",
    "iot": "24ad402823574f4851b509375745ebad488b44c53f1950d83a0950cc6783508b",
    "plays": "2db0f4b8572824fe5976862de435bea31058ec538034a09af0536ad5258c0797",
    "bare": "4f8941c3c5105e1942d184e8b79423a12ca0b8943d31d0942c45908bd9eb751e",
}
OLD_SPARK_DIR = {  # batch_size 70; file names and contents
    "auth": "dd36fa55366b03366db7aab46b5c68625ef26b77da8c8fa34115f5a2e523ce65",
    "payments": "de93ad9cfe9b63be73243985e4f29a0baa50c8f16338d39bc4f83c9c6eb82f51",
    "iot": "f163a756a6dd35113b618f689f872bec387af63dc15597f319623c5ace2cc3e8",
    "plays": "0a1aa57e63c3a1886603ad7861818157afb1c6112df7a5a7850cd7f34fd660a9",
    "bare": "c4794b67afa1931cf53e014720590396577a08c4c1b662dc657a8b8dbdab91ef",
}


def simulation(workload: str, **extra: Any) -> Simulation:
    return simulate(workload, events=5000, seed=11, **KNOBS[workload], **extra)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("workload", sorted(KNOBS))
def test_jsonl_bytes_are_those_of_the_per_record_writer(workload: str, tmp_path: Path) -> None:
    write_jsonl(simulation(workload), tmp_path / "out.jsonl")
    assert sha256((tmp_path / "out.jsonl").read_bytes()) == OLD_JSONL[workload]


@pytest.mark.parametrize("workload", sorted(KNOBS))
def test_spark_dir_bytes_are_those_of_the_per_record_writer(workload: str, tmp_path: Path) -> None:
    write_spark_dir(simulation(workload, batch_size="70"), tmp_path / "dir")
    digest = hashlib.sha256()
    for name in sorted(os.listdir(tmp_path / "dir")):
        digest.update(name.encode() + b"\0" + (tmp_path / "dir" / name).read_bytes())
    assert digest.hexdigest() == OLD_SPARK_DIR[workload]


def reference_line(record: dict[str, Any]) -> dict[str, Any]:
    """What a JSON line holds for one per-record Kafka record (records.py)."""
    return {
        "key": record["key"],
        "value": record["value"],
        "topic": record["topic"],
        "partition": record["partition"],
        "offset": record["offset"],
        "timestamp": record["timestamp"],
        "timestampType": record["timestampType"],
        "headers": [{"key": k, "value": v} for k, v in record["headers"]],
        "seq": record["seq"],
        "arrival_ms": record["arrival_ms"],
        "truth": record["truth"],
        "tag": record["tag"],
    }


@pytest.mark.parametrize("workload", sorted(KNOBS))
def test_lines_and_parquet_rows_hold_the_per_record_kafka_records(workload: str, tmp_path: Path) -> None:
    sim = simulation(workload)
    columns = KafkaColumns(sim)
    expected: list[dict[str, Any]] = []
    lines: list[str] = []
    for table in sim.chunks():
        records = kafka_records(sim, table)
        for i in range(len(records)):
            expected.append(
                reference_line(
                    {
                        "key": records.key[i], "value": records.value[i], "topic": records.topic,
                        "partition": records.partition[i], "offset": records.offset[i],
                        "timestamp": records.timestamp_ms[i],
                        "timestampType": records.timestamp_type, "headers": records.headers[i],
                        "seq": records.seq[i], "arrival_ms": records.arrival_ms[i],
                        "truth": records.truth[i], "tag": records.tag[i],
                    }
                )
            )
        lines += bytes(line_bytes(columns.json_lines(table))).decode().splitlines()
    assert [json.loads(line) for line in lines] == expected
    write_parquet(simulation(workload), tmp_path / "out.parquet")
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.schema.equals(PARQUET_SCHEMA)
    rows = table.to_pylist()
    assert [
        {
            **row,
            "key": row["key"].decode(),
            "value": row["value"].decode(),
            "timestamp": int(row["timestamp"].timestamp() * 1000),
            "headers": [{"key": h["key"], "value": h["value"].decode()} for h in row["headers"]],
        }
        for row in rows
    ] == expected


@pytest.mark.parametrize("workload", sorted(KNOBS))
def test_payload_pieces_join_to_the_payloads_and_their_escapes(workload: str) -> None:
    sim = simulation(workload)
    for table in sim.chunks():
        payloads = payload_json(sim.workload, table)
        raw = pc.binary_join_element_wise(*payload_pieces(sim.workload, table, escaped=False), "")
        escaped = pc.binary_join_element_wise(*payload_pieces(sim.workload, table, escaped=True), "")
        assert raw.to_pylist() == payloads
        assert escaped.to_pylist() == [json.dumps(p, ensure_ascii=False)[1:-1] for p in payloads]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(), min_size=1, max_size=20))
def test_string_bodies_escape_as_json_dumps(texts: list[str]) -> None:
    bodies = json_string_bodies(pa.array(texts, pa.string())).to_pylist()
    assert bodies == [json.dumps(t, ensure_ascii=False)[1:-1] for t in texts]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.one_of(st.text(), st.integers(), st.none(), st.booleans(), st.floats(allow_nan=False)),
        min_size=1,
        max_size=10,
    )
)
def test_texts_are_what_percent_s_writes(values: list[Any]) -> None:
    assert _texts(values).to_pylist() == ["%s" % (v,) for v in values]  # noqa: UP031 (as payload_json formats)
