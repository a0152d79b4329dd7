"""``windtunnel.spark_impl.job``, the import path users rely on (docs/spark.md): windowed jobs
(:mod:`windtunnel.spark_impl.jobs`: the spec, the path, the run, sinks, triggers, the report)
and the sources they read from."""

from windtunnel.spark_impl.jobs.path import PATHS, PathChoice, choose_path
from windtunnel.spark_impl.jobs.query_progress import BatchProgress
from windtunnel.spark_impl.jobs.report import JobReport
from windtunnel.spark_impl.jobs.run import job_path, local_path, run_job
from windtunnel.spark_impl.jobs.sinks import SINK_KINDS, Sink
from windtunnel.spark_impl.jobs.sources import (
    JOB_INPUT_COLUMNS,
    JOB_INPUT_DDL,
    KAFKA_PACKAGE,
    KAFKA_READERS,
    dataframe_source,
    kafka_job_rows,
    kafka_records,
    kafka_source,
    records_format,
    records_source,
)
from windtunnel.spark_impl.jobs.spec import CLOCKS, JobSpec, load_job_spec, spec_of
from windtunnel.spark_impl.jobs.triggers import TRIGGER_HELP, trigger_options
from windtunnel.spark_impl.jobs.windowed import windowed

__all__ = [
    "CLOCKS",
    "JOB_INPUT_COLUMNS",
    "JOB_INPUT_DDL",
    "KAFKA_PACKAGE",
    "KAFKA_READERS",
    "PATHS",
    "SINK_KINDS",
    "TRIGGER_HELP",
    "BatchProgress",
    "JobReport",
    "JobSpec",
    "PathChoice",
    "Sink",
    "choose_path",
    "dataframe_source",
    "job_path",
    "kafka_job_rows",
    "kafka_records",
    "kafka_source",
    "load_job_spec",
    "local_path",
    "records_format",
    "records_source",
    "run_job",
    "spec_of",
    "trigger_options",
    "windowed",
]
