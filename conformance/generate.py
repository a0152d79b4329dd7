"""Streams generated for a spec: what ``windtunnel check`` runs beyond the spec's own input.

The spec is a parsed scenario (its window, group_by, aggregate, profile and rules);
:func:`spec_streams` draws streams for it from the simulator's
:func:`windtunnel.simulator.strategies.streams` (disorder, null times, batches, idle
gaps, several keys) scaled to the window: event times step by up to the window's size
(or gap) and are pulled back by up to the tolerance plus one size, so some events are
late and some are not. Each payload then gets the spec's fields: the time at ``on``
(a dotted path makes nested objects), one value per ``group_by`` field and one per
aggregated field (sometimes null), and every other field of the event shape
(:mod:`windtunnel.conformance.event_shape`: declared, seen in the spec's input, read by a
stage), drawn by :func:`windtunnel.simulator.field_strategies.field_columns`. A spec with a
``deduplicate`` stage also gets redeliveries: an event now and then is a copy of an
earlier one (same payload, later arrival).

Determinism: :func:`generate` collects Hypothesis examples inside a ``@given`` run
seeded with ``--seed`` (``hypothesis.seed``), without the example database, so one
seed, one Hypothesis version and one spec give the same streams every time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from windtunnel.conformance.beam.streams import with_beam_time
from windtunnel.conformance.event_shape import extra_fields
from windtunnel.conformance.hypothesis_home import scratch_home
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.model.field_specs import FieldSpec
from windtunnel.oracle.model.spec import NOW, CountWindows
from windtunnel.oracle.model.stages import Deduplicate
from windtunnel.oracle.model.stream import Advance, Batch, Event, Item, events_of
from windtunnel.oracle.scenario import Scenario
from windtunnel.simulator.field_strategies import check_fields, field_columns
from windtunnel.simulator.strategies import streams

_TIME = "__time"
_KEY = "__key"
MAX_EVENTS = 20
"""Events per generated stream, at most (the shrinker then cuts a failure down)."""


@dataclass(frozen=True, slots=True)
class StreamShape:
    """What a generated stream needs to know about the spec: where to write the time,
    the group and value fields, the other fields of the event shape (``extra``), whether
    events are redelivered, and the scale (in the scenario's time unit)."""

    on: str | None
    group_fields: tuple[str, ...]
    value_fields: tuple[str, ...]
    step: int
    disorder: int
    advances: bool
    extra: tuple[FieldSpec, ...] = ()
    redeliveries: bool = False

    @classmethod
    def of(cls, spec: Scenario) -> StreamShape:
        """The shape for ``spec``'s query (its window's size or gap and tolerance)."""
        query = spec.query
        window = query.window
        unit_ms = spec.time_unit_ms
        on = getattr(window, "on", None)
        if isinstance(window, CountWindows) or on == NOW:
            on = None
        span_ms = (
            getattr(window, "size_ms", None) or getattr(window, "gap_ms", None) or 10 * unit_ms
        )
        tolerance_ms = getattr(window, "tolerance_ms", 0) or 0
        step = max(1, span_ms // unit_ms)
        disorder = max(1, (tolerance_ms + span_ms) // unit_ms)
        idle = getattr(window, "idle_timeout_ms", None) is not None
        grouped = set(query.group_by) | set(query.aggregate_by)
        declared = {f.path for f in spec.fields}  # drawn as declared, not as keys or values
        values = [
            a.field
            for a in (query.aggregate or ())
            if a.field and a.field != on and a.field not in grouped and a.field not in declared
        ]
        groups = [p for p in dict.fromkeys([*query.group_by, *query.aggregate_by])
                  if p not in declared]
        wall_driven = getattr(window, "on", None) == NOW
        # idle gaps (advances) matter only where the wall clock does
        return cls(
            on,
            tuple(groups),
            tuple(dict.fromkeys(values)),
            step,
            disorder,
            idle or wall_driven,
            extra_fields(spec, [*groups, *values]),
            any(isinstance(s, Deduplicate) for s in query.stages),
        )


def _put(payload: dict[str, Any], path: str, value: Any) -> None:
    """Set ``path`` (``a.b``) in ``payload``, making nested objects on the way."""
    *parents, last = path.split(".")
    node = payload
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[last] = value


_SMALL_KEYS = ("a", "b", "c")


def spec_streams(spec: Scenario, *, max_events: int = MAX_EVENTS) -> st.SearchStrategy[tuple[Item, ...]]:
    """Streams for ``spec``: the simulator's streams with the spec's fields.

    Shrinks like :func:`windtunnel.simulator.strategies.streams` (few, in-order events
    on one key), with the first key of each further group field and non-null values.
    The stream starts at the spec's wall clock (``start_wall_ms``): arrivals and advances
    from it, event times from it in the spec's time unit.
    """
    shape = StreamShape.of(spec)
    check_fields(shape.extra)  # an unknown Faker provider: an input error before any run
    wall_ms = spec.start_wall_ms
    time_shift = wall_ms // spec.time_unit_ms
    base = streams(
        max_events=max_events,
        keys=list(_SMALL_KEYS),
        key_field=_KEY,
        time_field=_TIME,
        start_ms=0,
        max_step_ms=shape.step,
        max_disorder_ms=shape.disorder,
        allow_null_times=False,  # nulls below, one event in ten rather than one in two
        with_batches=True,
        with_advances=shape.advances,
    )
    extra = st.tuples(
        st.lists(st.sampled_from(_SMALL_KEYS), min_size=8, max_size=8),
        st.lists(st.integers(0, 9).map(lambda n: n == 9), min_size=8, max_size=8),
        st.lists(st.integers(0, 9), min_size=8, max_size=8),
    )

    @st.composite
    def build(draw: st.DrawFn) -> tuple[Item, ...]:
        items = draw(base)
        group_pool, null_pool, value_pool = draw(extra)
        length = sum(1 for _ in events_of(items))
        columns = draw(field_columns(fields=shape.extra, length=length)) if shape.extra else {}
        # redeliveries: (flag, earlier) per event, an event in ten a copy of an earlier one
        copies = draw(st.lists(st.tuples(st.integers(0, 9), st.integers(0, max(0, length - 1))),
                               min_size=length, max_size=length)) if shape.redeliveries else []
        built: dict[int, dict[str, Any]] = {}

        def payload(event: Event) -> Event:
            if copies and event.seq and copies[event.seq][0] == 9:
                copy = built[event.seq] = dict(built[copies[event.seq][1] % event.seq])
                return replace(event, payload=copy, at_ms=_moved(event, wall_ms))
            raw = event.payload
            out: dict[str, Any] = {}
            time = raw[_TIME]
            if shape.on is not None:
                # pulled back below 0 by disorder: shift so times stay at or after the epoch
                null = null_pool[event.seq % 8] and event.seq % 3 == 1
                _put(out, shape.on, None if null else time + shape.disorder + time_shift)
            for index, name in enumerate(shape.group_fields):
                key = raw[_KEY] if index == 0 else group_pool[(event.seq + index) % 8]
                _put(out, name, key)
            for index, name in enumerate(shape.value_fields):
                value = raw["value"] if index == 0 else value_pool[(event.seq + index) % 8]
                _put(out, name, None if null_pool[(event.seq + index + 3) % 8] else value)
            for path, column in columns.items():
                _put(out, path, column[event.seq])
            built[event.seq] = out
            return replace(event, payload=out, at_ms=_moved(event, wall_ms))

        moved = (Advance(i.to_ms + wall_ms) if isinstance(i, Advance) else i for i in items)
        return tuple(_map_events(tuple(moved), payload))

    return build()


def _moved(event: Event, wall_ms: int) -> int | None:
    """The event's arrival moved to start at the spec's wall clock."""
    return None if event.at_ms is None else event.at_ms + wall_ms


def _map_events(items: tuple[Item, ...], fn: Callable[[Event], Event]) -> list[Item]:
    out: list[Item] = []
    for item in items:
        if isinstance(item, Event):
            out.append(fn(item))
        elif isinstance(item, Batch):
            out.append(Batch(tuple(fn(e) for e in item.events)))
        else:
            out.append(item)
    return out


def generate(
    spec: Scenario, count: int, seed: int = 0, *, max_events: int = MAX_EVENTS
) -> Iterator[Scenario]:
    """``count`` scenarios with ``spec``'s query and generated streams, the same for the
    same ``seed``, drawn lazily ``ROUND`` at a time (fewer when Hypothesis runs out of
    distinct streams). Raises InvalidSpec for a negative count."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise InvalidSpec("--examples", count, "must be 0 or more", "give e.g. --examples 100")
    return _generated(spec, count, seed, max_events)


def _generated(spec: Scenario, count: int, seed: int, max_events: int) -> Iterator[Scenario]:
    strategy = spec_streams(spec, max_events=max_events)
    if spec.profile.name == "beam":  # watermark items and processing time (conformance/beam)
        strategy = with_beam_time(spec, strategy)
    number = 0
    for round_index in range(0, count, ROUND):
        for items in _draw(strategy, min(ROUND, count - round_index), seed * 1_000_003 + round_index):
            number += 1
            yield replace(spec, name=f"{spec.name}#{number}", items=items, expect=None)


ROUND = 10
"""Examples per Hypothesis run: Hypothesis mutates earlier examples within a run, so
short runs with seeds of their own give more varied streams than one long run."""


def _draw(strategy: st.SearchStrategy[tuple[Item, ...]], count: int, seed: int) -> list[tuple[Item, ...]]:
    drawn: list[tuple[Item, ...]] = []

    @hypothesis_seed(seed)
    @settings(
        max_examples=count,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(items: tuple[Item, ...]) -> None:
        if len(drawn) < count:
            drawn.append(items)

    with scratch_home():  # no .hypothesis/ left in the working directory
        collect()  # Hypothesis may stop early when the space is small: fewer streams then
    return drawn
