"""Generated records as Kafka records: key, value, topic, partition, offset, timestamp, headers.

Partitions follow Kafka's default partitioner for keyed records (``murmur2.py``); offsets
count per partition from 0. ``timestampType`` uses the codes of Spark's Kafka source:
0 = CreateTime (the record's event time; its arrival when the time is null or invalid),
1 = LogAppendTime (the arrival on the virtual wall clock). Headers carry the labels:
``wt-seq``, ``wt-truth`` (deliver, late, null_time, not_a_time), and when set ``wt-tag``
(why: late, outlier, duplicate, bridge, ...), ``wt-dup-of`` and ``wt-attack``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from windtunnel.simulator.payloads import Table, payload_json
from windtunnel.simulator.simulation import TAG_NAMES, Simulation
from windtunnel.simulator.truth import TRUTH_NAMES

TIMESTAMP_TYPE_CODES: Final = {"CreateTime": 0, "LogAppendTime": 1}
ATTACK_NAMES: Final = ("brute_force", "password_spraying")
"""``wt-attack`` header values are ``NAME:ID`` with NAME ``ATTACK_NAMES[ID % 2]``."""
Header = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Records:
    """One chunk of Kafka records as parallel lists (one entry per record)."""

    topic: str
    timestamp_type: int
    key: list[str]
    value: list[str]
    partition: list[int]
    offset: list[int]
    timestamp_ms: list[int]
    headers: list[list[Header]]
    seq: list[int]
    arrival_ms: list[int]
    truth: list[str]
    tag: list[str]

    def __len__(self) -> int:
        return len(self.seq)


def kafka_records(simulation: Simulation, table: Table) -> Records:
    """The chunk ``table`` of ``simulation`` as Kafka records."""
    knobs = simulation.knobs
    workload = simulation.workload
    type_code = TIMESTAMP_TYPE_CODES[knobs.timestamp_type]
    if type_code == 0:
        stamp = np.where(table["status"] == 0, table["ts"], table["arrival"])
    else:
        stamp = table["arrival"]
    seq = table["seq"].tolist()
    truth = np.array(TRUTH_NAMES, dtype=object)[table["truth"]].tolist()
    tag = np.array(TAG_NAMES, dtype=object)[table["tag"]].tolist()
    headers: list[list[Header]] = [
        [("wt-seq", str(s)), ("wt-truth", t)] for s, t in zip(seq, truth, strict=True)
    ]
    for row in np.flatnonzero(table["tag"]).tolist():
        headers[row].append(("wt-tag", tag[row]))
    for row in np.flatnonzero(table["dup_of"] >= 0).tolist():
        headers[row].append(("wt-dup-of", str(int(table["dup_of"][row]))))
    if "attack" in table:
        for row in np.flatnonzero(table["attack"] >= 0).tolist():
            attack = int(table["attack"][row])
            headers[row].append(("wt-attack", f"{ATTACK_NAMES[attack % 2]}:{attack}"))
    return Records(
        topic=knobs.topic,
        timestamp_type=type_code,
        key=workload.keys.values[table["key"]].tolist(),
        value=payload_json(workload, table),
        partition=table["partition"].tolist(),
        offset=table["offset"].tolist(),
        timestamp_ms=stamp.tolist(),
        headers=headers,
        seq=seq,
        arrival_ms=table["arrival"].tolist(),
        truth=truth,
        tag=tag,
    )
