"""`windtunnel broker`: the local test broker in the foreground, its address printed, a
Kafka client can use it, Ctrl-C stops it (a real process and a real SIGINT)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys

import pytest

from windtunnel.oracle.model.errors import EngineUnavailable
from windtunnel.simulator.localbroker import broker_binary

CLI = "from windtunnel.cli.main import main; main()"


@pytest.mark.kafka
def test_the_broker_serves_until_ctrl_c() -> None:
    kafka = pytest.importorskip("confluent_kafka")
    try:
        broker_binary()
    except EngineUnavailable as exc:
        pytest.skip(str(exc))
    process = subprocess.Popen(
        [sys.executable, "-c", CLI, "broker", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as from a terminal
    )  # fmt: skip
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("broker listening on 127.0.0.1:"), first
        bootstrap = first.split()[3]
        assert process.stdout.readline().strip() == f"bootstrap servers: {bootstrap}"
        producer = kafka.Producer({"bootstrap.servers": bootstrap})
        producer.produce("experiments", value=b'{"ts": 1}')
        assert producer.flush(30) == 0
        from confluent_kafka.admin import AdminClient

        topics = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10)
        assert "experiments" in topics.topics
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 0
    assert err.strip().splitlines() == ["Ctrl-C stops it (its records go with it)", "broker stopped"]
    host, _, port = bootstrap.partition(":")
    with socket.socket() as probe:
        assert probe.connect_ex((host, int(port))) != 0  # nothing listens any more


@pytest.mark.process  # windtunnel broker in a fresh Python
def test_a_taken_port_is_one_line_and_exit_2() -> None:
    try:
        broker_binary()
    except EngineUnavailable as exc:
        pytest.skip(str(exc))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-c", CLI, "broker", "--port", str(port)],
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == (f"windtunnel: port 127.0.0.1:{port} is taken; stop what "
                                   "listens there or pick another port")
