"""The base of every workload: Faker pools, payload columns, the ``Workload`` class.

Faker runs once per workload to fill pools (names, IPs, hosts, merchants), seeded by the
stream's seed; each record then samples pool indices with numpy, and JSON text comes from
pre-encoded pool entries, so payloads cost little per record. Columns are vectorised over
a chunk (``Table``: name -> numpy array, one row per record).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Protocol

import numpy as np
import numpy.typing as npt
from faker import Faker

from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.simulator.knobs import Knobs, LateSpec

Table = dict[str, npt.NDArray[Any]]
Rendered = list[tuple[str, list[Any]]]
NOT_A_TIME: Final = "not-a-time"
"""The time field's value in records with an invalid timestamp."""


class Pool:
    """Values drawn from Faker once, with their JSON encodings for fast rendering."""

    __slots__ = ("json", "values")

    def __init__(self, values: Sequence[str]) -> None:
        self.values = np.array(list(values), dtype=object)
        self.json = np.array([json.dumps(v) for v in values], dtype=object)

    def __len__(self) -> int:
        return len(self.values)

    def take(self, index: npt.NDArray[np.int64], as_json: bool) -> list[Any]:
        return (self.json if as_json else self.values)[index].tolist()  # type: ignore[no-any-return]


def faker_pool(fake: Faker, make: Callable[[], Any], size: int) -> list[str]:
    """``size`` distinct values of ``make()`` (suffixed ``-2``, ``-3``, ... on repeats)."""
    values: list[str] = []
    seen: set[str] = set()
    while len(values) < size:
        value = str(make())
        suffix = 2
        candidate = value
        while candidate in seen:
            candidate = f"{value}-{suffix}"
            suffix += 1
        seen.add(candidate)
        values.append(candidate)
    return values


def key_pool(fake: Faker, make: Callable[[], Any], keys: int, faker_size: int = 500) -> Pool:
    """``keys`` distinct key names: Faker names, then ``name.N`` beyond ``faker_size``."""
    base = faker_pool(fake, make, min(keys, faker_size))
    names = base + [f"{base[i % len(base)]}.{i // len(base)}" for i in range(len(base), keys)]
    return Pool(names)


def ints(values: npt.NDArray[Any], as_json: bool) -> list[Any]:
    """Integers as Python ints (their JSON text is ``str(int)``, which ``%s`` renders)."""
    return values.tolist()  # type: ignore[no-any-return]


def times(table: Table, as_json: bool) -> list[Any]:
    """The time field: epoch ms, null (status 1) or ``"not-a-time"`` (status 2)."""
    ts = table["ts"]
    status = table["status"]
    values: list[Any] = ts.tolist()
    if status.any():
        null, invalid = ("null", json.dumps(NOT_A_TIME)) if as_json else (None, NOT_A_TIME)
        for row in np.flatnonzero(status == 1).tolist():
            values[row] = null
        for row in np.flatnonzero(status == 2).tolist():
            values[row] = invalid
    return values


def choices(
    rng: np.random.Generator, weights: Sequence[float] | npt.NDArray[np.float64], n: int
) -> npt.NDArray[np.int64]:
    """``n`` indices drawn with these relative ``weights``."""
    cumulative = np.cumsum(np.asarray(weights, dtype=np.float64))
    drawn = rng.random(n) * cumulative[-1]
    index: npt.NDArray[np.int64] = np.searchsorted(cumulative, drawn, side="right").astype(np.int64)
    return index


@dataclass(frozen=True, slots=True)
class Attack:
    """An injected attack: its kind, id, source IP, target users and event-time span
    ``[start_ms, end_ms]`` (both ends included: first and last attempt)."""

    kind: str
    attack_id: int
    src_ip: str
    users: tuple[str, ...]
    start_ms: int
    end_ms: int
    attempts: int

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "id": self.attack_id,
            "src_ip": self.src_ip,
            "users": list(self.users),
            "start_ms": self.start_ms,
            "end_ms": self.end_ms,
            "attempts": self.attempts,
        }


class ArrivalSource(Protocol):
    """Base records in arrival order (``arrivals.Arrivals`` or a workload's own source):
    tables with ``gen``, ``created``, ``arrival``, ``key``, optionally ``event_ms`` (the
    event time before skew, when it is not ``created``) and the workload's columns."""

    next_gen: int

    def steps(self) -> Iterator[Table]: ...


