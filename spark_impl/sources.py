"""``windtunnel.spark_impl.sources``, the import path users rely on (docs/spark.md): the
names of :mod:`windtunnel.spark_impl.jobs.sources`."""

from windtunnel.spark_impl.jobs.sources import (
    JOB_INPUT_COLUMNS,
    JOB_INPUT_DDL,
    KAFKA_PACKAGE,
    KAFKA_READERS,
    RECORD_FORMATS,
    RECORDS_SOURCE,
    RecordsReader,
    RecordsSource,
    dataframe_source,
    kafka_job_rows,
    kafka_records,
    kafka_source,
    records_format,
    records_source,
)
from windtunnel.spark_impl.schema import FIELD_PREFIX

__all__ = [
    "FIELD_PREFIX",
    "JOB_INPUT_COLUMNS",
    "JOB_INPUT_DDL",
    "KAFKA_PACKAGE",
    "KAFKA_READERS",
    "RECORDS_SOURCE",
    "RECORD_FORMATS",
    "RecordsReader",
    "RecordsSource",
    "dataframe_source",
    "kafka_job_rows",
    "kafka_records",
    "kafka_source",
    "records_format",
    "records_source",
]
