"""Nexmark's generator rules: kinds by id, the out-of-order permutation, hot shares, valid
ids and foreign keys, auction lengths, prices, padding and occasional delays."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.simulator.knobs import DEFAULT_START_MS
from windtunnel.simulator.nexmark import rules, text
from windtunnel.simulator.nexmark.config import NexmarkKnobs, nexmark_knobs
from windtunnel.simulator.workloads import simulate

DEFAULT = NexmarkKnobs()


def columns(**knobs: Any) -> dict[str, np.ndarray]:
    """Every generated record's table columns (the full stream unless ``kinds``)."""
    chunks = list(simulate("nexmark", **knobs).chunks())
    return {name: np.concatenate([c[name] for c in chunks]) for name in chunks[0]}


@pytest.fixture(scope="module")
def big() -> dict[str, np.ndarray]:
    return columns(events=120_000, seed=3)


@pytest.mark.parametrize(("p", "a", "b"), [(1, 3, 46), (2, 5, 10)])
def test_every_epoch_of_ids_holds_the_proportions(p: int, a: int, b: int) -> None:
    config = NexmarkKnobs(person_proportion=p, auction_proportion=a, bid_proportion=b)
    total = p + a + b
    kinds = rules.kinds(np.arange(total * 300, dtype=np.int64), config).reshape(300, total)
    expected = [rules.PERSON] * p + [rules.AUCTION] * a + [rules.BID] * b
    assert (kinds == np.array(expected)).all()


@pytest.mark.parametrize("group", [10, 1_000])
def test_out_of_order_ids_permute_each_group(group: int) -> None:
    numbers = np.arange(group * 20, dtype=np.int64)
    ids = rules.event_ids(numbers, group).reshape(20, group)
    assert (np.sort(ids, axis=1) == numbers.reshape(20, group)).all()
    assert (ids[:, 1] == numbers.reshape(20, group)[:, 0] + 953 % group).all()
    assert (rules.event_ids(numbers, 1) == numbers).all()


def settled(table: dict[str, np.ndarray]) -> np.ndarray:
    """Rows created more than the longest delay before the last one: all of them arrived
    before the stream was cut at its number of records."""
    return table["created"] < table["created"].max() - 3_000


def test_person_and_auction_ids_count_up_by_kind(big: dict[str, np.ndarray]) -> None:
    order = np.argsort(big["p_number"])
    order = order[settled(big)[order]]
    kind, ids = big["p_kind"][order], big["p_id"][order]
    for code, first in (
        (rules.PERSON, rules.FIRST_PERSON_ID),
        (rules.AUCTION, rules.FIRST_AUCTION_ID),
    ):
        made = ids[kind == code]
        assert (made == first + np.arange(len(made))).all()


def test_hot_auctions_bidders_and_sellers_have_their_shares(big: dict[str, np.ndarray]) -> None:
    ids = big["p_number"]  # outOfOrderGroupSize 1: the event id is the number
    bids, auctions = big["p_kind"] == rules.BID, big["p_kind"] == rules.AUCTION
    hot_auction = rules.last_auction(ids, DEFAULT) // 100 * 100 + rules.FIRST_AUCTION_ID
    hot_bidder = rules.last_person(ids, DEFAULT) // 100 * 100 + 1 + rules.FIRST_PERSON_ID
    hot_seller = rules.last_person(ids, DEFAULT) // 100 * 100 + rules.FIRST_PERSON_ID
    # hot with P = 1 - 1/ratio, plus the cold picks that land on the hot one (< 1%)
    assert abs((big["p_auction"] == hot_auction)[bids].mean() - 1 / 2) < 0.015
    assert abs((big["p_bidder"] == hot_bidder)[bids].mean() - 3 / 4) < 0.015
    assert abs((big["p_seller"] == hot_seller)[auctions].mean() - 3 / 4) < 0.03


def test_ids_and_foreign_keys_are_valid(big: dict[str, np.ndarray]) -> None:
    ids = big["p_number"]
    bids, auctions = big["p_kind"] == rules.BID, big["p_kind"] == rules.AUCTION
    last_person = rules.last_person(ids, DEFAULT) + rules.FIRST_PERSON_ID
    last_auction = rules.last_auction(ids, DEFAULT) + rules.FIRST_AUCTION_ID
    lead = rules.ID_LEAD
    for column, last, rows in (
        ("p_auction", last_auction, bids), ("p_bidder", last_person, bids),
        ("p_seller", last_person, auctions),
    ):  # fmt: skip
        value = big[column][rows]
        assert (value >= 1_000).all() and (value <= last[rows] + lead).all(), column
    recent = big["p_auction"][bids] >= last_auction[bids] - DEFAULT.num_in_flight_auctions
    assert recent.all()  # cold picks are among the in-flight auctions, hot ones the latest
    assert set(np.unique(big["p_category"][auctions]).tolist()) == {10, 11, 12, 13, 14}
    assert (big["p_reserve"][auctions] > big["p_price"][auctions]).all()
    price = big["p_price"][bids | auctions]
    assert price.min() >= 100 and price.max() <= 100_000_000


