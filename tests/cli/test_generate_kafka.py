"""`windtunnel generate --format kafka` against a local Kafka-wire-compatible broker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from windtunnel.cli.main import cli
from windtunnel.oracle.model.errors import EngineUnavailable
from windtunnel.simulator.localbroker import local_broker


@pytest.fixture(scope="module")
def broker() -> Iterator[str]:
    try:
        with local_broker() as bootstrap:
            yield bootstrap
    except EngineUnavailable as exc:
        pytest.skip(str(exc))


@pytest.mark.kafka
def test_generate_to_kafka_reports_deliveries(broker: str, tmp_path) -> None:
    config = tmp_path / "kafka.properties"
    config.write_text(f"bootstrap.servers={broker}\nbatch.num.messages=1\n")
    result = CliRunner().invoke(
        cli,
        ["generate", "iot", "-n", "500", "--format", "kafka", "--kafka-config", str(config),
         "--topic", "device-metrics", "--partitions", "2"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "kafka: produced 500, delivered 500, failed 0, undelivered 0" in result.stderr
    assert broker not in result.stderr  # settings are never printed