class Workload:
    """A kind of record: fields, key, time field, default query, payload columns."""

    name: ClassVar[str]
    summary: ClassVar[str]
    key_field: ClassVar[str] = "key"
    time_field: ClassVar[str] = "ts"
    defaults: ClassVar[dict[str, Any]] = {}
    window: ClassVar[LateSpec] = LateSpec(10_000)
    aggregate: ClassVar[dict[str, str]] = {"n": "count()"}
    column_types: ClassVar[dict[str, str]] = {}
    """Arrow types of fields that may lack values in a chunk (typed-column outputs)."""

    def __init__(self, knobs: Knobs, **options: Any) -> None:
        if options:
            name, value = next(iter(options.items()))
            raise InvalidInput(
                name, value, f"not a knob of workload {self.name}", "see docs/simulator.md"
            )
        self.knobs = knobs
        self.fake = Faker()
        self.fake.seed_instance(knobs.seed)
        self.keys = self.make_keys(knobs.keys)

    @classmethod
    def own_options(cls, options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``options`` split into the simulator's knobs and the workload's own."""
        return options, {}

    def make_keys(self, keys: int) -> Pool:
        return Pool([f"k{i}" for i in range(keys)])

    def arrival_source(self) -> ArrivalSource | None:
        """The workload's own source of base records (None: ``arrivals.Arrivals``)."""
        return None

    def where(self) -> str | None:
        """The condition of the default query's ``where`` stage (None: no stage)."""
        return None

    def filtered(self, table: Table) -> npt.NDArray[np.bool_] | None:
        """Rows the default query's ``where`` stage removes (None: none)."""
        return None

    def fields(self) -> list[str] | None:
        """Every payload field in order, when records of :meth:`shapes` differ in fields."""
        return None

    def shapes(self, table: Table) -> list[npt.NDArray[np.int64]] | None:
        """Row indices of each group of records with the same fields, rendered apart (None:
        every record has every field)."""
        return None

    def group_by(self) -> list[str]:
        return [self.key_field]

    def draw(self, rng: np.random.Generator, n: int) -> Table:
        """Per-record random payload columns (carried through reordering and duplication)."""
        return {}

    def extras(self, lo_ms: int, hi_ms: int) -> Table:
        """Extra records (attacks) created in ``[lo_ms, hi_ms)``: ``created``, ``key`` and
        the columns :meth:`draw` gives; empty when there are none."""
        return {}

    def group_codes(self, table: Table) -> npt.NDArray[np.int64]:
        """An integer per record identifying its ``group_by`` key (for ground truth)."""
        return table["key"]

    def render(self, table: Table, as_json: bool) -> Rendered:
        """Payload columns in field order: Python values, or JSON texts if ``as_json``."""
        return [
            (self.time_field, times(table, as_json)),
            (self.key_field, self.keys.take(table["key"], as_json)),
        ]

    def attacks(self) -> list[Attack]:
        return []


def rendered_parts(
    workload: Workload, table: Table, as_json: bool
) -> list[tuple[npt.NDArray[np.int64] | None, Rendered]]:
    """The rendered columns of each of the workload's record shapes with their rows (rows
    None: one shape, every row)."""
    groups = workload.shapes(table)
    if groups is None:
        return [(None, workload.render(table, as_json))]
    return [
        (rows, workload.render({name: c[rows] for name, c in table.items()}, as_json))
        for rows in groups
        if len(rows)
    ]


def _scatter(table: Table, parts: list[tuple[npt.NDArray[np.int64], list[Any]]]) -> list[Any]:
    """Values given per shape (rows, values), in row order."""
    out = np.empty(len(table["gen"]), dtype=object)
    for rows, values in parts:
        out[rows] = values
    ordered: list[Any] = out.tolist()
    return ordered


def _dicts(columns: Rendered) -> list[dict[str, Any]]:
    names = [name for name, _ in columns]
    return [
        dict(zip(names, row, strict=True)) for row in zip(*(c for _, c in columns), strict=True)
    ]


def _json_texts(columns: Rendered) -> list[str]:
    template = "{" + ",".join(f"{json.dumps(name)}:%s" for name, _ in columns) + "}"
    return [template % row for row in zip(*(c for _, c in columns), strict=True)]


def payload_dicts(workload: Workload, table: Table) -> list[dict[str, Any]]:
    """Each record's payload as a dict (field order as rendered)."""
    parts = rendered_parts(workload, table, as_json=False)
    if parts and parts[0][0] is None:
        return _dicts(parts[0][1])
    return _scatter(table, [(rows, _dicts(c)) for rows, c in parts if rows is not None])


def payload_json(workload: Workload, table: Table) -> list[str]:
    """Each record's payload as compact JSON text (same bytes for the same record)."""
    parts = rendered_parts(workload, table, as_json=True)
    if parts and parts[0][0] is None:
        return _json_texts(parts[0][1])
    return _scatter(table, [(rows, _json_texts(c)) for rows, c in parts if rows is not None])
