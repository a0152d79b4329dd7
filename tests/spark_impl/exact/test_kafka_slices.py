"""Kafka slicing: keys sliced as Kafka's default partitioner places them, so that an input
partition read from one Kafka partition holds one slice's keys (docs/spark.md, "A source
partitioned by key skips the shuffle")."""

from __future__ import annotations

import hashlib
import zlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from windtunnel.simulator.murmur2 import partition_for
from windtunnel.spark_impl.exact.plan import KAFKA_SLICES, fingerprint, kafka_slices


@pytest.mark.parametrize(
    ("partitions", "cores", "slices"),
    [(4, 2, 2), (12, 2, 2), (8, 4, 4), (16, 8, 8), (32, 16, 16), (5, 1, 1), (1, 1, 1),
     (3, 2, None), (7, 2, None), (1, 2, None), (6, 4, None), (12, 8, None), (24, 16, None)],
)
def test_slices_are_the_smallest_divisor_that_fills_every_core(
    partitions: int, cores: int, slices: int | None
) -> None:
    """None: no divisor of the partition count is a multiple of the cores, so slice tasks
    of one Kafka partition each would leave cores idle in a round (keys sliced by hash)."""
    assert kafka_slices(partitions, cores) == slices


@given(keys=st.lists(st.text(min_size=1), min_size=1, max_size=50),
       partitions=st.integers(1, 48), cores=st.integers(1, 16))
def test_every_kafka_partitions_keys_fall_in_one_slice(
    keys: list[str], partitions: int, cores: int
) -> None:
    slices = kafka_slices(partitions, cores)
    if slices is None:
        return
    assert slices % cores == 0 and partitions % slices == 0
    placed: dict[int, set[int]] = {}
    for key in keys:
        data = key.encode()
        placed.setdefault(partition_for(data, partitions), set()).add(partition_for(data, slices))
    assert all(len(found) == 1 for found in placed.values())


def test_hash_slicing_keeps_the_fingerprint_of_checkpoints_started_before_kafka_slicing() -> None:
    assert fingerprint("spec", 2) == hashlib.sha256(b"spec\n2").hexdigest()[:32]
    assert fingerprint("spec", 2, KAFKA_SLICES) != fingerprint("spec", 2)


@pytest.mark.spark
@pytest.mark.parametrize(
    ("key", "text"),
    [("user-1", "user-1"), ("ünïcødé ☃", "ünïcødé ☃"), ("", ""), (42, "42"), (-7, "-7"),
     (True, "1"), (False, "0"), (3.0, "3"), (None, "")],
)
def test_the_java_slice_is_kafkas_partition_of_the_keys_text(
    spark: Any, key: Any, text: str
) -> None:
    """The JVM operator's slice of a key is the partition Kafka's Java client (murmur2) or
    librdkafka (CRC32) gives a record keyed by the key's text (1, 1.0 and True are one key,
    as in Python)."""
    from windtunnel.spark_impl.jvm.binding import load

    jvm = load(spark).jvm
    for slices in (1, 2, 3, 7, 12):
        assert int(jvm.call("kafkaSlice", key, slices, False)) == partition_for(text.encode(), slices)
        assert int(jvm.call("kafkaSlice", key, slices, True)) == zlib.crc32(text.encode()) % slices


def placed_by(partitioner: str, key: bytes, partitions: int) -> int:
    return partition_for(key, partitions) if partitioner == "murmur2" else zlib.crc32(key) % partitions


@pytest.mark.spark
@pytest.mark.parametrize("partitioner", ["murmur2", "crc32"])
def test_the_partitioner_is_the_one_that_placed_every_sampled_key(spark: Any, partitioner: str) -> None:
    from windtunnel.spark_impl.exact.plan import partitioner_of
    from windtunnel.spark_impl.jobs.kafka_keys import KeySample

    keys = [f"user-{i}".encode() for i in range(40)] + ["ünï-\x00-☃".encode()]
    placed = [(key, placed_by(partitioner, key, 6)) for key in keys] + [(None, 5), (b"", 4)]
    assert partitioner_of(spark, KeySample(6, tuple(placed))) == partitioner


@pytest.mark.spark
def test_a_topic_neither_partitioner_explains_has_none(spark: Any) -> None:
    from windtunnel.spark_impl.exact.plan import partitioner_of
    from windtunnel.spark_impl.jobs.kafka_keys import KeySample

    keys = [f"user-{i}".encode() for i in range(40)]
    spread = [(key, i % 3) for i, key in enumerate(keys)]  # round robin
    assert partitioner_of(spark, KeySample(3, tuple(spread))) is None
    one_off = [(key, placed_by("murmur2", key, 3)) for key in keys]
    one_off[7] = (keys[7], (one_off[7][1] + 1) % 3)
    assert partitioner_of(spark, KeySample(3, tuple(one_off))) is None
    unkeyed = KeySample(3, ((None, 0), (None, 2)))
    assert partitioner_of(spark, unkeyed) == "murmur2"  # no keyed record: Kafka's own default
