"""Kafka records of a chunk as Arrow columns: the ``jsonl`` lines and the Parquet table.

The same records as :func:`windtunnel.simulator.records.kafka_records` (the per-record form
the Kafka producer sends), built column by column with Arrow compute kernels instead of
one Python string or list per record, so writing keeps pace with generating. A chunk's
JSON lines are one Arrow string array whose data buffer is the file's bytes for the chunk
(each line ends in a newline): the same bytes as formatting each record with
``json.encoder.encode_basestring`` for the key and the value (tests/simulator/test_kafka_columns.py
checks both against the per-record forms).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from windtunnel.simulator.payloads import Rendered, Table, Workload, rendered_parts
from windtunnel.simulator.records import ATTACK_NAMES, TIMESTAMP_TYPE_CODES
from windtunnel.simulator.simulation import TAG_NAMES, Simulation
from windtunnel.simulator.truth import TRUTH_NAMES

HEADER_NAMES: Final = ("wt-seq", "wt-truth", "wt-tag", "wt-dup-of", "wt-attack")
"""Header keys, in the order a record carries them (the last three only when set)."""

PARQUET_SCHEMA: Final = pa.schema(
    [
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp", pa.timestamp("ms", tz="UTC")),
        ("timestampType", pa.int32()),
        (
            "headers",
            pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())])),
        ),
        ("seq", pa.int64()),
        ("arrival_ms", pa.int64()),
        ("truth", pa.string()),
        ("tag", pa.string()),
    ]
)
"""Spark's Kafka source columns (key/value binary) plus seq, arrival_ms, truth and tag."""

def _text(values: Any) -> pa.Array:
    """Integers (a numpy array) as their decimal texts, as ``str(int)`` writes them."""
    return pc.cast(pa.array(values, pa.int64()), pa.string())


def _texts(values: list[Any]) -> pa.Array:
    """``str(v)`` for each value (JSON texts, integers), as a string array."""
    try:
        array = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        array = None
    if array is None or array.null_count or not (
        pa.types.is_string(array.type) or pa.types.is_int64(array.type)
    ):
        return pa.array(list(map(str, values)), pa.string())
    return array if pa.types.is_string(array.type) else pc.cast(array, pa.string())


def json_string_bodies(array: pa.Array) -> pa.Array:
    """``encode_basestring(t)[1:-1]`` for each text: a JSON string literal without its quotes.

    Vectorised when no text holds a control character (JSON texts never do): then only
    ``\\`` and ``"`` are escaped; otherwise each text goes through ``encode_basestring``.
    """
    data = array.buffers()[2]
    raw = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    if (raw < 0x20).any():
        return pa.array([encode_basestring(t)[1:-1] for t in array.to_pylist()], pa.string())
    if (raw == ord("\\")).any():
        array = pc.replace_substring(array, "\\", "\\\\")
    if (raw == ord('"')).any():
        array = pc.replace_substring(array, '"', '\\"')
    return array


def payload_pieces(workload: Workload, table: Table, *, escaped: bool) -> list[pa.Array | str]:
    """Pieces that joined give each payload of :func:`payload_json`, or with ``escaped`` its
    JSON string literal without quotes (``encode_basestring(p)[1:-1]``): escaping is per
    character, so the payload's fixed text and each field's JSON texts are escaped apart,
    one column at a time, with no per-record string. Records of several shapes (fields)
    are joined per shape, put back in row order and escaped whole: then one piece."""
    parts = rendered_parts(workload, table, as_json=True)
    if parts and parts[0][0] is None:
        return _pieces(parts[0][1], escaped)
    joined = [pc.binary_join_element_wise(*_pieces(columns, False), "") for _, columns in parts]
    if not joined:
        return [pa.array([], pa.string())]
    positions = np.concatenate([rows for rows, _ in parts if rows is not None])
    inverse = np.empty(len(positions), np.int64)
    inverse[positions] = np.arange(len(positions))
    payloads = pa.concat_arrays(joined).take(pa.array(inverse))
    return [json_string_bodies(payloads) if escaped else payloads]


