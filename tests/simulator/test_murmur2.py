"""murmur2 matches the Java client's Utils.murmur2, so partitions match a real cluster."""

from __future__ import annotations

import pytest

from windtunnel.simulator.murmur2 import murmur2, partition_for, to_positive

# Kafka's UtilsTest.testMurmur2 vectors, and Akka's Murmur2Spec (checked against Kafka's Utils)
VECTORS = [
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (b"abc", 479470107),
    (b"1", -1993445489),
    (b"12", 126087238),
    (b"123", -267702483),
    (b"1234", -1614185708),
    (b"12345", -1188365604),
]


@pytest.mark.parametrize(("data", "expected"), VECTORS)
def test_murmur2_matches_java(data: bytes, expected: int) -> None:
    assert murmur2(data) == expected


def test_to_positive_clears_the_sign_bit_like_java() -> None:
    assert to_positive(-1) == 0x7FFFFFFF
    assert to_positive(-(2**31)) == 0
    assert to_positive(5) == 5


def test_partition_for_is_positive_hash_modulo_partitions() -> None:
    # "21" hashes to -973932308; toPositive gives 1173551340; modulo 3 is 0
    assert partition_for(b"21", 3) == 1173551340 % 3
    assert all(0 <= partition_for(d, 7) < 7 for d, _ in VECTORS)
