"""Whether a standalone master or a Spark Connect server answers, before a session starts:
its address must accept a TCP connection within :data:`PROBE_TIMEOUT_S`, so an address with
nothing listening fails at once rather than after Spark's retries."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from windtunnel.oracle.model.errors import EngineUnavailable

PROBE_TIMEOUT_S = 5.0
"""How long a TCP connect to a master or Connect server may take before it counts as failed."""

CONNECT_PORT = 15002
"""Spark Connect's default port ("sc://host" means port 15002)."""

MASTER_PORT = 7077
"""A standalone master's default port."""


def first_refusal(addresses: list[tuple[str, int]]) -> str | None:
    """None when one of ``addresses`` accepts a TCP connection, else why the last did not."""
    why = "no address given"
    for host, port in addresses:
        try:
            with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
                return None
        except OSError as exc:
            why = exc.strerror or str(exc) or type(exc).__name__
    return why


def host_port(url: str, default_port: int) -> tuple[str, int] | None:
    """``scheme://host[:port][/...]`` as (host, port), or None when it has no host or its
    port is not a number."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return None
    return (parts.hostname, port or default_port) if parts.hostname else None


def connect_addresses(remote: str) -> list[tuple[str, int]]:
    """``sc://host:port/;params`` as ``[(host, port)]`` (port 15002 when left out)."""
    address = host_port(remote, CONNECT_PORT) if remote.startswith("sc://") else None
    if address is None:
        raise EngineUnavailable(
            f"a Spark Connect address is sc://host:port: remote={remote!r}; "
            "fix --remote (e.g. sc://localhost:15002)"
        )
    return [address]


def master_addresses(master: str) -> list[tuple[str, int]]:
    """``spark://h1:p1,h2:p2`` (standby masters) as ``[(h1, p1), (h2, p2)]``; [] for any
    other master (local, yarn, k8s: not probed)."""
    if not master.startswith("spark://"):
        return []
    addresses = []
    for member in master.removeprefix("spark://").split(","):
        address = host_port(f"spark://{member}", MASTER_PORT)
        if address is None:
            raise EngineUnavailable(
                f"a standalone master is spark://host:port: master={master!r}; "
                "fix --master (e.g. spark://127.0.0.1:7077)"
            )
        addresses.append(address)
    return addresses


def check_reachable(master: str | None = None, remote: str | None = None) -> None:
    """Raise EngineUnavailable (one line) when the Connect server ``remote`` or the
    standalone ``master`` does not accept a TCP connection within PROBE_TIMEOUT_S."""
    if remote:
        why = first_refusal(connect_addresses(remote))
        if why is not None:
            raise EngineUnavailable(
                f"cannot reach Spark Connect at {remote}: {why}; start the server or fix --remote"
            )
        return
    addresses = master_addresses(master or "")
    if addresses:
        why = first_refusal(addresses)
        if why is not None:
            raise EngineUnavailable(
                f"cannot reach the Spark master at {master}: {why}; "
                "start the master or fix --master"
            )