def test_auctions_expire_after_they_start_within_twice_the_horizon(
    big: dict[str, np.ndarray],
) -> None:
    auctions = big["p_kind"] == rules.AUCTION
    length = big["p_length_ms"][auctions]
    # 100 in-flight auctions at 3 per 50 events: 1,666 events, 166 ms at 10,000 events/s
    assert length.min() >= 1 and length.max() <= 2 * 166 + 1
    assert abs(length.mean() - 167) < 5


def test_event_times_follow_the_rate_and_arrivals_the_occasional_delay(
    big: dict[str, np.ndarray],
) -> None:
    numbers = big["p_number"]
    assert (big["ts"] == DEFAULT_START_MS + numbers // 10).all()  # 10,000 events/s: 0.1 ms each
    delay = big["arrival"] - big["created"]
    assert delay.min() == 0 and delay.max() <= 3_000
    assert abs((delay > 0)[settled(big)].mean() - 0.1) < 0.005
    late = columns(events=20_000, seed=3, out_of_order_group_size=1_000, rate=1_000)
    ids = rules.event_ids(late["p_number"], 1_000)
    assert (late["ts"] == DEFAULT_START_MS + ids).all()  # 1 ms an event, permuted in groups
    assert (late["created"] == DEFAULT_START_MS + late["p_number"]).all()


def sizes_without_extra(kind: str, table: dict[str, np.ndarray]) -> np.ndarray:
    """Nexmark's size estimate of each event without its ``extra``."""
    if kind == "bid":
        return np.full(len(table["p_kind"]), 32)
    if kind == "auction":
        return np.array(
            [48 + len(a) + len(b) for a, b in zip(table["p_item"], table["p_text"], strict=True)]
        )
    names = [len(n) for n in text.person_names()]
    cities = [len(c) for c in text.US_CITIES]
    return np.array([
        8 + names[n] + len(e) + len(c) + cities[city] + 2
        for n, e, c, city in zip(table["p_name"], table["p_email"], table["p_card"], table["p_city"], strict=True)
    ])  # fmt: skip


@pytest.mark.parametrize(("kind", "average"), [("bid", 100), ("auction", 500), ("person", 200)])
def test_extra_pads_each_kind_to_its_average_size(kind: str, average: int) -> None:
    table = columns(events=5_000, seed=4, kinds=kind)
    extra = np.array([len(v) for v in table["p_extra"].tolist()])
    size = sizes_without_extra(kind, table) + extra
    assert abs(size.mean() - average) < 0.01 * average
    wanted = average - sizes_without_extra(kind, table)
    delta = np.floor(wanted * 0.2 + 0.5)
    assert ((extra >= wanted - delta) & (extra < wanted + delta)).all()


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"kinds": "bids"}, "kinds"),
        ({"kinds": "bid,bid"}, "kinds"),
        ({"hot_auction_ratio": 0}, "hot_auction_ratio"),
        ({"out_of_order_group_size": "1.5"}, "out_of_order_group_size"),
        ({"prob_delayed_event": 2}, "prob_delayed_event"),
        ({"occasional_delay": "soon"}, "occasional_delay"),
        ({"person_proportion": 0}, "person_proportion"),
        ({"bid_proportion": 0}, "kinds"),
        ({"hot_seller_ratio": 4}, "hot_seller_ratio"),
    ],
)
def test_bad_knobs_name_themselves(options: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        nexmark_knobs(options)
    assert info.value.field == field


def test_knobs_take_text_and_the_prefix() -> None:
    config = nexmark_knobs(
        {
            "nexmark_kinds": "auction, bid",
            "occasional-delay": "2s",
            "prob_delayed_event": "0.25",
            "hot_bidders_ratio": "8",
        }
    )
    assert config == NexmarkKnobs(
        kinds=("auction", "bid"),
        occasional_delay_ms=2_000,
        prob_delayed_event=0.25,
        hot_bidders_ratio=8,
    )
