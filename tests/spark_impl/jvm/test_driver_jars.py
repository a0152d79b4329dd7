"""What windtunnel puts into the driver JVM of its check sessions: local ``file:`` paths
without Hadoop's ``chmod`` child processes (``NioLocalFileSystem`` sets the permissions
Hadoop's ``LocalFileSystem`` sets, in-process), and the closure checks agent (Spark's closure
cleaner checks each lambda class once)."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path
from typing import Any

import pytest

from windtunnel.spark_impl.jvm.driver_jars import (
    AGENT_CLASSES,
    CLOSURE_CHECKS,
    NIO_LOCAL_FILES,
    closure_checks_conf,
    local_files_conf,
)


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


def test_the_closure_checks_agent_is_a_premain_jar_added_to_the_drivers_options() -> None:
    options = "-XX:TieredStopAtLevel=1"
    conf = closure_checks_conf({"spark.driver.extraJavaOptions": options})
    added = conf["spark.driver.extraJavaOptions"]
    assert added.startswith(options + " -javaagent:")
    jar = Path(added.split("-javaagent:", 1)[1])
    with zipfile.ZipFile(jar) as agent:
        manifest = agent.read("META-INF/MANIFEST.MF").decode()
        names = [n for n in agent.namelist() if n.endswith(".class")]
    assert f"Premain-Class: {CLOSURE_CHECKS}" in manifest
    # the agent's classes alone: ASM is Spark's own (shaded in its jars)
    assert names and all(n.startswith(AGENT_CLASSES) for n in names)


def _class_file(jar_prefix: str, name: str) -> bytes:
    """The bytes of class ``name`` in the installed PySpark's jar ``jar_prefix*.jar``."""
    from windtunnel.spark_impl.jvm.build import spark_jars

    (jar,) = [j for j in spark_jars() if j.name.startswith(jar_prefix)]
    with zipfile.ZipFile(jar) as classes:
        return classes.read(name.replace(".", "/") + ".class")


@pytest.mark.spark
def test_the_agent_rewrites_sparks_cleaner_and_leaves_a_class_without_its_clean_alone(
    spark: Any,
) -> None:
    """The rewrite of the installed Spark's ``SparkClosureCleaner$`` keeps Spark's method under
    a new name behind the check; a class without a ``clean(Object, boolean, boolean)`` (here
    ``ClosureCleaner$``, whose ``clean`` takes a map) comes back as None: a Spark that changed
    the method keeps its own cleaner."""
    from windtunnel.spark_impl.jvm.binding import load

    jvm = load(spark).jvm
    assert jvm is not None
    gateway = jvm.gateway
    checks = gateway.jvm.java.lang.Class.forName(CLOSURE_CHECKS, True, jvm.loader)
    parameter = gateway.new_array(gateway.jvm.java.lang.Class, 1)
    parameter[0] = gateway.jvm.java.lang.Class.forName("[B")
    rewritten = checks.getMethod("rewritten", parameter)

    def rewrite(class_file: bytes) -> bytes | None:
        arguments = gateway.new_array(gateway.jvm.java.lang.Object, 1)
        arguments[0] = class_file
        result: bytes | None = rewritten.invoke(None, arguments)
        return result

    cleaner = _class_file("spark-core_", "org.apache.spark.util.SparkClosureCleaner$")
    after = rewrite(cleaner)
    assert after is not None and b"clean$windtunnelChecked" in after
    assert b"windtunnel/spark/ClosureChecks" in after
    assert rewrite(_class_file("spark-common-utils_", "org.apache.spark.util.ClosureCleaner$")) is None


CHECK_UNDER_THE_AGENT = r"""
import json, sys
from click.testing import CliRunner
from pyspark.sql import SparkSession
from windtunnel.cli.main import cli

project, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, project)
codes = {}
for job in ("jobs:failed_logins", "jobs_broken:failed_logins"):
    result = CliRunner().invoke(cli, [
        "check", f"{project}/specs/failed_logins.yaml", "--job", job, "--examples", "15",
        "--out", out, "--shrink-seconds", "10"])
    codes[job] = [result.exit_code, result.output[-400:]]
checks = SparkSession.getActiveSession().sparkContext._jvm.windtunnel.spark.ClosureChecks
print(json.dumps({"codes": codes, "installed": checks.installed(),
                  "classes": checks.checkedClasses()}))
"""


@pytest.mark.spark
def test_a_check_session_runs_with_the_agent_and_still_finds_a_broken_job(tmp_path: Path) -> None:
    """``windtunnel check`` (its own session, in a process of its own) runs with Spark's
    cleaner rewritten and lambda classes checked once; the correct job passes and the job
    with a 1-minute watermark for the spec's 2 minutes still fails with a counterexample."""
    import json
    import subprocess
    import sys

    project = Path(__file__).resolve().parents[3] / "examples" / "user_project"
    done = subprocess.run(
        [sys.executable, "-c", CHECK_UNDER_THE_AGENT, str(project), str(tmp_path)],
        capture_output=True, text=True, check=False, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["installed"] is True
    assert report["classes"] > 5
    assert report["codes"]["jobs:failed_logins"][0] == 0, report
    assert report["codes"]["jobs_broken:failed_logins"][0] == 1, report
    assert list(tmp_path.glob("*.yaml")), "no counterexample written"
