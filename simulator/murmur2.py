"""Kafka's default partitioner for keyed records: murmur2 as the Java client computes it.

``partition_for(key, n)`` is ``toPositive(murmur2(key)) % n`` (``Utils.murmur2`` and
``BuiltInPartitioner.partitionForKey`` in the Java client; librdkafka's ``murmur2_random``
partitioner gives the same partitions for non-empty keys).
"""

from __future__ import annotations

from typing import Final

_M: Final = 0x5BD1E995
_SEED: Final = 0x9747B28C
_MASK: Final = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Java's ``Utils.murmur2(data)``: a signed 32-bit int."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    full = length - length % 4
    for i in range(0, full, 4):
        k = data[i] | data[i + 1] << 8 | data[i + 2] << 16 | data[i + 3] << 24
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    rest = length % 4
    if rest == 3:
        h ^= data[full + 2] << 16
    if rest >= 2:
        h ^= data[full + 1] << 8
    if rest >= 1:
        h ^= data[full]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def to_positive(number: int) -> int:
    """Java's ``Utils.toPositive``: clears the sign bit (not ``abs``)."""
    return number & 0x7FFFFFFF


def partition_for(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner gives a record with this non-empty ``key``."""
    return to_positive(murmur2(key)) % partitions
