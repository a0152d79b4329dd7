"""The simulator's knobs: every setting of a generated stream, with units, validated.

Times are integer epoch milliseconds and durations integer milliseconds (names end in
``_ms``); rates are per second of event time; fractions are shares of all records in
``[0, 1]``. Every bad value raises InvalidInput naming the knob, echoing the value and
saying how to fix it. docs/simulator.md describes each knob.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any, Final

from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.spec import FixedWindows
from windtunnel.oracle.model.timeparse import parse_duration_ms, parse_timestamp_ms

RATE_SHAPES: Final = ("constant", "poisson", "bursts", "sine")
DELAYS: Final = ("none", "uniform", "exponential", "lognormal")
TIMESTAMP_TYPES: Final = ("CreateTime", "LogAppendTime")
CLOCK_SCOPES: Final = ("key", "stream")
DEFAULT_START_MS: Final = 1_767_225_600_000
"""2026-01-01T00:00:00Z: where the virtual wall clock and event time start by default."""


def _fail(name: str, value: Any, rule: str, fix: str) -> InvalidInput:
    return InvalidInput(name, value, rule, fix)


def _int(name: str, value: Any, low: int | None = 0, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(name, value, "must be an integer", "give a whole number")
    if low is not None and value < low:
        raise _fail(name, value, f"must be at least {low}", f"give {low} or more")


def _number(name: str, value: Any, low: float, high: float | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _fail(name, value, "must be a finite number", "give a number")
    if value < low or (high is not None and value > high):
        bounds = f"in [{low}, {high}]" if high is not None else f"at least {low}"
        raise _fail(name, value, f"must be {bounds}", f"give a value {bounds}")


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise _fail(name, value, "not a known choice", f"use one of {', '.join(allowed)}")


@dataclass(frozen=True, slots=True)
class LateSpec:
    """The fixed-window spec that "late" is defined against (tumbling or hopping).

    An event is late when, at its arrival, its group's clock (the largest valid event
    time seen so far, per key or for the whole stream) has reached
    ``window end + tolerance_ms`` for every window ``[start, start + size_ms)`` that
    contains it: the default (tenzir) profile's rule.
    """

    size_ms: int
    every_ms: int | None = None
    tolerance_ms: int = 0
    clock_scope: str = "key"

    def __post_init__(self) -> None:
        # FixedWindows validates size, every and tolerance with the oracle's rules
        try:
            FixedWindows(self.size_ms, every_ms=self.every_ms, tolerance_ms=self.tolerance_ms)
        except InvalidInput as exc:
            raise InvalidInput("late_" + exc.field, exc.value, exc.rule, exc.fix) from None
        _choice("late_window.clock_scope", self.clock_scope, CLOCK_SCOPES)

    @property
    def hop_ms(self) -> int:
        return self.size_ms if self.every_ms is None else self.every_ms

    def window_block(self, on: str) -> dict[str, Any]:
        """The scenario ``window`` block (integer ms) for this spec."""
        block: dict[str, Any] = {"kind": "fixed", "size": self.size_ms, "on": on}
        if self.every_ms is not None:
            block["every"] = self.every_ms
        if self.tolerance_ms:
            block["tolerance"] = self.tolerance_ms
        return block


@dataclass(frozen=True, slots=True)
class Knobs:
    """Everything that decides a generated stream; same knobs and seed, same stream."""

    seed: int = 0
    events: int | None = 10_000
    duration_ms: int | None = None
    start_ms: int = DEFAULT_START_MS
    # rate of event creation, per second of event time, and its shape
    rate_per_s: float = 1_000.0
    rate_shape: str = "constant"
    burst_period_ms: int = 60_000
    burst_duty: float = 0.2
    burst_factor: float = 5.0
    sine_period_ms: int = 60_000
    sine_amplitude: float = 0.5
    # keys
    keys: int = 100
    key_skew: float = 0.0
    hot_keys: int = 0
    hot_fraction: float = 0.0
    sparse_keys: int = 0
    sparse_active_ms: int = 60_000
    sparse_idle_ms: int = 300_000
    # event-time disorder: arrival = creation + delay
    delay: str = "none"
    max_out_of_order_ms: int = 0
    delay_mean_ms: float = 1_000.0
    delay_sigma: float = 1.0
    max_delay_ms: int | None = None
    late_fraction: float = 0.0
    late_window: LateSpec | None = None
    outlier_fraction: float = 0.0
    outlier_ahead_ms: int = 3_600_000
    bridge_fraction: float = 0.0
    session_gap_ms: int = 30_000
    # idleness, in wall-clock time
    idle_every_ms: int | None = None
    idle_gap_ms: int = 0
    idle_partitions: int = 0
    partition_active_ms: int = 60_000
    partition_idle_ms: int = 300_000
    # producers and records
    clock_skew_ms: int = 0
    null_fraction: float = 0.0
    invalid_fraction: float = 0.0
    duplicate_fraction: float = 0.0
    duplicate_distance: int = 50
    batch_size: int | None = None
    batch_interval_ms: int | None = None
    heartbeat_ms: int | None = None
    # Kafka
    topic: str = "windtunnel"
    partitions: int = 3
    timestamp_type: str = "CreateTime"

    def __post_init__(self) -> None:
        _int("seed", self.seed, 0)
        _int("events", self.events, 1, optional=True)
        _int("duration", self.duration_ms, 1, optional=True)
        if self.events is None and self.duration_ms is None:
            raise _fail("events", None, "needs events or duration", "give --events or --duration")
        _int("start", self.start_ms, None)
        _number("rate", self.rate_per_s, 1e-9)
        if self.rate_per_s <= 0:
            raise _fail("rate", self.rate_per_s, "must be positive", "give e.g. 1000")
        _choice("rate_shape", self.rate_shape, RATE_SHAPES)
        _int("burst_period", self.burst_period_ms, 1)
        _number("burst_duty", self.burst_duty, 0.0, 1.0)
        if not 0 < self.burst_duty < 1:
            raise _fail("burst_duty", self.burst_duty, "must be in (0, 1)", "give e.g. 0.2")
        _number("burst_factor", self.burst_factor, 1.0)
        _int("sine_period", self.sine_period_ms, 1)
        _number("sine_amplitude", self.sine_amplitude, 0.0, 1.0)
        _int("keys", self.keys, 1)
        _number("key_skew", self.key_skew, 0.0)
        _int("hot_keys", self.hot_keys, 0)
        if self.hot_keys > self.keys:
            raise _fail("hot_keys", self.hot_keys, f"exceeds keys={self.keys}", "lower it")
        _number("hot_fraction", self.hot_fraction, 0.0, 1.0)
        if self.hot_fraction and not self.hot_keys:
            raise _fail("hot_fraction", self.hot_fraction, "needs hot_keys", "give --hot-keys")
        _int("sparse_keys", self.sparse_keys, 0)
        if self.sparse_keys + self.hot_keys >= self.keys and self.sparse_keys:
            raise _fail(
                "sparse_keys",
                self.sparse_keys,
                f"leaves no always-active key among keys={self.keys}",
                "lower it or raise keys",
            )
        _int("sparse_active", self.sparse_active_ms, 1)
        _int("sparse_idle", self.sparse_idle_ms, 1)
        _choice("delay", self.delay, DELAYS)
        _int("max_out_of_order", self.max_out_of_order_ms, 0)
        if self.delay == "uniform" and not self.max_out_of_order_ms:
            raise _fail("max_out_of_order", 0, "uniform delay needs a bound", "give e.g. 5s")
        _number("delay_mean", self.delay_mean_ms, 0.0)
        _number("delay_sigma", self.delay_sigma, 0.0)
        _int("max_delay", self.max_delay_ms, 0, optional=True)
        for name in (
            "late_fraction",
            "outlier_fraction",
            "bridge_fraction",
            "null_fraction",
            "invalid_fraction",
            "duplicate_fraction",
        ):
            _number(name, getattr(self, name), 0.0, 1.0)
        if self.late_fraction > 0.9:
            raise _fail(
                "late_fraction",
                self.late_fraction,
                "must be at most 0.9: late events do not move the clock, on-time ones must",
                "give a smaller fraction such as 0.05",
            )
        if self.null_fraction + self.invalid_fraction + self.late_fraction > 1:
            raise _fail(
                "late_fraction",
                self.late_fraction,
                "late, null and invalid fractions add up to more than 1",
                "lower them",
            )
        if self.late_window is not None and not isinstance(self.late_window, LateSpec):
            raise _fail("late_window", self.late_window, "must be a LateSpec", "use LateSpec()")
        _int("outlier_ahead", self.outlier_ahead_ms, 1)
        _int("session_gap", self.session_gap_ms, 1)
        _int("idle_every", self.idle_every_ms, 1, optional=True)
        _int("idle_gap", self.idle_gap_ms, 0)
        if self.idle_gap_ms and self.idle_every_ms is None:
            raise _fail("idle_gap", self.idle_gap_ms, "needs idle_every", "give --idle-every")
        _int("partitions", self.partitions, 1)
        _int("idle_partitions", self.idle_partitions, 0)
        if self.idle_partitions >= self.partitions and self.idle_partitions:
            raise _fail(
                "idle_partitions",
                self.idle_partitions,
                f"leaves no active partition of partitions={self.partitions}",
                "lower it or raise partitions",
            )
        _int("partition_active", self.partition_active_ms, 1)
        _int("partition_idle", self.partition_idle_ms, 1)
        _int("clock_skew", self.clock_skew_ms, 0)
        _int("duplicate_distance", self.duplicate_distance, 1)
        _int("batch_size", self.batch_size, 1, optional=True)
        _int("batch_interval", self.batch_interval_ms, 1, optional=True)
        if self.batch_size is not None and self.batch_interval_ms is not None:
            raise _fail(
                "batch_size",
                self.batch_size,
                "cannot be combined with batch_interval",
                "give one of them",
            )
        _int("heartbeat", self.heartbeat_ms, 1, optional=True)
        if not isinstance(self.topic, str) or not self.topic:
            raise _fail("topic", self.topic, "must be a non-empty name", "give e.g. auth-events")
        _choice("timestamp_type", self.timestamp_type, TIMESTAMP_TYPES)

    @property
    def delay_cap_ms(self) -> int:
        """The largest arrival delay in milliseconds (bounds the reordering buffer)."""
        if self.delay == "none":
            return 0
        if self.delay == "uniform":
            return self.max_out_of_order_ms
        if self.max_delay_ms is not None:
            return self.max_delay_ms
        spread = self.delay_mean_ms * (20 if self.delay == "exponential" else 1)
        if self.delay == "lognormal":
            spread *= math.exp(4 * self.delay_sigma)
        return max(1, math.ceil(spread))

    def with_changes(self, **changes: Any) -> Knobs:
        """A copy with some knobs changed (validated again)."""
        return replace(self, **changes)


KNOB_NAMES: Final = tuple(f.name for f in fields(Knobs))
_DURATION_KNOBS: Final = frozenset(n for n in KNOB_NAMES if n.endswith("_ms")) - {"start_ms"}


def knobs_from_options(options: dict[str, Any]) -> Knobs:
    """Knobs from text options (CLI or file): ``{"rate": "500", "max_out_of_order": "5s"}``.

    Names may omit the ``_ms``/``_per_s`` suffix and use dashes; durations take units
    (``250ms``, ``10s``, ``5min``); ``start`` takes epoch ms or ISO-8601;
    ``late_window`` takes ``size[/every][+tolerance]`` such as ``1min+10s``.
    Raises InvalidInput naming the knob for an unknown name or a bad value.
    """
    values: dict[str, Any] = {}
    for raw_name, raw in options.items():
        name = raw_name.replace("-", "_")
        if name not in KNOB_NAMES:
            for suffix in ("_ms", "_per_s"):
                if name + suffix in KNOB_NAMES:
                    name += suffix
                    break
            else:
                raise _fail(raw_name, raw, "unknown knob", "see docs/simulator.md for the list")
        values[name] = _convert(name, raw)
    return Knobs(**values)


def _convert(name: str, raw: Any) -> Any:
    short = name.removesuffix("_ms").removesuffix("_per_s")
    if raw is None or not isinstance(raw, str):
        if name in _DURATION_KNOBS and raw is not None and not isinstance(raw, int):
            return parse_duration_ms(raw, short)
        return raw
    text = raw.strip()
    if name == "late_window":
        return parse_late_window(text)
    if name == "start_ms":
        return parse_timestamp_ms(int(text) if text.lstrip("-").isdigit() else text, "start")
    if name in _DURATION_KNOBS:
        # a plain number is milliseconds
        plain = text.replace(".", "", 1).lstrip("-").isdigit()
        ms = parse_duration_ms(float(text) if plain else text, short)
        return float(ms) if isinstance(Knobs.__dataclass_fields__[name].default, float) else ms
    default = Knobs.__dataclass_fields__[name].default
    if isinstance(default, str):
        return text
    try:
        number = float(text)
    except ValueError:
        raise _fail(short, raw, "not a number", "give a number such as 0.05") from None
    if isinstance(default, float):
        return number
    if number != int(number):
        raise _fail(short, raw, "must be a whole number", "give an integer")
    return int(number)


def parse_late_window(text: str) -> LateSpec:
    """``size[/every][+tolerance][@stream]``, e.g. ``1min+10s`` or ``10min/1min+2min``."""
    body, _, scope = text.partition("@")
    body, _, tolerance = body.partition("+")
    size, _, every = body.partition("/")
    return LateSpec(
        size_ms=parse_duration_ms(size, "late_window.size"),
        every_ms=parse_duration_ms(every, "late_window.every") if every else None,
        tolerance_ms=parse_duration_ms(tolerance, "late_window.tolerance") if tolerance else 0,
        clock_scope=scope or "key",
    )


KNOB_HELP: Final[dict[str, tuple[str, str]]] = {
    "seed": ("integer", "random seed: same seed and knobs, same stream, byte for byte"),
    "events": ("records", "total records (duplicates and bridges included)"),
    "duration_ms": ("duration", "event-time span to generate instead of (or as well as) events"),
    "start_ms": ("epoch ms or ISO-8601", "where event time and the wall clock start"),
    "rate_per_s": ("records/s", "mean creation rate per second of event time"),
    "rate_shape": ("choice", "constant (evenly spaced), poisson, bursts, sine"),
    "burst_period_ms": ("duration", "bursts: length of one on/off cycle"),
    "burst_duty": ("fraction", "bursts: share of each cycle at the burst rate"),
    "burst_factor": ("multiplier", "bursts: rate during a burst, relative to the rate"),
    "sine_period_ms": ("duration", "sine: period of the rate's oscillation"),
    "sine_amplitude": ("fraction", "sine: rate swings between rate x (1 +- amplitude)"),
    "keys": ("count", "distinct keys (users, devices, viewers)"),
    "key_skew": ("Zipf exponent", "0 = uniform; 1 = key i has weight 1/i"),
    "hot_keys": ("count", "the first keys that get hot_fraction of all records"),
    "hot_fraction": ("fraction", "share of records going to the hot keys"),
    "sparse_keys": ("count", "the last keys, which go idle on a wall-clock schedule"),
    "sparse_active_ms": ("duration", "sparse keys: active part of each cycle"),
    "sparse_idle_ms": ("duration", "sparse keys: idle part of each cycle (no record arrives)"),
    "delay": ("choice", "arrival delay: none, uniform, exponential, lognormal"),
    "max_out_of_order_ms": ("duration", "uniform delay bound: bounded out-of-orderness"),
    "delay_mean_ms": ("ms", "exponential/lognormal: mean delay"),
    "delay_sigma": ("number", "lognormal: sigma of the log of the delay"),
    "max_delay_ms": ("duration", "cap of exponential/lognormal delays (default 20 x mean)"),
    "late_fraction": ("fraction", "records placed late on purpose for late_window"),
    "late_window": ("size[/every][+tolerance][@stream]", "the window spec late is defined by"),
    "outlier_fraction": ("fraction", "records stamped outlier_ahead in the future"),
    "outlier_ahead_ms": ("duration", "how far in the future outliers are stamped"),
    "bridge_fraction": ("fraction", "late records joining two sessions of one key"),
    "session_gap_ms": ("duration", "session gap that bridging records are placed for"),
    "idle_every_ms": ("duration", "global idle gap after every this much creation time"),
    "idle_gap_ms": ("duration", "length of each global idle gap (no record created)"),
    "idle_partitions": ("count", "the last Kafka partitions, which go idle on a schedule"),
    "partition_active_ms": ("duration", "idle partitions: active part of each cycle"),
    "partition_idle_ms": ("duration", "idle partitions: idle part of each cycle"),
    "clock_skew_ms": ("duration", "each key's producer clock is off by up to +- this"),
    "null_fraction": ("fraction", "records whose time field is null"),
    "invalid_fraction": ("fraction", 'records whose time field is "not-a-time"'),
    "duplicate_fraction": ("fraction", "records sent twice (same record, later position)"),
    "duplicate_distance": ("records", "a duplicate or bridge arrives up to this many later"),
    "batch_size": ("records", "records per poll / micro-batch"),
    "batch_interval_ms": ("duration", "micro-batch per this much arrival wall time"),
    "heartbeat_ms": ("duration", "an advance of the wall clock every this much idle time"),
    "topic": ("name", "Kafka topic of the records"),
    "partitions": ("count", "Kafka partitions (murmur2 of the key, as Kafka's default)"),
    "timestamp_type": ("choice", "CreateTime (event time) or LogAppendTime (arrival)"),
}
"""Unit and meaning of every knob (the CLI's help and docs/simulator.md)."""
