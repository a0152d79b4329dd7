"""A Python streaming data source whose micro-batch i is exactly scripted batch i.

Its offset is a batch index advancing by one per ``latestOffset`` call, so a query
run with ``trigger(availableNow=True)`` (or waited on with ``processAllAvailable``)
sees the scripted micro-batches one by one, whatever the trigger timing.
Rows travel inside the source's options (JSON), so this is for replay-sized inputs.

The module imports only PySpark: Spark unpickles the source in a fresh Python process per
query (its offsets) and in every Python worker reading it, so each import here is paid per
query; the row schema (``schema.INPUT_DDL``, whose module loads the oracle) travels as an
option.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

NAME = "windtunnel_scripted"


class _Part(InputPartition):  # type: ignore[misc]
    def __init__(self, rows: list[list[Any]]) -> None:
        super().__init__(len(rows))
        self.rows = rows


class OneBatchPerOffset(DataSourceStreamReader, SupportsTriggerAvailableNow):  # type: ignore[misc]
    """A stream reader whose offset ``{"batch": i}`` moves by one per micro-batch, up to
    ``batch_count``: micro-batch ``i`` is the source's batch ``i`` exactly."""

    batch_count = 0

    def initialOffset(self) -> dict[str, int]:
        return {"batch": 0}

    def prepareForTriggerAvailableNow(self) -> None:
        pass

    def latestOffset(self, start: dict[str, int], limit: Any) -> dict[str, int]:
        return {"batch": min(start["batch"] + 1, self.batch_count)}

    def commit(self, end: dict[str, int]) -> None:
        pass


class ScriptedReader(OneBatchPerOffset):
    """The stream has ``len(batches)`` micro-batches."""

    def __init__(self, batches: list[list[list[Any]]]) -> None:
        self.batches = batches
        self.batch_count = len(batches)

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        rows = [row for batch in self.batches[start["batch"] : end["batch"]] for row in batch]
        return [_Part(rows)]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        for row in partition.rows:
            yield tuple(row)


class ScriptedSource(DataSource):  # type: ignore[misc]
    """``spark.readStream.format("windtunnel_scripted").option("schema", ddl)
    .option("batches", json)``."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return str(self.options["schema"])

    def streamReader(self, schema: Any) -> ScriptedReader:
        return ScriptedReader(json.loads(self.options["batches"]))


def scripted_stream(spark: Any, batches: Sequence[Sequence[Sequence[Any]]]) -> Any:
    """A streaming DataFrame (schema.INPUT_DDL) delivering ``batches`` as micro-batches."""
    from windtunnel.spark_impl.schema import INPUT_DDL  # here: see the module docstring

    spark.dataSource.register(ScriptedSource)
    return (
        spark.readStream.format(NAME)
        .option("schema", INPUT_DDL)
        .option("batches", json.dumps([[list(r) for r in b] for b in batches]))
        .load()
    )
