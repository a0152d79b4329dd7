"""Local ``file:`` paths without Hadoop's ``chmod`` child processes: ``NioLocalFileSystem``
sets the permissions Hadoop's ``LocalFileSystem`` sets, in-process; the sessions windtunnel
starts for checks get it when they are local and the jar is at hand."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path
from typing import Any

import pytest

from windtunnel.spark_impl.session import NIO_LOCAL_FILES, local_files_conf


def test_a_local_check_session_gets_the_file_system_and_a_cluster_one_does_not() -> None:
    conf = local_files_conf(None, {})
    assert conf["spark.hadoop.fs.file.impl"] == NIO_LOCAL_FILES
    jar = Path(conf["spark.driver.extraClassPath"])
    # only the file system's classes: the operator's own load through windtunnel's loader
    with zipfile.ZipFile(jar) as classes:
        names = [n for n in classes.namelist() if n.endswith(".class")]
    assert names and all(n.startswith("windtunnel/spark/NioLocalFileSystem") for n in names)
    kept = local_files_conf("local[2]", {"spark.driver.extraClassPath": "/opt/mine.jar"})
    assert kept["spark.driver.extraClassPath"].startswith("/opt/mine.jar" + os.pathsep)
    assert local_files_conf("spark://10.0.0.1:7077", {}) == {}
    chosen = {"spark.hadoop.fs.file.impl": "org.example.MyFs"}
    assert local_files_conf("local[2]", chosen) == {}


def _children_cpu(pid: int) -> int:
    """Clock ticks of CPU the process's finished child processes used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[13]) + int(fields[14])


@pytest.mark.spark
def test_files_and_directories_get_hadoops_permissions_without_child_processes(
    spark: Any, tmp_path: Path
) -> None:
    from windtunnel.spark_impl.jvm.binding import load

    jvm = load(spark).jvm
    assert jvm is not None
    gateway = jvm.gateway.jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    nio = gateway.java.lang.Class.forName(NIO_LOCAL_FILES, True, jvm.loader).newInstance()
    nio.initialize(gateway.java.net.URI("file:///"), conf)
    hadoop = gateway.org.apache.hadoop.fs.LocalFileSystem()
    hadoop.initialize(gateway.java.net.URI("file:///"), conf)
    path = gateway.org.apache.hadoop.fs.Path
    pid = int(gateway.ProcessHandle.current().pid())
    if not Path(f"/proc/{pid}/stat").is_file():
        pytest.skip("no /proc to read the JVM's child processes from")

    before = _children_cpu(pid)
    for i in range(20):
        nio.create(path(str(tmp_path / "nio" / f"d{i}" / "f")), True).close()
    assert _children_cpu(pid) == before, "a child process ran"
    for i in range(3):
        hadoop.create(path(str(tmp_path / "hadoop" / f"d{i}" / "f")), True).close()
    for name in ("d0", "d0/f", "d0/.f.crc"):
        got = stat.S_IMODE((tmp_path / "nio" / name).stat().st_mode)
        want = stat.S_IMODE((tmp_path / "hadoop" / name).stat().st_mode)
        assert got == want, name
