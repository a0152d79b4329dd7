"""A failure inside Spark reaches the user as one line and exit 2, never a traceback."""

from __future__ import annotations

import click
from click.testing import CliRunner

from windtunnel.cli.errors import friendly, from_spark, spark_failure


class StreamingQueryException(Exception):
    """Stands for pyspark's own exception class (its module is what matters)."""


StreamingQueryException.__module__ = "pyspark.errors.exceptions.captured"


def failing_command() -> click.Command:
    @click.group()
    @click.option("--debug", is_flag=True)
    def root(debug: bool) -> None:
        pass

    @root.command()
    @friendly
    def run() -> None:
        raise StreamingQueryException(
            "[STREAM_FAILED] Query terminated with exception: boom\n  at org.apache.spark...\n"
        )

    @root.command()
    @friendly
    def bug() -> None:
        raise KeyError("a windtunnel bug stays a traceback")

    return root


def test_a_spark_failure_is_one_line_and_exit_2() -> None:
    result = CliRunner().invoke(failing_command(), ["run"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "windtunnel: Spark failed (StreamingQueryException): [STREAM_FAILED] Query terminated "
        "with exception: boom; rerun with --debug for Spark's trace"
    ]


def test_other_errors_are_not_hidden() -> None:
    result = CliRunner().invoke(failing_command(), ["bug"])
    assert isinstance(result.exception, KeyError)


def test_only_spark_modules_count() -> None:
    assert from_spark(StreamingQueryException("x"))
    assert not from_spark(ValueError("x"))
    assert spark_failure(StreamingQueryException("a" * 400)).count("a") < 320
