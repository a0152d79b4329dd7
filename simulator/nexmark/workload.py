"""The ``nexmark`` workload: persons, auctions and bids by Nexmark's generator rules.

Each record is one flat event: ``event_type`` (``person``, ``auction`` or ``bid``) and
its kind's fields with the names of Nexmark's Flink DDL, times as epoch ms; a field
another kind has is absent (a JSON key left out, a null in typed columns). The default
query is the window of Nexmark's Q5: bids per auction in 10 s windows every 2 s; over a
stream holding other kinds it starts with ``where: event_type = 'bid'`` (Nexmark's
``bid`` view), and the other records are labelled ``filtered``. A record's Kafka key is
its producer lane (``lane-0``, ...; ``keys`` lanes): Nexmark's own Kafka sink writes
records without a key, round-robin.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar, Final

import numpy as np
import numpy.typing as npt

from windtunnel.simulator.knobs import Knobs, LateSpec
from windtunnel.simulator.nexmark import text
from windtunnel.simulator.nexmark.config import KINDS, NexmarkKnobs, nexmark_knobs, own_name
from windtunnel.simulator.nexmark.rules import AUCTION, BID, PERSON
from windtunnel.simulator.nexmark.stream import NexmarkArrivals
from windtunnel.simulator.payloads import ArrivalSource, Pool, Rendered, Table, Workload, times

FIELDS: Final = {
    "person": (
        "event_type",
        "id",
        "name",
        "emailAddress",
        "creditCard",
        "city",
        "state",
        "dateTime",
        "extra",
    ),
    "auction": (
        "event_type",
        "id",
        "itemName",
        "description",
        "initialBid",
        "reserve",
        "dateTime",
        "expires",
        "seller",
        "category",
        "extra",
    ),
    "bid": ("event_type", "auction", "bidder", "price", "channel", "url", "dateTime", "extra"),
}
"""Each kind's fields, in Nexmark's order."""
BID_WHERE: Final = "event_type = 'bid'"


class Nexmark(Workload):
    name = "nexmark"
    summary = "Nexmark's persons, auctions and bids (Q5's window: bids per auction, 10s every 2s)"
    key_field = "lane"
    time_field = "dateTime"
    defaults: ClassVar[dict[str, Any]] = {"keys": 16, "rate_per_s": 10_000.0}
    window = LateSpec(10_000, every_ms=2_000)
    aggregate: ClassVar[dict[str, str]] = {"num": "count()"}
    column_types: ClassVar[dict[str, str]] = {
        "id": "int64",
        "initialBid": "int64",
        "reserve": "int64",
        "expires": "int64",
        "seller": "int64",
        "category": "int64",
        "auction": "int64",
        "bidder": "int64",
        "price": "int64",
    }

    def __init__(self, knobs: Knobs, **options: Any) -> None:
        self.config: NexmarkKnobs = nexmark_knobs(options)
        super().__init__(knobs)
        self.channels, self.urls = channel_pools(knobs.seed)
        self.names = Pool(text.person_names())
        self.cities, self.states = Pool(text.US_CITIES), Pool(text.US_STATES)
        self.kind_json = [f'"{k}"' for k in KINDS]

    @classmethod
    def own_options(cls, options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        own = {name: value for name, value in options.items() if own_name(name) is not None}
        return {n: v for n, v in options.items() if n not in own}, own

    def make_keys(self, keys: int) -> Pool:
        return Pool([f"lane-{i}" for i in range(keys)])

    def group_by(self) -> list[str]:
        return ["auction"]

    def arrival_source(self) -> ArrivalSource:
        return NexmarkArrivals(self.knobs, self.config)

    def where(self) -> str | None:
        return None if self.config.kinds == ("bid",) else BID_WHERE

    def filtered(self, table: Table) -> npt.NDArray[np.bool_] | None:
        if self.config.kinds == ("bid",):
            return None
        removed: npt.NDArray[np.bool_] = table["p_kind"] != BID
        return removed

    def group_codes(self, table: Table) -> npt.NDArray[np.int64]:
        return table["p_auction"]

    def fields(self) -> list[str]:
        order = [f for kind in ("person", "auction", "bid") for f in FIELDS[kind]]
        present = {f for kind in self.config.kinds for f in FIELDS[kind]}
        return [f for f in dict.fromkeys(order) if f in present]

    def shapes(self, table: Table) -> list[npt.NDArray[np.int64]] | None:
        kind = table["p_kind"]
        if len(self.config.kinds) == 1:
            return None
        return [np.flatnonzero(kind == code) for code in self.config.kind_codes]

    def render(self, table: Table, as_json: bool) -> Rendered:
        """The columns of one kind's records (every row of ``table`` is of one kind)."""
        n = len(table["p_kind"])
        if not n:
            return [(f, []) for f in FIELDS[self.config.kinds[0]]]
        code = int(table["p_kind"][0])
        kind = KINDS[code]
        columns: dict[str, list[Any]] = {
            "event_type": [self.kind_json[code] if as_json else kind] * n,
            "dateTime": times(table, as_json),
            "extra": _texts(table["p_extra"], as_json),
        }
        ints = {name: table[column].tolist() for name, column in _INTS[code]}
        columns.update(ints)
        if code == PERSON:
            columns["name"] = self.names.take(table["p_name"], as_json)
            columns["emailAddress"] = _texts(table["p_email"], as_json)
            columns["creditCard"] = _texts(table["p_card"], as_json)
            columns["city"] = self.cities.take(table["p_city"], as_json)
            columns["state"] = self.states.take(table["p_state"], as_json)
        elif code == AUCTION:
            columns["itemName"] = _texts(table["p_item"], as_json)
            columns["description"] = _texts(table["p_text"], as_json)
            valid = table["status"] == 0
            start = np.where(valid, table["ts"], table["event_ms"])
            columns["expires"] = (start + table["p_length_ms"]).tolist()
        else:
            columns["channel"] = self.channels.take(table["p_channel"], as_json)
            columns["url"] = self.urls.take(table["p_channel"], as_json)
        return [(f, columns[f]) for f in FIELDS[kind]]


@functools.lru_cache(maxsize=4)
def channel_pools(seed: int) -> tuple[Pool, Pool]:
    """The channels and their URLs for ``seed`` (drawn once per seed in a process)."""
    names, urls = text.channels(np.random.default_rng([seed, 23]))
    return Pool(names), Pool(urls)


_INTS: Final = {
    PERSON: (("id", "p_id"),),
    AUCTION: (
        ("id", "p_id"),
        ("initialBid", "p_price"),
        ("reserve", "p_reserve"),
        ("seller", "p_seller"),
        ("category", "p_category"),
    ),
    BID: (("auction", "p_auction"), ("bidder", "p_bidder"), ("price", "p_price")),
}
"""Integer fields of each kind and their columns."""


def _texts(column: npt.NDArray[Any], as_json: bool) -> list[Any]:
    """Text values (letters, digits, spaces, ``@._``: nothing to escape) or their JSON texts."""
    values: list[Any] = column.tolist()
    return [f'"{v}"' for v in values] if as_json else values
