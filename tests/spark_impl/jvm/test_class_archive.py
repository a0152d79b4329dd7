"""The class-data-sharing archive of the driver JVM: who builds it, when a session maps it,
and (with Spark) that the warm-up's archive is the one a later driver maps its classes from."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from windtunnel.spark_impl.jvm import class_archive
from windtunnel.spark_impl.jvm.class_archive import (
    DYNAMIC_MAGIC,
    STALE_S,
    archive_key,
    archive_options,
    can_archive,
    is_complete,
    with_class_archive,
)

KEY = "k"


def complete(path: Path) -> Path:
    """``path`` as a JVM leaves a finished archive: the magic number first (written last)."""
    path.write_bytes(struct.pack("<I", DYNAMIC_MAGIC) + b"\0" * 60)
    return path


def test_the_first_session_claims_the_build_and_others_wait(tmp_path: Path) -> None:
    assert archive_options(tmp_path, KEY) == ("build", tmp_path / "k.part")
    assert archive_options(tmp_path, KEY) is None  # claimed: the warm-up is writing it


def test_a_complete_part_becomes_the_archive_every_later_session_maps(tmp_path: Path) -> None:
    complete(tmp_path / "k.part")
    assert archive_options(tmp_path, KEY) == ("use", tmp_path / "k.jsa")
    assert not (tmp_path / "k.part").exists()
    assert archive_options(tmp_path, KEY) == ("use", tmp_path / "k.jsa")


def test_a_part_left_incomplete_too_long_marks_the_key_failed(tmp_path: Path) -> None:
    part = tmp_path / "k.part"
    part.write_bytes(b"\0" * 64)  # a dump that never wrote its header
    written = part.stat().st_mtime
    assert archive_options(tmp_path, KEY, now_s=written + STALE_S - 1) is None  # still running
    assert archive_options(tmp_path, KEY, now_s=written + STALE_S + 1) is None
    assert (tmp_path / "k.failed").exists() and not part.exists()
    assert archive_options(tmp_path, KEY) is None  # no second warm-up for this key


def test_a_folder_that_cannot_be_written_means_no_archive(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert archive_options(blocker / "cds", KEY) is None


@pytest.mark.parametrize(
    ("head", "expected"),
    [(struct.pack("<I", DYNAMIC_MAGIC), True), (b"\0\0\0\0", False), (b"\xa8", False), (b"", False)],
)
def test_only_a_written_header_counts_as_complete(tmp_path: Path, head: bytes,
                                                   expected: bool) -> None:
    (tmp_path / "a").write_bytes(head)
    assert is_complete(tmp_path / "a") is expected
    assert is_complete(tmp_path / "missing") is False


def fake_java(home: Path, *, base_archives: bool) -> str:
    """A Java home with ``bin/java`` and, when asked, the base CDS archives."""
    (home / "bin").mkdir(parents=True)
    (home / "lib" / "server").mkdir(parents=True)
    (home / "bin" / "java").write_text("")
    if base_archives:
        for name in ("classes.jsa", "classes_nocoops.jsa"):
            (home / "lib" / "server" / name).write_text("")
    return str(home / "bin" / "java")


def test_the_key_follows_the_class_path_not_the_java_options(tmp_path: Path) -> None:
    jars = tmp_path / "jars"
    jars.mkdir()
    (jars / "a.jar").write_text("a")
    key = archive_key(tmp_path, jars, "4.3.0", {})
    assert archive_key(tmp_path, jars, "4.3.0", {"spark.driver.extraJavaOptions": "-Xss4m"}) == key
    assert archive_key(tmp_path, jars, "4.3.0", {"spark.driver.extraClassPath": "/x.jar"}) != key
    assert archive_key(tmp_path, jars, "4.3.1", {}) != key
    (jars / "b.jar").write_text("b")
    assert archive_key(tmp_path, jars, "4.3.0", {}) != key


@pytest.fixture
def no_warm_up(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Warm-ups the code under test would start, recorded instead of started."""
    started: list[Path] = []
    monkeypatch.setattr(class_archive, "start_warm_up", lambda part, conf: started.append(part))
    monkeypatch.delenv(class_archive.ENV, raising=False)
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(Path(__file__).parent))  # no spark-defaults.conf
    return started


def test_a_session_builds_in_the_background_then_maps_and_keeps_its_own_options(
    tmp_path: Path, no_warm_up: list[Path]
) -> None:
    java = fake_java(tmp_path / "jdk", base_archives=True)
    conf = {"spark.driver.extraJavaOptions": "-Xss4m"}
    assert with_class_archive(java, conf, tmp_path / "cds") == {}  # runs without; warm-up starts
    [part] = no_warm_up
    complete(part)
    options = with_class_archive(java, conf, tmp_path / "cds")["spark.driver.extraJavaOptions"]
    assert options.startswith("-Xss4m -XX:SharedArchiveFile=") and "-Xlog:cds*=off" in options
    assert len(no_warm_up) == 1


@pytest.mark.parametrize("why", ["off", "user options", "no base archive", "class path"])
def test_no_archive_when_off_or_the_user_chose_java_options_or_a_class_path_or_java_cannot(
    why: str, tmp_path: Path, no_warm_up: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    java = fake_java(tmp_path / "jdk", base_archives=why != "no base archive")
    if why == "off":
        monkeypatch.setenv(class_archive.ENV, "off")
    if why == "user options":
        monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--driver-java-options -Xss4m pyspark-shell")
    conf = {"spark.driver.extraClassPath": "/x.jar"} if why == "class path" else {}
    assert with_class_archive(java, conf, tmp_path / "cds") == {}
    assert no_warm_up == [] and not (tmp_path / "cds").exists()


def test_this_java_can_archive() -> None:
    from windtunnel.spark_impl.jvm.java import ensure_java

    assert can_archive(class_archive.java_home_of(ensure_java()))


MAPPED = "source: shared objects file (top)"
"""How the JVM's class-load log names a class mapped from the dynamic archive."""


@pytest.mark.spark
@pytest.mark.process
@pytest.mark.slow
def test_the_warm_up_writes_an_archive_a_later_driver_maps_its_classes_from(
    tmp_path: Path,
) -> None:
    from windtunnel.spark_impl.jvm.java import ensure_java
    from windtunnel.spark_impl.session import BASE_CONF

    cache = tmp_path / "cache"
    env = {**os.environ, "WINDTUNNEL_CACHE": str(cache)}
    env.pop(class_archive.ENV, None)
    archive = class_archive.build_now(ensure_java(), cache / "cds", BASE_CONF)
    assert archive is not None and is_complete(archive)
    script = textwrap.dedent(f"""
        from windtunnel.spark_impl.jvm import class_archive
        from windtunnel.spark_impl.session import spark_session
        class_archive.start_warm_up = lambda part, conf: print("warm-up", part, flush=True)
        spark = spark_session(conf={{"spark.driver.extraJavaOptions":
                                     "-Xlog:class+load=info:file={tmp_path / 'classes.log'}"}})
        print("rows", spark.range(5).count(), flush=True)
    """)
    later = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=300, check=True)
    assert later.stdout == "rows 5\n"  # no second warm-up; the JVM's CDS log is off
    mapped = (tmp_path / "classes.log").read_text().count(MAPPED)
    assert mapped > 1000, f"{mapped} classes mapped from the archive"
