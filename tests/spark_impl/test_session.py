"""The package shipped to executors and Connect servers, and the address checks made before
a session starts (pure: no JVM)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import shutil
import socket
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from windtunnel.oracle.model.errors import EngineUnavailable
from windtunnel.spark_impl.session import (
    PARTS,
    check_reachable,
    connect_addresses,
    local_driver_memory,
    master_addresses,
    package_files,
    package_zip,
)

from .foreign_python import imports, python_without_windtunnel


@pytest.fixture(scope="module")
def foreign_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return python_without_windtunnel(tmp_path_factory.mktemp("foreign") / "venv")


def installed_modules() -> set[str]:
    """Every module and package of the five parts as zip names, found by the import system."""
    names = set()
    for part in PARTS:
        package = importlib.import_module(f"windtunnel.{part}")
        names.add(f"windtunnel/{part}/__init__.py")
        for info in pkgutil.walk_packages(package.__path__, f"windtunnel.{part}."):
            path = info.name.replace(".", "/")
            names.add(f"{path}/__init__.py" if info.ispkg else f"{path}.py")
    return names


def test_the_zip_holds_every_module_subpackages_included(tmp_path: Path) -> None:
    with zipfile.ZipFile(package_zip(str(tmp_path))) as archive:
        shipped = set(archive.namelist())
    expected = installed_modules()
    assert "windtunnel/oracle/model/errors.py" in expected  # the walk saw subpackages
    assert "windtunnel/oracle/profiles/kdb/__init__.py" in expected
    assert expected - shipped == set()
    assert {"windtunnel/oracle/py.typed", "windtunnel/simulator/py.typed"} <= shipped
    others = {n for n in shipped if not n.endswith((".py", "/py.typed"))}
    assert others == set()


@pytest.mark.process  # a Python without windtunnel
def test_a_python_without_windtunnel_imports_subpackages_from_the_zip(
    foreign_python: Path, tmp_path: Path
) -> None:
    zipped = str(package_zip(str(tmp_path)))
    assert not imports(foreign_python, "windtunnel.oracle")
    for module in (
        "windtunnel.oracle.model.errors",
        "windtunnel.oracle.windows.driver",
        "windtunnel.oracle.profiles.kdb",
        "windtunnel.spark_impl.general.processor",
    ):
        assert imports(foreign_python, module, path=zipped), module


@pytest.mark.process  # a Python without windtunnel
def test_an_installed_layout_ships_the_same_files(foreign_python: Path, tmp_path: Path) -> None:
    """A wheel holds ``windtunnel/<part>/...`` (setup.py's package_dir): copied so, found
    through ``__path__`` by a Python that has no other windtunnel, the same files ship."""
    site = tmp_path / "site"
    for part in PARTS:
        source = Path(importlib.import_module(f"windtunnel.{part}").__path__[0])
        shutil.copytree(source, site / "windtunnel" / part)
    listed = subprocess.run(
        [
            str(foreign_python),
            "-c",
            f"import sys, json; sys.path.insert(0, {str(site)!r})\n"
            "from windtunnel.spark_impl.session import package_files\n"
            "print(json.dumps(sorted(package_files())))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(listed.stdout) == sorted(package_files())


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


GIB = 1024**3


@pytest.mark.parametrize(
    ("physical_bytes", "memory"),
    [(24 * GIB, "4096m"), (8 * GIB, "2048m"), (2 * GIB, "1024m"), (64 * GIB, "4096m")],
)
def test_a_local_driver_gets_a_quarter_of_the_memory_up_to_4g(
    physical_bytes: int, memory: str
) -> None:
    assert local_driver_memory(physical_bytes, environ={}) == memory


@pytest.mark.parametrize(
    "submit_args",
    ["--driver-memory 2g pyspark-shell", "--conf spark.driver.memory=2g pyspark-shell"],
)
def test_the_users_submit_args_keep_their_driver_memory(submit_args: str) -> None:
    assert local_driver_memory(24 * GIB, environ={"PYSPARK_SUBMIT_ARGS": submit_args}) is None


def test_the_users_spark_defaults_keep_their_driver_memory(tmp_path: Path) -> None:
    (tmp_path / "spark-defaults.conf").write_text("# mine\nspark.driver.memory   3g\n")
    assert local_driver_memory(24 * GIB, environ={"SPARK_CONF_DIR": str(tmp_path)}) is None
    (tmp_path / "spark-defaults.conf").write_text("spark.executor.memory 3g\n")
    assert local_driver_memory(24 * GIB, environ={"SPARK_CONF_DIR": str(tmp_path)}) == "4096m"


@pytest.mark.spark
def test_the_local_session_runs_with_that_heap(spark: Any) -> None:
    """The test run's own session was built by spark_session: its JVM has the heap."""
    expected = local_driver_memory()
    jvm = spark.sparkContext._jvm
    max_mb = jvm.java.lang.Runtime.getRuntime().maxMemory() // (1024 * 1024)
    assert expected is not None
    # the JVM reports the heap less one survivor space: within 15% of what was asked
    assert int(expected.removesuffix("m")) * 0.85 <= max_mb <= int(expected.removesuffix("m"))
