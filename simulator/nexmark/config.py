"""The Nexmark workload's own knobs: Nexmark's generator parameters, with their defaults.

Names are Nexmark's (``NexmarkConfiguration``) in snake case; the event rate
(``firstEventRate``), the number of events (``numEvents``) and the base time
(``baseTime``) are the simulator's ``rate``, ``events`` and ``start``. Every bad value
raises InvalidInput naming the knob, echoing the value and saying how to fix it.
docs/simulator.md cites each parameter's source.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Final

from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.timeparse import parse_duration_ms

KINDS: Final = ("person", "auction", "bid")
"""The event kinds, in ``event_type`` order (0, 1, 2 in Nexmark's DDL)."""
PREFIX: Final = "nexmark_"
"""Nexmark's knobs may carry this prefix (the command line's ``--nexmark-*`` options)."""


@dataclass(frozen=True, slots=True)
class NexmarkKnobs:
    """Nexmark's generator parameters (defaults as in ``NexmarkConfiguration``) and
    ``kinds``, the event kinds written (the stream's numbering and times stay those of
    the full stream)."""

    kinds: tuple[str, ...] = KINDS
    person_proportion: int = 1
    auction_proportion: int = 3
    bid_proportion: int = 46
    out_of_order_group_size: int = 1
    hot_auction_ratio: int = 2
    hot_sellers_ratio: int = 4
    hot_bidders_ratio: int = 4
    num_in_flight_auctions: int = 100
    num_active_people: int = 1_000
    avg_person_byte_size: int = 200
    avg_auction_byte_size: int = 500
    avg_bid_byte_size: int = 100
    prob_delayed_event: float = 0.1
    occasional_delay_ms: int = 3_000

    def __post_init__(self) -> None:
        kinds = self.kinds
        if (
            not isinstance(kinds, tuple)
            or not kinds
            or any(k not in KINDS for k in kinds)
            or len(set(kinds)) != len(kinds)
        ):
            raise InvalidInput(
                "kinds",
                _echo(kinds),
                f"must name distinct kinds among {', '.join(KINDS)}",
                "give e.g. bid, or auction,bid",
            )
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "kinds":
                continue
            if f.name == "prob_delayed_event":
                if (
                    isinstance(value, bool)
                    or not isinstance(value, int | float)
                    or not 0 <= value <= 1
                ):
                    raise InvalidInput(
                        f.name, value, "must be a probability in [0, 1]", "give e.g. 0.1"
                    )
                continue
            low = 0 if f.name.endswith(("_ms", "_proportion", "_byte_size")) else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InvalidInput(
                    f.name,
                    value,
                    f"must be a whole number of at least {low}",
                    f"give {low} or more (Nexmark's default: {f.default})",
                )
        if "bid" in kinds and not self.bid_proportion:
            raise InvalidInput(
                "kinds",
                _echo(kinds),
                "names bid, but bid_proportion=0 generates none",
                "drop bid from kinds, or give bid_proportion 1 or more",
            )
        if not self.person_proportion or not self.auction_proportion:
            raise InvalidInput(
                "person_proportion" if not self.person_proportion else "auction_proportion",
                0,
                "must be at least 1: bids refer to earlier persons and auctions",
                "give 1 or more (Nexmark's defaults: 1 person, 3 auctions, 46 bids)",
            )

    @property
    def total_proportion(self) -> int:
        """Events per epoch of ids: persons, then auctions, then bids."""
        return self.person_proportion + self.auction_proportion + self.bid_proportion

    @property
    def kind_codes(self) -> tuple[int, ...]:
        """The codes (index in :data:`KINDS`) of the kinds written."""
        return tuple(KINDS.index(k) for k in self.kinds)


NAMES: Final = tuple(f.name for f in fields(NexmarkKnobs))


def own_name(name: str) -> str | None:
    """The Nexmark knob ``name`` means (dashes, the ``nexmark_`` prefix and the ``_ms``
    suffix optional), or None when it is none of them."""
    bare = name.replace("-", "_").removeprefix(PREFIX)
    for candidate in (bare, bare + "_ms"):
        if candidate in NAMES:
            return candidate
    return None


def nexmark_knobs(options: dict[str, Any]) -> NexmarkKnobs:
    """NexmarkKnobs from options (Python values, or text as on the command line: ``kinds``
    as ``bid`` or ``auction,bid``, ``occasional_delay`` as a duration such as ``3s``).
    Raises InvalidInput naming the knob for an unknown name or a bad value."""
    values: dict[str, Any] = {}
    for raw_name, raw in options.items():
        name = own_name(raw_name)
        if name is None:
            raise InvalidInput(
                raw_name, raw, "not a Nexmark knob", f"use one of {', '.join(NAMES)}"
            )
        values[name] = _convert(name, raw)
    return NexmarkKnobs(**values)


def _convert(name: str, raw: Any) -> Any:
    if name == "kinds":
        if isinstance(raw, str):
            return tuple(part.strip() for part in raw.split(",") if part.strip())
        return tuple(raw) if isinstance(raw, list | tuple) else raw
    if not isinstance(raw, str):
        return raw
    text = raw.strip()
    if name == "occasional_delay_ms":
        plain = text.replace(".", "", 1).isdigit()
        return parse_duration_ms(float(text) if plain else text, "occasional_delay")
    try:
        number = float(text)
    except ValueError:
        raise InvalidInput(name, raw, "not a number", "give a number such as 2") from None
    if name == "prob_delayed_event":
        return number
    if number != int(number):
        raise InvalidInput(name, raw, "must be a whole number", "give an integer")
    return int(number)


def _echo(value: Any) -> Any:
    return (
        ",".join(value)
        if isinstance(value, tuple) and all(isinstance(v, str) for v in value)
        else value
    )


HELP: Final[dict[str, tuple[str, str, str]]] = {
    "kinds": (
        "kinds",
        "person,auction,bid",
        "event kinds written, e.g. bid (same numbering and times as the full stream)",
    ),
    "person_proportion": ("count", "1", "personProportion: persons per epoch of ids"),
    "auction_proportion": ("count", "3", "auctionProportion: auctions per epoch of ids"),
    "bid_proportion": ("count", "46", "bidProportion: bids per epoch of ids"),
    "out_of_order_group_size": (
        "events",
        "1",
        "outOfOrderGroupSize: events permuted within groups of this size",
    ),
    "hot_auction_ratio": (
        "ratio",
        "2",
        "hotAuctionRatio: a bid is for the hot auction with P = 1 - 1/ratio",
    ),
    "hot_sellers_ratio": (
        "ratio",
        "4",
        "hotSellersRatio: an auction is by the hot seller with P = 1 - 1/ratio",
    ),
    "hot_bidders_ratio": (
        "ratio",
        "4",
        "hotBiddersRatio: a bid is by the hot bidder with P = 1 - 1/ratio",
    ),
    "num_in_flight_auctions": (
        "count",
        "100",
        "numInFlightAuctions: recent auctions a cold bid picks from",
    ),
    "num_active_people": (
        "count",
        "1000",
        "numActivePeople: recent persons a cold seller or bidder is",
    ),
    "avg_person_byte_size": (
        "bytes",
        "200",
        "avgPersonByteSize: person size the extra field pads to",
    ),
    "avg_auction_byte_size": (
        "bytes",
        "500",
        "avgAuctionByteSize: auction size the extra field pads to",
    ),
    "avg_bid_byte_size": ("bytes", "100", "avgBidByteSize: bid size the extra field pads to"),
    "prob_delayed_event": (
        "probability",
        "0.1",
        "probDelayedEvent: share of events that arrive delayed",
    ),
    "occasional_delay_ms": (
        "duration",
        "3s",
        "occasionalDelaySec: a delayed event arrives up to this much later",
    ),
}
"""Unit, default and meaning of every Nexmark knob (the CLI's help, docs/simulator.md)."""
