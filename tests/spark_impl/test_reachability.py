"""The address checks made before a cluster or Connect session starts (pure: no JVM)."""

from __future__ import annotations

import socket

import pytest

from windtunnel.oracle.model.errors import EngineUnavailable
from windtunnel.spark_impl.reachability import check_reachable, connect_addresses, master_addresses


@pytest.mark.parametrize(
    ("remote", "addresses"),
    [
        ("sc://localhost:15003", [("localhost", 15003)]),
        ("sc://spark.example", [("spark.example", 15002)]),
        ("sc://10.0.0.5:443/;use_ssl=true;token=x", [("10.0.0.5", 443)]),
    ],
)
def test_connect_addresses(remote: str, addresses: list[tuple[str, int]]) -> None:
    assert connect_addresses(remote) == addresses


@pytest.mark.parametrize(
    ("master", "addresses"),
    [
        ("spark://127.0.0.1:7078", [("127.0.0.1", 7078)]),
        ("spark://a:7077,b:7078", [("a", 7077), ("b", 7078)]),
        ("spark://host", [("host", 7077)]),
        ("local[2]", []),
        ("yarn", []),
    ],
)
def test_master_addresses(master: str, addresses: list[tuple[str, int]]) -> None:
    assert master_addresses(master) == addresses


@pytest.mark.parametrize(
    ("master", "remote", "flag"),
    [
        (None, "localhost:15002", "--remote"),
        (None, "sc://host:port", "--remote"),
        ("spark://", None, "--master"),
        ("spark://a:7077,b:x", None, "--master"),
    ],
)
def test_malformed_addresses_say_the_form(
    master: str | None, remote: str | None, flag: str
) -> None:
    with pytest.raises(EngineUnavailable, match=f"fix {flag}"):
        check_reachable(master, remote)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_listening_address_passes_and_a_closed_one_is_refused() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = int(server.getsockname()[1])
        check_reachable(f"spark://127.0.0.1:{closed_port()},127.0.0.1:{port}")
        check_reachable(remote=f"sc://127.0.0.1:{port}")
    port = closed_port()
    with pytest.raises(
        EngineUnavailable, match=f"cannot reach the Spark master at spark://127.0.0.1:{port}"
    ):
        check_reachable(f"spark://127.0.0.1:{port}")
    check_reachable("local[2]")  # nothing to probe
