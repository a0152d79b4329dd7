"""The Java engine for the tests: its sources and the test-only line harness
(``src/windtunnel/engine/Harness.java`` here, not in the product's jar) compiled once per run
into a temporary folder (``javac --release 17``, warnings are errors), and one harness JVM
shared by every test (many scenarios per start). Tests skip, saying why, where no JDK is
installed."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import HarnessProcess

SOURCES = Path(__file__).resolve().parents[3] / "spark_impl" / "jvm" / "src" / "windtunnel" / "engine"
"""The engine's sources (package ``windtunnel.engine``, pure JDK)."""
TEST_SOURCES = Path(__file__).resolve().parent / "src" / "windtunnel" / "engine"
"""The test-only sources of the same package: the line harness."""


QUICK_JVM = ("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC")
"""javac's own JVM flags: a short run compiles faster without the optimising JIT."""


def _tool(name: str) -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).exists():
        return str(Path(home) / "bin" / name)
    return shutil.which(name)


@pytest.fixture(scope="session")
def engine_classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the compiled ``windtunnel.engine`` classes and the harness."""
    javac = _tool("javac")
    if javac is None:
        pytest.skip("javac (JDK 17 or later) not found on JAVA_HOME or PATH: the Java engine tests need it")
    out = tmp_path_factory.mktemp("engine-classes")
    sources = sorted(str(p) for p in [*SOURCES.glob("*.java"), *TEST_SOURCES.glob("*.java")])
    done = subprocess.run(
        [javac, *QUICK_JVM, "--release", "17", "-Xlint:all", "-Werror", "-d", str(out), *sources],
        capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="session")
def harness(engine_classes: Path) -> Iterator[HarnessProcess]:
    """One running ``windtunnel.engine.Harness`` for the whole test run."""
    java = _tool("java")
    if java is None:
        pytest.skip("java not found on JAVA_HOME or PATH: the Java engine tests need it")
    process = HarnessProcess(java, engine_classes)
    yield process
    process.close()
