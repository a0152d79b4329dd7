"""``windtunnel.spark_impl.job``, the import path users rely on (docs/spark.md): the names of
:mod:`windtunnel.spark_impl.jobs.job`, and the sources it reads from."""

from windtunnel.spark_impl.jobs.job import (
    CLOCKS,
    SINK_KINDS,
    TRIGGER_HELP,
    JobReport,
    JobSpec,
    Sink,
    dataframe_source,
    job_path,
    kafka_records,
    kafka_source,
    load_spec,
    local_path,
    records_source,
    run_job,
    spec_of,
    trigger_options,
    windowed,
)

__all__ = [
    "CLOCKS",
    "SINK_KINDS",
    "TRIGGER_HELP",
    "JobReport",
    "JobSpec",
    "Sink",
    "dataframe_source",
    "job_path",
    "kafka_records",
    "kafka_source",
    "load_spec",
    "local_path",
    "records_source",
    "run_job",
    "spec_of",
    "trigger_options",
    "windowed",
]
