"""The ``windtunnel`` command: parses arguments, calls the library, formats results."""

from __future__ import annotations

import os

import click

from windtunnel.cli.broker import broker_command
from windtunnel.cli.check import check_command
from windtunnel.cli.compare import compare_command
from windtunnel.cli.explain import explain_command
from windtunnel.cli.generate import generate_command
from windtunnel.cli.plot import plot_command
from windtunnel.cli.profiles import profiles_command
from windtunnel.cli.replay import replay_command
from windtunnel.cli.run import run_command
from windtunnel.spark_impl.spark_log import LOG_ENV

HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}
"""Every command's own setting: click builds a command's help option once, from the first
context it sees, which need not be this group's."""


@click.group(context_settings=HELP_OPTIONS)
@click.option(
    "--debug",
    is_flag=True,
    help=f"Show Python tracebacks for errors, and Spark's log on stderr (else {LOG_ENV} or a temp file).",
)
@click.version_option(package_name="windtunnel")
def cli(debug: bool) -> None:
    """Pin down exactly what stream windows do with out-of-order, late and idle data."""
    if debug:
        os.environ[LOG_ENV] = "-"


cli.add_command(replay_command)
cli.add_command(explain_command)
cli.add_command(profiles_command)
cli.add_command(compare_command)
cli.add_command(generate_command)
cli.add_command(run_command)
cli.add_command(check_command)
cli.add_command(plot_command)
cli.add_command(broker_command)
for _command in cli.commands.values():
    _command.context_settings = {**HELP_OPTIONS, **_command.context_settings}


def main() -> None:
    cli(prog_name="windtunnel")
