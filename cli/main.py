"""The ``windtunnel`` command: parses arguments, calls the library, formats results."""

from __future__ import annotations

import click

from windtunnel.cli.compare import compare_command
from windtunnel.cli.explain import explain_command
from windtunnel.cli.generate import generate_command
from windtunnel.cli.profiles import profiles_command
from windtunnel.cli.replay import replay_command
from windtunnel.cli.run import run_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show Python tracebacks for errors.")
@click.version_option(package_name="windtunnel")
def cli(debug: bool) -> None:
    """Pin down exactly what stream windows do with out-of-order, late and idle data."""


cli.add_command(replay_command)
cli.add_command(explain_command)
cli.add_command(profiles_command)
cli.add_command(compare_command)
cli.add_command(generate_command)
cli.add_command(run_command)


def main() -> None:
    cli(prog_name="windtunnel")
