"""Without Spark: what the Spark side refuses about stages before the window, and how a
job's missing column is named."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.conformance.targets.spark import ProductionTarget
from windtunnel.conformance.tql import pipeline
from windtunnel.oracle.model.errors import InvalidSpec
from windtunnel.oracle.scenario import parse_scenario
from windtunnel.spark_impl.harness.general import general_rules
from windtunnel.spark_impl.harness.job_columns import missing_column, missing_column_error
from windtunnel.spark_impl.job import JobSpec
from windtunnel.spark_impl.stock.mapping import check_stock
from windtunnel.spark_impl.stock.payload import payload_schema


def scenario(profile: str = "tenzir", **top: Any) -> Any:
    data: dict[str, Any] = {"profile": profile, "time_unit": "s", "window": {"size": 10, "tolerance": 5},
                            "aggregate": {"n": "count()"}, "input": [], **top}
    return parse_scenario(data)


STAGED = scenario(where="v > 0")


@pytest.mark.parametrize("refuse", [
    lambda s: general_rules(s), lambda s: ProductionTarget().run_many([s]), lambda s: JobSpec(s.query),
    lambda s: pipeline(s.query),
], ids=["general operator", "production operator", "windtunnel run", "tenzir target"])
def test_windtunnel_s_own_engines_refuse_stages_naming_the_stage(refuse: Any) -> None:
    with pytest.raises(InvalidSpec) as error:
        refuse(STAGED)
    assert error.value.field == "where" and error.value.value == "where v > 0"
    assert "does not run stages before the window" in str(error.value)


@pytest.mark.parametrize(("top", "field"), [
    ({"where": "ts > 5"}, "where"),
    ({"deduplicate": {"key": "id", "within": "3s"}}, "deduplicate.within"),
    ({"deduplicate": {"key": "id", "within": "0s"}}, "deduplicate.within"),
])
def test_stock_spark_refuses_stages_it_has_no_form_for(top: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        check_stock(scenario("spark", **top).query)
    assert error.value.field == field


@pytest.mark.parametrize("dedup", [{"key": "id"}, {"key": "id", "within": "5s"},
                                   {"key": ["id", "ts"], "within": "0s"}])
def test_stock_spark_takes_the_deduplications_it_has(dedup: dict[str, Any]) -> None:
    check_stock(scenario("spark", deduplicate=dedup).query)


def test_stage_fields_are_typed_columns_of_the_stock_mapping() -> None:
    query = scenario("spark", where="v > 0", deduplicate={"key": "id"}).query
    schema = payload_schema(query, [{"ts": 1, "v": 2, "id": "a"}])
    assert {f.name: f.dataType.simpleString() for f in schema.fields} == {"id": "string", "v": "bigint"}


class FakeAnalysisError(Exception):
    def __init__(self, condition: str, parameters: dict[str, str]) -> None:
        super().__init__(condition)
        self.condition, self.parameters = condition, parameters

    def getCondition(self) -> str:
        return self.condition

    def getMessageParameters(self) -> dict[str, str]:
        return self.parameters


@pytest.mark.parametrize(("condition", "parameters", "column"), [
    ("UNRESOLVED_COLUMN.WITH_SUGGESTION", {"objectName": "`click_id`"}, "click_id"),
    ("UNRESOLVED_COLUMN.WITHOUT_SUGGESTION", {"objectName": "`geo`.`city`"}, "geo.city"),
    ("UNRESOLVED_COLUMN_AMONG_FIELD_NAMES", {"colName": "click_id", "fieldNames": "ts"}, "click_id"),
    ("DIVIDE_BY_ZERO", {}, None),
])
def test_spark_s_missing_column_errors_are_read(condition: str, parameters: dict[str, str],
                                                column: str | None) -> None:
    assert missing_column(FakeAnalysisError(condition, parameters)) == column


def test_the_missing_column_line_names_the_column_the_columns_and_the_fix() -> None:
    error = missing_column_error(
        FakeAnalysisError("UNRESOLVED_COLUMN.WITH_SUGGESTION", {"objectName": "`country`"}),
        "jobs:by_country", ["campaign", "ts"])
    assert error is not None
    assert str(error) == (
        "--job='jobs:by_country': the job reads column country, which the spec's events do not "
        "have (they have: campaign, ts); declare it under fields: (e.g. fields: {country: "
        "string}) or add it to an input event")
    assert missing_column_error(ValueError("x"), "jobs:j", []) is None
