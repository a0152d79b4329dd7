"""``python -m windtunnel.cli``: the ``windtunnel`` command."""

from windtunnel.cli.main import main

if __name__ == "__main__":
    main()
