"""Hypothesis strategies for window specs, streams and scenarios.

Every strategy is a plural noun with keyword-only options. Each shrinks towards the
simplest case: few, large windows; short, in-order, single-key streams on one wall
instant; no nulls, batches or advances. Faker data (key names) is drawn *through*
Hypothesis from a pool that Faker fills once with a fixed seed, so Hypothesis's seed
and shrinking still decide everything.

The window strategies (``window_specs``, ``window_blocks``) live in :mod:`.window_strategies`
and are importable from here too. ``scenarios()`` yields
:class:`windtunnel.oracle.scenario.Scenario` values; ``scenario_dicts()`` yields the raw mapping :func:`parse_scenario` accepts (the file
format), for tests that write files or tweak a field first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from faker import Faker
from hypothesis import strategies as st

from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.stream import Advance, Batch, Event, Item, Watermark
from windtunnel.oracle.scenario import Scenario, parse_scenario
from windtunnel.simulator.window_strategies import (
    MAX_WINDOWS_PER_EVENT,
    window_blocks,
    window_specs,
)

_POOL_SIZE = 64
FAKER_PROVIDERS = ("user_name", "ipv4_private", "hostname", "first_name", "city")
"""Faker providers :func:`faker_values` can draw from."""


@functools.cache
def _pool(provider: str) -> tuple[str, ...]:
    fake = Faker()
    fake.seed_instance(0)
    make: Callable[[], Any] = getattr(fake, provider)
    values: list[str] = []
    seen: set[str] = set()
    while len(values) < _POOL_SIZE:
        value = str(make())
        if value not in seen:
            seen.add(value)
            values.append(value)
    return tuple(values)


def faker_values(provider: str = "user_name") -> st.SearchStrategy[str]:
    """A Faker value (``user_name``, ``ipv4_private``, ...) from a fixed, seeded pool.

    Shrinks towards the pool's first value. Raises InvalidSpec for an unknown provider.
    """
    if provider not in FAKER_PROVIDERS:
        raise InvalidSpec(
            "provider", provider, "not a supported Faker provider", f"use one of {FAKER_PROVIDERS}"
        )
    return st.sampled_from(_pool(provider))


def streams(
    *,
    min_events: int = 0,
    max_events: int = 20,
    keys: int | Sequence[str] = 3,
    key_field: str = "key",
    time_field: str = "ts",
    start_ms: int = 0,
    max_step_ms: int = 10_000,
    max_disorder_ms: int = 0,
    allow_null_times: bool = False,
    with_batches: bool = False,
    with_advances: bool = False,
) -> st.SearchStrategy[tuple[Item, ...]]:
    """Tuples of oracle stream items: ``Event`` seq 0, 1, ... with ``at_ms`` non-decreasing
    from ``start_ms``, optionally grouped in ``Batch`` items, with ``Advance`` items between.

    Payloads are ``{time_field: ms or None, key_field: key, "value": int}``. Event times
    move forward by up to ``max_step_ms`` and are pulled back by up to ``max_disorder_ms``
    (out of order). ``keys`` is a number of Faker-named keys or the key values themselves.
    Shrinks towards few events, in order, all on the first key, arriving at ``start_ms``,
    no nulls, one batch, no advances. No End item (the oracle implies it).
    """
    if isinstance(max_events, bool) or not 0 <= min_events <= max_events:
        raise InvalidSpec(
            "max_events", max_events, "needs 0 <= min_events <= max_events", "raise max_events"
        )
    if max_step_ms < 0 or max_disorder_ms < 0:
        raise InvalidSpec(
            "max_step_ms", (max_step_ms, max_disorder_ms), "must not be negative", "give 0 or more"
        )
    if isinstance(keys, int):
        if keys < 1:
            raise InvalidSpec("keys", keys, "needs at least one key", "give keys=1 or more")
        # consecutive values of the (unique) pool: one cheap draw, where a unique list
        # of sampled values is often rejected and leaves Hypothesis short streams
        pool = _pool("user_name")
        if keys > len(pool):
            raise InvalidSpec("keys", keys, f"at most {len(pool)} Faker keys", "give fewer keys")
        key_values: st.SearchStrategy[list[str]] = st.integers(0, len(pool) - keys).map(
            lambda first: list(pool[first : first + keys])
        )
    else:
        if not keys:
            raise InvalidSpec("keys", keys, "needs at least one key", "give keys=['a']")
        key_values = st.just(list(keys))
    key_count = keys if isinstance(keys, int) else len(keys)

    one_event = st.tuples(
        st.integers(0, max_step_ms),  # event-time step
        st.integers(0, max_disorder_ms),  # pulled back by
        st.integers(0, key_count - 1),  # key index
        st.booleans() if allow_null_times else st.just(False),  # null time
        st.integers(0, max_step_ms),  # arrival step
        st.booleans() if with_batches else st.just(False),  # starts a new batch
        st.integers(0, max_step_ms) if with_advances else st.just(0),  # idle before it
        st.integers(0, 9),  # value
    )

    @st.composite
    def build(draw: st.DrawFn) -> tuple[Item, ...]:
        names = draw(key_values)
        # the length first (uniform, shrinking to min_events): plain lists average a few
        # elements, too few to meet window boundaries, overlaps and late events often
        length = draw(st.integers(min_events, max_events))
        drawn = draw(st.lists(one_event, min_size=length, max_size=length))
        items: list[Item] = []
        batch: list[Event] = []
        base = start_ms
        wall = start_ms
        for seq, (step, back, key, null, arrive, new_batch, idle, value) in enumerate(drawn):
            if idle:  # an idle period ends any open batch
                if batch:
                    items.append(Batch(tuple(batch)))
                    batch = []
                wall += idle
                items.append(Advance(wall))
            base += step
            wall += arrive
            payload = {time_field: None if null else base - back, key_field: names[key]}
            payload["value"] = value
            if with_batches and new_batch and batch:
                items.append(Batch(tuple(batch)))
                batch = []
            event = Event(seq, payload, wall)
            if with_batches:
                batch.append(event)
            else:
                items.append(event)
        if batch:
            items.append(Batch(tuple(batch)))
        return tuple(items)

    return build()


def _item_json(item: Item) -> dict[str, Any]:
    if isinstance(item, Event):
        return {"event": dict(item.payload), "at": item.at_ms}
    if isinstance(item, Advance):
        return {"at": item.to_ms}
    if isinstance(item, Batch):
        return {"batch": [{"event": dict(e.payload), "at": e.at_ms} for e in item.events]}
    if isinstance(item, Watermark):
        return {"watermark": item.to_ms}
    return {"end": True}


def scenario_dicts(
    *,
    kinds: Sequence[str] = ("fixed",),
    profiles: Sequence[str] = ("tenzir",),
    max_size_ms: int = 60_000,
    max_tolerance_ms: int = 10_000,
    idle_timeouts: bool = False,
    grouped: bool | None = None,
    aggregates: bool | None = None,
    max_events: int = 20,
    keys: int | Sequence[str] = 3,
    max_step_ms: int = 10_000,
    max_disorder_ms: int = 0,
    allow_null_times: bool = False,
    with_batches: bool = False,
    with_advances: bool = False,
) -> st.SearchStrategy[dict[str, Any]]:
    """Scenario files as decoded YAML/JSON mappings (``time_unit: ms``, integer times).

    ``grouped``/``aggregates`` None lets Hypothesis choose. Shrinks towards the first
    profile, :func:`window_blocks`' and :func:`streams`' simplest values, ungrouped,
    with a ``count()`` aggregate.
    """

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        profile = draw(st.sampled_from(list(profiles)))
        block = draw(
            window_blocks(
                kinds=kinds,
                max_size_ms=max_size_ms,
                max_tolerance_ms=max_tolerance_ms,
                idle_timeouts=idle_timeouts,
            )
        )
        items = draw(
            streams(
                max_events=max_events,
                keys=keys,
                max_step_ms=max_step_ms,
                max_disorder_ms=max_disorder_ms,
                allow_null_times=allow_null_times,
                with_batches=with_batches,
                with_advances=with_advances,
            )
        )
        data: dict[str, Any] = {
            "name": "generated",
            "profile": profile,
            "time_unit": "ms",
            "window": block,
        }
        if draw(st.booleans()) if grouped is None else grouped:
            data["group_by"] = ["key"]
        passthrough = draw(st.booleans()) if aggregates is None else not aggregates
        if not passthrough:
            data["aggregate"] = {"n": "count()", "total": "sum(value)"}
        data["input"] = [_item_json(item) for item in items]
        return data

    return build()


def scenarios(
    *,
    kinds: Sequence[str] = ("fixed",),
    profiles: Sequence[str] = ("tenzir",),
    max_size_ms: int = 60_000,
    max_tolerance_ms: int = 10_000,
    idle_timeouts: bool = False,
    grouped: bool | None = None,
    aggregates: bool | None = None,
    max_events: int = 20,
    keys: int | Sequence[str] = 3,
    max_step_ms: int = 10_000,
    max_disorder_ms: int = 0,
    allow_null_times: bool = False,
    with_batches: bool = False,
    with_advances: bool = False,
) -> st.SearchStrategy[Scenario]:
    """Parsed :class:`Scenario` values: :func:`scenario_dicts` through ``parse_scenario``.

    Shrinks like :func:`scenario_dicts`.
    """
    return scenario_dicts(
        kinds=kinds,
        profiles=profiles,
        max_size_ms=max_size_ms,
        max_tolerance_ms=max_tolerance_ms,
        idle_timeouts=idle_timeouts,
        grouped=grouped,
        aggregates=aggregates,
        max_events=max_events,
        keys=keys,
        max_step_ms=max_step_ms,
        max_disorder_ms=max_disorder_ms,
        allow_null_times=allow_null_times,
        with_batches=with_batches,
        with_advances=with_advances,
    ).map(parse_scenario)


__all__ = [
    "FAKER_PROVIDERS",
    "MAX_WINDOWS_PER_EVENT",
    "faker_values",
    "scenario_dicts",
    "scenarios",
    "streams",
    "window_blocks",
    "window_specs",
]
