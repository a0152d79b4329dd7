"""Declared fields drawn by Hypothesis: choices, ranges, Faker pools, nulls and repeats."""

from __future__ import annotations

import pytest
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from windtunnel.oracle.model.errors import InvalidScenario
from windtunnel.oracle.model.field_specs import FieldSpec
from windtunnel.simulator.field_strategies import faker_pool, field_columns, field_values

DECLARED = [
    FieldSpec("campaign", "string", ("spring", "summer")),
    FieldSpec("amount", "int", low=-2, high=5, nulls=0.2),
    FieldSpec("price", "float", low=0, high=1),
    FieldSpec("ok", "bool"),
    FieldSpec("click_id", "string", faker="uuid4", duplicates=0.5),
]
QUICK = settings(database=None, phases=(Phase.generate, Phase.shrink))
"""find() without the example database and the explain phase (which reruns every example)."""


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_every_value_is_of_its_declared_kind_or_null(data: st.DataObject) -> None:
    length = data.draw(st.integers(0, 12))
    columns = data.draw(field_columns(fields=DECLARED, length=length))
    assert set(columns) == {f.path for f in DECLARED}
    assert all(len(c) == length for c in columns.values())
    assert set(columns["campaign"]) <= {"spring", "summer"}
    assert all(v is None or (isinstance(v, int) and -2 <= v <= 5) for v in columns["amount"])
    assert all(isinstance(v, float) and 0 <= v <= 1 for v in columns["price"])
    assert all(isinstance(v, bool) for v in columns["ok"])
    assert set(columns["click_id"]) <= set(faker_pool("uuid4"))


def test_rates_of_nulls_and_repeats_show_up_and_zero_rates_never() -> None:
    seen = find(field_columns(fields=DECLARED, length=20),
                lambda c: None in c["amount"] and len(set(c["click_id"])) < 20,
                settings=settings(QUICK, phases=(Phase.generate,)))  # found, not shrunk
    assert None in seen["amount"]
    with pytest.raises(NoSuchExample):
        find(field_columns(fields=[FieldSpec("x", "int", low=0, high=1000)], length=30),
             lambda c: None in c["x"], settings=settings(QUICK, max_examples=100))


def test_columns_shrink_to_fresh_simple_values() -> None:
    """Shrinks towards no nulls, no repeats, the first choice and the low end."""
    smallest = find(field_columns(fields=DECLARED[:2], length=3), lambda c: True, settings=QUICK)
    assert smallest == {"campaign": ["spring"] * 3, "amount": [-2] * 3}


def test_an_unknown_faker_provider_is_an_input_error_naming_the_field() -> None:
    with pytest.raises(InvalidScenario) as error:
        field_columns(fields=[FieldSpec("who", "string", faker="no_such_provider")], length=1)
    assert error.value.field == "fields.who.faker"


def test_a_provider_with_few_values_gives_a_short_pool() -> None:
    assert 1 < len(faker_pool("day_of_week")) <= 7


def test_values_draw_from_the_declaration() -> None:
    assert find(field_values(spec=FieldSpec("x", "float", low=1.5, high=2)), lambda v: True,
                settings=QUICK) == 1.5