def _pieces(columns: Rendered, escaped: bool) -> list[pa.Array | str]:
    pieces: list[pa.Array | str] = []
    for position, (name, values) in enumerate(columns):
        opening = ("{" if position == 0 else ",") + json.dumps(name) + ":"
        texts = _texts(values)
        if escaped:
            pieces += [encode_basestring(opening)[1:-1], json_string_bodies(texts)]
        else:
            pieces += [opening, texts]
    return [*pieces, "}"] if pieces else ["{}"]


class KafkaColumns:
    """Renders the chunks of one simulation; holds what is the same for every chunk."""

    def __init__(self, simulation: Simulation) -> None:
        self.simulation = simulation
        knobs = simulation.knobs
        self.topic = knobs.topic
        self.type_code = TIMESTAMP_TYPE_CODES[knobs.timestamp_type]
        keys = simulation.workload.keys.values.tolist()
        self.key_text = pa.array(keys, pa.string())
        self.line_heads = pa.array(
            ['{"key":' + encode_basestring(k) + ',"value":"' for k in keys], pa.string()
        )
        self.truth_names = pa.array(TRUTH_NAMES, pa.string())
        self.tag_names = pa.array(TAG_NAMES, pa.string())
        pairs = [(truth, tag) for truth in TRUTH_NAMES for tag in TAG_NAMES]  # truth * tags + tag
        self.label_heads = pa.array(
            [
                f'"}},{{"key":"wt-truth","value":"{truth}"}}'
                + (f',{{"key":"wt-tag","value":"{tag}"}}' if tag else "")
                for truth, tag in pairs
            ],
            pa.string(),
        )
        self.label_tails = pa.array(
            [f',"truth":"{truth}","tag":"{tag}"}}\n' for truth, tag in pairs], pa.string()
        )
        self.header_names = pa.array(HEADER_NAMES, pa.string())
        self.topic_json = encode_basestring(self.topic)

    def _stamp(self, table: Table) -> Any:
        if self.type_code == 0:  # CreateTime: the event time, the arrival when it is unusable
            return np.where(table["status"] == 0, table["ts"], table["arrival"])
        return table["arrival"]

    def json_lines(self, table: Table) -> pa.Array:
        """The chunk's JSON lines (each ending in a newline) as one string array.

        Fewer, longer pieces join faster: the key comes with its line's opening, and the
        ``wt-truth``/``wt-tag`` headers and the closing ``truth``/``tag`` fields are taken
        per (truth, tag) pair from :attr:`label_heads` and :attr:`label_tails`.
        """
        labels = pa.array(table["truth"] * len(TAG_NAMES) + table["tag"])
        extras = []  # wt-dup-of and wt-attack headers where set
        dup_of = table["dup_of"]
        if (dup_of >= 0).any():
            text = pc.binary_join_element_wise(
                ',{"key":"wt-dup-of","value":"', _text(dup_of), '"}', ""
            )
            extras.append(pc.if_else(pa.array(dup_of >= 0), text, ""))
        attack = self._attack_texts(table)
        if attack is not None:
            present, text = attack
            text = pc.binary_join_element_wise(',{"key":"wt-attack","value":"', text, '"}', "")
            extras.append(pc.if_else(present, text, ""))
        seq = _text(table["seq"])
        return pc.binary_join_element_wise(
            self.line_heads.take(pa.array(table["key"])),
            *payload_pieces(self.simulation.workload, table, escaped=True),
            f'","topic":{self.topic_json},"partition":',
            _text(table["partition"]),
            ',"offset":',
            _text(table["offset"]),
            ',"timestamp":',
            _text(self._stamp(table)),
            f',"timestampType":{self.type_code},"headers":[{{"key":"wt-seq","value":"',
            seq,
            self.label_heads.take(labels),
            *extras,
            '],"seq":',
            seq,
            ',"arrival_ms":',
            _text(table["arrival"]),
            self.label_tails.take(labels),
            "",
        )

    def _attack_texts(self, table: Table) -> tuple[pa.Array, pa.Array] | None:
        """Rows with a ``wt-attack`` header (a mask) and its value ``name:id`` (auth)."""
        if "attack" not in table:
            return None
        attack = table["attack"]
        present = attack >= 0
        if not present.any():
            return None
        names = pa.array(ATTACK_NAMES, pa.string()).take(pa.array(np.where(present, attack % 2, 0)))
        return pa.array(present), pc.binary_join_element_wise(names, ":", _text(attack), "")

    def parquet_table(self, table: Table) -> pa.Table:
        """The chunk as a table with :data:`PARQUET_SCHEMA`."""
        n = len(table["seq"])
        idx = pa.array(table["key"])
        seq = _text(table["seq"])
        truth = self.truth_names.take(pa.array(table["truth"]))
        tag_codes = table["tag"]
        tag = self.tag_names.take(pa.array(tag_codes))
        has = [np.ones(n, bool), np.ones(n, bool), tag_codes != 0, table["dup_of"] >= 0]
        values = [seq, truth, tag.filter(pa.array(has[2])), _text(table["dup_of"][has[3]])]
        attack = self._attack_texts(table)
        if attack is not None:
            has.append(attack[0].to_numpy(zero_copy_only=False))
            values.append(attack[1].filter(attack[0]))
        # the headers as one flat list of (name, value) with per-record offsets: record r
        # holds its present headers, in HEADER_NAMES order, from offsets[r]
        counts = np.sum(has, axis=0)
        offsets = np.zeros(n + 1, np.int32)
        np.cumsum(counts, out=offsets[1:])
        position = offsets[:-1].copy()
        names = np.empty(int(offsets[-1]), np.int64)
        order = np.empty(int(offsets[-1]), np.int64)
        taken = 0
        for code, present in enumerate(has):
            rows = np.flatnonzero(present)
            names[position[rows]] = code
            order[position[rows]] = taken + np.arange(len(rows))
            taken += len(rows)
            position[rows] += 1
        flat = pa.concat_arrays(values).take(pa.array(order))
        headers = pa.ListArray.from_arrays(
            pa.array(offsets),
            pa.StructArray.from_arrays(
                [self.header_names.take(pa.array(names)), flat.cast(pa.binary())],
                fields=list(PARQUET_SCHEMA.field("headers").type.value_type),
            ),
        )
        return pa.table(
            {
                "key": self.key_text.take(idx).cast(pa.binary()),
                "value": pc.binary_join_element_wise(
                    *payload_pieces(self.simulation.workload, table, escaped=False), ""
                ).cast(pa.binary()),
                "topic": pa.array([self.topic] * n, pa.string()),
                "partition": pa.array(table["partition"], pa.int32()),
                "offset": pa.array(table["offset"], pa.int64()),
                "timestamp": pa.array(self._stamp(table), pa.int64()).cast(pa.timestamp("ms", tz="UTC")),
                "timestampType": pa.array(np.full(n, self.type_code, np.int32)),
                "headers": headers,
                "seq": pa.array(table["seq"], pa.int64()),
                "arrival_ms": pa.array(table["arrival"], pa.int64()),
                "truth": truth,
                "tag": tag,
            },
            schema=PARQUET_SCHEMA,
        )


def line_offsets(lines: pa.Array) -> Any:
    """Where each line of ``lines`` (a string array) starts in :func:`line_bytes`, and the
    end (numpy int32, one more than lines)."""
    offsets = np.frombuffer(lines.buffers()[1], np.int32, len(lines) + 1, 4 * lines.offset)
    return offsets - offsets[0]


def line_bytes(lines: pa.Array) -> memoryview:
    """The bytes of all ``lines`` (a string array), back to back, without copying."""
    offsets = np.frombuffer(lines.buffers()[1], np.int32, len(lines) + 1, 4 * lines.offset)
    return memoryview(lines.buffers()[2])[int(offsets[0]):int(offsets[-1])]
