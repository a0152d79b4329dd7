"""Nexmark's text fields: random strings, the padding ``extra``, names, places, channels.

``nextString(max)``: 3 to ``max - 1`` characters, each a space (or another filler) with
probability 1/13, else a lowercase letter, trimmed. ``extra`` pads an event to its
average byte size: for ``d = average - size of the other fields`` (nothing when
negative), ``d - round(d/5)`` plus a uniform part below ``2 round(d/5)`` lowercase
letters. A bid's channel is one of four hot channels with probability 1/2 (each with
its own URL), else ``channel-N`` for N uniform below 10,000 (a URL per channel, nine in
ten with ``&channel_id=`` and N's bits reversed). Strings are drawn as one numpy array of
characters per field and cut into Python strings.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]

MIN_STRING_LENGTH: Final = 3
US_STATES: Final = ("AZ", "CA", "ID", "OR", "WA", "WY")
US_CITIES: Final = (
    "Phoenix",
    "Los Angeles",
    "San Francisco",
    "Boise",
    "Portland",
    "Bend",
    "Redmond",
    "Seattle",
    "Kent",
    "Cheyenne",
)
FIRST_NAMES: Final = (
    "Peter",
    "Paul",
    "Luke",
    "John",
    "Saul",
    "Vicky",
    "Kate",
    "Julie",
    "Sarah",
    "Deiter",
    "Walter",
)
LAST_NAMES: Final = (
    "Shultz",
    "Abrams",
    "Spencer",
    "White",
    "Bartels",
    "Walton",
    "Smith",
    "Jones",
    "Noris",
)
HOT_CHANNELS: Final = ("Google", "Facebook", "Baidu", "Apple")
CHANNELS: Final = 10_000
"""Cold channels: ``channel-0`` to ``channel-9999``."""
URL_BASE: Final = "https://www.nexmark.com/"


def cut(chars: npt.NDArray[np.uint8], lengths: I64) -> list[str]:
    """``chars`` (ASCII codes) cut into consecutive strings of ``lengths``."""
    text = chars.tobytes().decode("ascii")
    ends = np.cumsum(lengths).tolist()
    starts = [0, *ends[:-1]]
    return [text[s:e] for s, e in zip(starts, ends, strict=True)]


def letters(lengths: I64, rng: np.random.Generator) -> list[str]:
    """Strings of exactly ``lengths`` lowercase letters (``nextExactString``)."""
    codes = rng.integers(0, 26, int(lengths.sum()), dtype=np.uint8) + np.uint8(97)
    return cut(codes, lengths)


def strings(n: int, max_length: int, rng: np.random.Generator, filler: str = " ") -> list[str]:
    """``n`` strings of ``nextString(max_length)``: letters and 1-in-13 ``filler``, trimmed
    of spaces."""
    lengths = MIN_STRING_LENGTH + rng.integers(0, max_length - MIN_STRING_LENGTH, n)
    drawn = rng.integers(0, 13 * 26, int(lengths.sum()))
    codes = np.where(drawn < 26, ord(filler), 97 + drawn % 26).astype(np.uint8)
    pieces = cut(codes, lengths)
    return [p.strip() for p in pieces] if filler == " " else pieces


def extra_lengths(sizes: I64, average: int, rng: np.random.Generator) -> I64:
    """The length of each event's ``extra`` for events of ``sizes`` bytes without it."""
    wanted = np.maximum(average - sizes, 0)
    delta = np.floor(wanted * 0.2 + 0.5).astype(np.int64)
    spread = rng.integers(0, np.maximum(2 * delta, 1))
    length: I64 = np.where(sizes > average, 0, wanted - delta + np.where(delta > 0, spread, 0))
    return length


def lengths_of(values: list[str]) -> I64:
    """The length of each string."""
    return np.fromiter(map(len, values), dtype=np.int64, count=len(values))


def emails(n: int, rng: np.random.Generator) -> list[str]:
    """``n`` addresses ``nextString(7)@nextString(5).com``."""
    users, hosts = strings(n, 7, rng), strings(n, 5, rng)
    return [f"{u}@{h}.com" for u, h in zip(users, hosts, strict=True)]


def credit_cards(n: int, rng: np.random.Generator) -> list[str]:
    """``n`` card numbers: four groups of four digits."""
    groups = rng.integers(0, 10_000, (n, 4)).tolist()
    return [f"{a:04d} {b:04d} {c:04d} {d:04d}" for a, b, c, d in groups]


def person_names() -> list[str]:
    """Every ``first last`` name (index ``first x 9 + last``)."""
    return [f"{f} {last}" for f in FIRST_NAMES for last in LAST_NAMES]


def reversed_bits(numbers: I64) -> I64:
    """The absolute value of each number's 32 low bits reversed, read as a signed integer."""
    value = np.zeros(len(numbers), dtype=np.int64)
    for bit in range(32):
        value |= (numbers >> bit & 1) << (31 - bit)
    signed: I64 = np.abs(np.where(value >= 1 << 31, value - (1 << 32), value))
    return signed


def channels(rng: np.random.Generator) -> tuple[list[str], list[str]]:
    """Channel names and their URLs: the hot channels, then ``channel-0`` ... ``channel-9999``."""
    count = len(HOT_CHANNELS) + CHANNELS
    parts = strings(3 * count, 5, rng, filler="_")
    bases = [
        f"{URL_BASE}{parts[3 * i]}/{parts[3 * i + 1]}/{parts[3 * i + 2]}/item.htm?query=1"
        for i in range(count)
    ]
    tagged = (rng.integers(0, 10, CHANNELS) > 0).tolist()
    ids = reversed_bits(np.arange(CHANNELS, dtype=np.int64)).tolist()
    hot_count = len(HOT_CHANNELS)
    urls = bases[:hot_count] + [
        f"{bases[hot_count + n]}&channel_id={ids[n]}" if tag else bases[hot_count + n]
        for n, tag in enumerate(tagged)
    ]
    return [*HOT_CHANNELS, *(f"channel-{n}" for n in range(CHANNELS))], urls


def channel_choices(n: int, rng: np.random.Generator) -> I64:
    """``n`` channel indices into :func:`channels`: a hot one with probability 1/2."""
    is_hot = rng.integers(0, 2, n) > 0
    hot_index = rng.integers(0, len(HOT_CHANNELS), n)
    cold_index = len(HOT_CHANNELS) + rng.integers(0, CHANNELS, n)
    index: I64 = np.where(is_hot, hot_index, cold_index)
    return index
