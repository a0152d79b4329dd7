"""The package shipped to executors and Connect servers (pure: no JVM)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from windtunnel.spark_impl.shipping import PARTS, package_files, package_zip

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
            "from windtunnel.spark_impl.shipping import package_files\n"
            "print(json.dumps(sorted(package_files())))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(listed.stdout) == sorted(package_files())
