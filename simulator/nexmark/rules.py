"""Nexmark's generator rules as numpy functions of event numbers.

Event number ``n`` (0, 1, 2, ... in generation order) becomes the event id ``a`` through
the out-of-order permutation: ``a = floor(n / G) x G + (n x 953) mod G`` for
``outOfOrderGroupSize`` G. The id decides everything else: the kind (``a mod T``
against the proportions, T = persons + auctions + bids per epoch: persons first, then
auctions, then bids), the person and auction ids of the epoch, and the event time
``baseTime + floor(a x interEventDelayUs) / 1000`` with ``interEventDelayUs = 10^6 /
firstEventRate``. Random choices (hot or cold ids, prices, auction lengths) take uniform
draws from the caller's numpy generator. docs/simulator.md cites each rule's source.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from windtunnel.simulator.nexmark.config import NexmarkKnobs

I64 = npt.NDArray[np.int64]

FIRST_PERSON_ID: Final = 1_000
FIRST_AUCTION_ID: Final = 1_000
FIRST_CATEGORY_ID: Final = 10
NUM_CATEGORIES: Final = 5
HOT_BATCH: Final = 100
"""Hot auctions, sellers and bidders are the first (bidders: second) of the last batch of
this many auctions or persons."""
ID_LEAD: Final = 10
"""Cold picks may name this many auctions or persons not created yet."""
OUT_OF_ORDER_STEP: Final = 953
PERSON, AUCTION, BID = 0, 1, 2


def event_ids(numbers: I64, group_size: int) -> I64:
    """The event id of each event number: permuted within groups of ``group_size``."""
    ids: I64 = numbers // group_size * group_size + numbers * OUT_OF_ORDER_STEP % group_size
    return ids


def kinds(ids: I64, config: NexmarkKnobs) -> I64:
    """PERSON, AUCTION or BID for each event id."""
    offset = ids % config.total_proportion
    p, a = config.person_proportion, config.auction_proportion
    kind: I64 = np.where(offset < p, PERSON, np.where(offset < p + a, AUCTION, BID))
    return kind


def last_person(ids: I64, config: NexmarkKnobs) -> I64:
    """The last person id (from 0) created at or before each event id."""
    total, p = config.total_proportion, config.person_proportion
    last: I64 = ids // total * p + np.minimum(ids % total, p - 1)
    return last


def last_auction(ids: I64, config: NexmarkKnobs) -> I64:
    """The last auction id (from 0) created at or before each event id (-1 before any)."""
    total, p, a = config.total_proportion, config.person_proportion, config.auction_proportion
    epoch, offset = ids // total, ids % total
    in_epoch = np.clip(offset - p, -1, a - 1)  # -1: a person, before this epoch's auctions
    last: I64 = epoch * a + in_epoch
    return last


def recent_person(ids: I64, config: NexmarkKnobs, rng: np.random.Generator) -> I64:
    """A random person (from 0) among the ``numActivePeople`` latest, plus the lead."""
    people = last_person(ids, config) + 1
    active = np.minimum(people, config.num_active_people)
    picked: I64 = people - active + rng.integers(0, active + ID_LEAD)
    return picked


def hot(ratio: int, n: int, rng: np.random.Generator) -> npt.NDArray[np.bool_]:
    """Whether each of ``n`` choices is hot: probability ``1 - 1/ratio``."""
    chosen: npt.NDArray[np.bool_] = rng.integers(0, ratio, n) > 0
    return chosen


def sellers(ids: I64, config: NexmarkKnobs, rng: np.random.Generator) -> I64:
    """The seller of each auction: the first person of the last batch of 100 when hot."""
    is_hot = hot(config.hot_sellers_ratio, len(ids), rng)
    hot_id = last_person(ids, config) // HOT_BATCH * HOT_BATCH
    seller: I64 = np.where(is_hot, hot_id, recent_person(ids, config, rng)) + FIRST_PERSON_ID
    return seller


def bid_auctions(ids: I64, config: NexmarkKnobs, rng: np.random.Generator) -> I64:
    """The auction of each bid: the first auction of the last batch of 100 when hot, else
    one of the ``numInFlightAuctions`` latest (plus the lead)."""
    is_hot = hot(config.hot_auction_ratio, len(ids), rng)
    last = last_auction(ids, config)
    low = np.maximum(last - config.num_in_flight_auctions, 0)
    cold = low + rng.integers(0, last - low + 1 + ID_LEAD)
    auction: I64 = np.where(is_hot, last // HOT_BATCH * HOT_BATCH, cold) + FIRST_AUCTION_ID
    return auction


def bidders(ids: I64, config: NexmarkKnobs, rng: np.random.Generator) -> I64:
    """The bidder of each bid: the second person of the last batch of 100 when hot."""
    is_hot = hot(config.hot_bidders_ratio, len(ids), rng)
    hot_id = last_person(ids, config) // HOT_BATCH * HOT_BATCH + 1
    bidder: I64 = np.where(is_hot, hot_id, recent_person(ids, config, rng)) + FIRST_PERSON_ID
    return bidder


def prices(n: int, rng: np.random.Generator) -> I64:
    """``n`` prices in cents: ``round(10^(6u) x 100)`` for uniform u in [0, 1)."""
    price: I64 = np.floor(10.0 ** (rng.random(n) * 6.0) * 100.0 + 0.5).astype(np.int64)
    return price


def categories(n: int, rng: np.random.Generator) -> I64:
    """``n`` categories: 10 + a uniform choice of 5."""
    category: I64 = FIRST_CATEGORY_ID + rng.integers(0, NUM_CATEGORIES, n)
    return category


def auction_lengths_ms(horizon_ms: I64, rng: np.random.Generator) -> I64:
    """Each auction's length: ``1 + uniform[0, 2 x horizon)`` ms, the horizon being the time
    until ``numInFlightAuctions`` more auctions are created (at least one ms)."""
    length: I64 = 1 + rng.integers(0, np.maximum(2 * horizon_ms, 1))
    return length


def horizon_events(config: NexmarkKnobs) -> int:
    """Events until ``numInFlightAuctions`` more auctions are created."""
    return config.num_in_flight_auctions * config.total_proportion // config.auction_proportion


def occasional_delays_ms(n: int, config: NexmarkKnobs, rng: np.random.Generator) -> I64:
    """``n`` arrival delays: ``uniform[1, occasionalDelay]`` ms with probability
    ``probDelayedEvent``, else 0."""
    delayed = rng.random(n) < config.prob_delayed_event
    length = rng.integers(1, config.occasional_delay_ms + 1, n) if config.occasional_delay_ms else 0
    delay: I64 = np.where(delayed, length, 0).astype(np.int64)
    return delay
