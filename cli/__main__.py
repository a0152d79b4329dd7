"""``python -m windtunnel.cli``: the ``windtunnel`` command."""

from windtunnel.cli.main import main

main()
