"""The public API of windtunnel.spark_impl resolves lazily to its modules."""

from __future__ import annotations

import pytest

import windtunnel.spark_impl as spark_impl
from windtunnel.spark_impl.general.operator import apply_window
from windtunnel.spark_impl.stock.mapping import stock_window


def test_public_names_are_the_modules_functions() -> None:
    assert spark_impl.apply_window is apply_window
    assert spark_impl.stock_window is stock_window
    for name in spark_impl.__all__:
        assert callable(getattr(spark_impl, name)), name


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="apply_windows"):
        _ = spark_impl.apply_windows
