"""A block of Nexmark events as a table: every column of persons, auctions and bids.

A block is a run of consecutive event numbers of the full stream, drawn with its own numpy
generators (one for the numeric choices of all its events, one per kind for the text),
so an event's content depends only on the seed and its number: writing some kinds
only (``kinds``) gives the same events of those kinds. Columns (one row per event;
-1, or None for text, where a kind has no such field): ``p_number`` (event number),
``p_kind`` (0 person, 1 auction, 2 bid), ``p_id`` (person or auction id), ``p_auction``,
``p_bidder``, ``p_price`` (a bid's price, an auction's initial bid), ``p_reserve``,
``p_seller``, ``p_category``, ``p_length_ms`` (auction length: ``expires - dateTime``),
``p_channel`` (index into the workload's channels), ``p_name``/``p_city``/``p_state``
(indices into the name and place lists), ``p_email``, ``p_card``, ``p_item``, ``p_text``
(the description) and ``p_extra``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from windtunnel.simulator.nexmark import rules, text
from windtunnel.simulator.nexmark.config import NexmarkKnobs
from windtunnel.simulator.payloads import Table

I64 = npt.NDArray[np.int64]
Times = Callable[[I64], I64]
"""Event numbers (or ids) -> their epoch ms."""

AUCTION_FIXED_BYTES = 8 + 8 * 5
"""An auction's size without its name, description and extra: id, initial bid, reserve,
times, seller and category as 8 bytes each (Nexmark's estimate)."""
BID_FIXED_BYTES = 8 * 4
PERSON_FIXED_BYTES = 8


def numeric_columns(
    numbers: I64, config: NexmarkKnobs, times: Times, rng: np.random.Generator
) -> Table:
    """The event ids, kinds, times and numeric fields of the events ``numbers``."""
    n = len(numbers)
    ids = rules.event_ids(numbers, config.out_of_order_group_size)
    kind = rules.kinds(ids, config)
    event_ms = times(ids)
    persons, auctions, bids = (np.flatnonzero(kind == k) for k in range(3))
    table: Table = {
        "event_ms": event_ms,
        "p_number": numbers,
        "p_kind": kind,
        **{
            name: np.full(n, -1, dtype=np.int64)
            for name in (
                "p_id",
                "p_auction",
                "p_bidder",
                "p_price",
                "p_reserve",
                "p_seller",
                "p_category",
                "p_length_ms",
                "p_channel",
            )
        },
    }
    table["p_id"][persons] = rules.last_person(ids[persons], config) + rules.FIRST_PERSON_ID
    a_ids = ids[auctions]
    table["p_id"][auctions] = rules.last_auction(a_ids, config) + rules.FIRST_AUCTION_ID
    table["p_seller"][auctions] = rules.sellers(a_ids, config, rng)
    table["p_category"][auctions] = rules.categories(len(auctions), rng)
    initial = rules.prices(len(auctions), rng)
    table["p_price"][auctions] = initial
    table["p_reserve"][auctions] = initial + rules.prices(len(auctions), rng)
    horizon = times(a_ids + rules.horizon_events(config)) - event_ms[auctions]
    table["p_length_ms"][auctions] = rules.auction_lengths_ms(horizon, rng)
    b_ids = ids[bids]
    table["p_auction"][bids] = rules.bid_auctions(b_ids, config, rng)
    table["p_bidder"][bids] = rules.bidders(b_ids, config, rng)
    table["p_price"][bids] = rules.prices(len(bids), rng)
    table["p_channel"][bids] = text.channel_choices(len(bids), rng)
    return table


def text_columns(table: Table, config: NexmarkKnobs, seeds: list[int]) -> None:
    """Add the text fields of the kinds ``config`` writes (each kind from its own generator,
    seeded ``seeds + [kind]``)."""
    n = len(table["p_kind"])
    for name in ("p_name", "p_city", "p_state"):
        table[name] = np.full(n, -1, dtype=np.int64)
    for name in ("p_email", "p_card", "p_item", "p_text", "p_extra"):
        table[name] = np.full(n, None, dtype=object)
    kind = table["p_kind"]
    for code in config.kind_codes:
        rows = np.flatnonzero(kind == code)
        if len(rows):
            rng = np.random.default_rng([*seeds, code])
            (_person, _auction, _bid)[code](table, rows, config, rng)


def _person(table: Table, rows: I64, config: NexmarkKnobs, rng: np.random.Generator) -> None:
    m = len(rows)
    first = rng.integers(0, len(text.FIRST_NAMES), m)
    name = first * len(text.LAST_NAMES) + rng.integers(0, len(text.LAST_NAMES), m)
    email, card = text.emails(m, rng), text.credit_cards(m, rng)
    city = rng.integers(0, len(text.US_CITIES), m)
    state = rng.integers(0, len(text.US_STATES), m)
    names = np.array([len(v) for v in text.person_names()])
    cities = np.array([len(v) for v in text.US_CITIES])
    size = (
        PERSON_FIXED_BYTES
        + names[name]
        + text.lengths_of(email)
        + text.lengths_of(card)
        + cities[city]
        + 2
    )
    table["p_name"][rows], table["p_city"][rows], table["p_state"][rows] = name, city, state
    _fill(table, "p_email", rows, email)
    _fill(table, "p_card", rows, card)
    _fill(
        table,
        "p_extra",
        rows,
        text.letters(text.extra_lengths(size, config.avg_person_byte_size, rng), rng),
    )


def _auction(table: Table, rows: I64, config: NexmarkKnobs, rng: np.random.Generator) -> None:
    m = len(rows)
    item, description = text.strings(m, 20, rng), text.strings(m, 100, rng)
    size = AUCTION_FIXED_BYTES + text.lengths_of(item) + text.lengths_of(description)
    _fill(table, "p_item", rows, item)
    _fill(table, "p_text", rows, description)
    _fill(
        table,
        "p_extra",
        rows,
        text.letters(text.extra_lengths(size, config.avg_auction_byte_size, rng), rng),
    )


def _bid(table: Table, rows: I64, config: NexmarkKnobs, rng: np.random.Generator) -> None:
    size = np.full(len(rows), BID_FIXED_BYTES, dtype=np.int64)
    _fill(
        table,
        "p_extra",
        rows,
        text.letters(text.extra_lengths(size, config.avg_bid_byte_size, rng), rng),
    )


def _fill(table: Table, name: str, rows: I64, values: list[Any]) -> None:
    column = table[name]
    if len(rows) == len(column):
        column[:] = values
    else:
        column[rows] = values
