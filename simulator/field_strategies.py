"""Hypothesis strategies for declared event fields (a spec's ``fields:`` block).

A :class:`~windtunnel.oracle.model.field_specs.FieldSpec` says a field's type and how to
draw it; :func:`field_values` draws one fresh value, :func:`field_columns` a column of
values in stream order with the field's rates of nulls and of repeats. Faker values come
from a pool Faker fills once with a fixed seed (:func:`faker_pool`), so Hypothesis's seed
and shrinking still decide everything.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from faker import Faker
from hypothesis import strategies as st

from windtunnel.oracle.model.errors import InvalidScenario
from windtunnel.oracle.model.field_specs import FieldSpec

POOL_SIZE = 64
PLAIN_STRINGS = ("a", "b", "c", "d", "e", "f", "g", "h")
"""The values of a string field declared without choices or a Faker provider."""


@functools.cache
def faker_pool(provider: str, size: int = POOL_SIZE) -> tuple[str, ...]:
    """Up to ``size`` distinct values of the Faker ``provider`` (seed 0), as text; fewer when
    the provider has fewer. Raises InvalidScenario for a name Faker does not provide."""
    fake = Faker()
    fake.seed_instance(0)
    make: Callable[[], Any] | None = getattr(fake, provider, None) if provider.isidentifier() else None
    if make is None or not callable(make):
        raise InvalidScenario(
            "faker", provider, "is not a Faker provider",
            "use e.g. user_name, uuid4, ipv4_private, hostname, city, company, email",
        )
    values: list[str] = []
    seen: set[str] = set()
    for _ in range(size * 20):  # a provider with few values (day_of_week) ends early
        value = str(make())
        if value not in seen:
            seen.add(value)
            values.append(value)
            if len(values) == size:
                break
    return tuple(values)


def check_fields(fields: Sequence[FieldSpec]) -> None:
    """Raise InvalidScenario naming ``fields.<path>.faker`` for an unknown Faker provider."""
    for spec in fields:
        if spec.faker is not None:
            try:
                faker_pool(spec.faker)
            except InvalidScenario as exc:
                raise InvalidScenario(f"fields.{spec.path}.faker", spec.faker, exc.rule,
                                      exc.fix) from None


def field_values(*, spec: FieldSpec) -> st.SearchStrategy[Any]:
    """Fresh (non-null) values of ``spec``: its choices, its Faker pool, its range, or
    booleans. Shrinks towards the first choice, the pool's first value, the low end of the
    range, and false."""
    if spec.choices is not None:
        return st.sampled_from(spec.choices)
    if spec.faker is not None:
        return st.sampled_from(faker_pool(spec.faker))
    if spec.type == "string":
        return st.sampled_from(PLAIN_STRINGS)
    if spec.type == "bool":
        return st.booleans()
    low, high = spec.bounds
    if spec.type == "int":
        first = int(low)
        return st.integers(0, int(high) - first).map(lambda n: first + n)
    # hundredths, so that values print short and repeat now and then
    cents = round(low * 100)
    return st.integers(0, round(high * 100) - cents).map(lambda n: (cents + n) / 100)


def _rate(rate: float) -> st.SearchStrategy[bool]:
    """True with roughly ``rate``; shrinks towards False."""
    cut = 1000 - round(rate * 1000)
    return st.integers(0, 999).map(lambda n: rate > 0 and n >= cut)


def field_columns(
    *, fields: Sequence[FieldSpec], length: int
) -> st.SearchStrategy[dict[str, list[Any]]]:
    """Per field path, ``length`` values in stream order: a fresh value (:func:`field_values`),
    a null with the field's ``nulls`` rate, or the value of an earlier position with its
    ``duplicates`` rate. Shrinks towards fresh values only (no nulls, no repeats) and each
    field's simplest value."""
    check_fields(fields)

    def column(spec: FieldSpec) -> st.SearchStrategy[list[Any]]:
        one = st.tuples(field_values(spec=spec), _rate(spec.nulls), _rate(spec.duplicates),
                        st.integers(0, max(0, length - 1)))

        def build(drawn: list[tuple[Any, bool, bool, int]]) -> list[Any]:
            values: list[Any] = []
            for index, (fresh, null, repeat, earlier) in enumerate(drawn):
                if repeat and index:
                    values.append(values[earlier % index])
                else:
                    values.append(None if null else fresh)
            return values

        return st.lists(one, min_size=length, max_size=length).map(build)

    return st.fixed_dictionaries({spec.path: column(spec) for spec in fields})


__all__ = ["check_fields", "faker_pool", "field_columns", "field_values"]
