"""A class-data-sharing archive of the driver JVM's classes, for a faster start.

A Spark driver loads and verifies thousands of classes from its jars while the session and
the first micro-batch start; Java's class-data sharing (CDS, JDK 13+) maps them from an
archive instead. A JVM writes such an archive when it exits (``-XX:ArchiveClassesAtExit``),
but runs slower meanwhile; so the first session without one starts a warm-up in the
background (:mod:`.warm_up`: a small windowed streaming job in its own process, at a low CPU
priority) whose driver writes it, and runs without it; later sessions map it
(``-XX:SharedArchiveFile``). docs/spark.md ("Start-up") has the measured effect.

The archive lives in the cache folder (``jvm.build.cache_dir() / "cds"``), named by a digest
of what it depends on (:func:`archive_key`). One process claims ``<name>.part`` (created
exclusively) and starts the warm-up, whose JVM writes the archive there at exit, its header
last: a part whose first four bytes are the archive's magic number is complete, and the next
session renames it to ``<name>.jsa``. The JVM checks the archive itself (Java, class path,
jar times) and starts without it when it does not match; its CDS log is switched off (it
goes to stdout). ``WINDTUNNEL_CLASS_ARCHIVE=off`` disables all of it.
"""

from __future__ import annotations

import hashlib
import os
import struct
import time
from collections.abc import Mapping
from pathlib import Path

from windtunnel.spark_impl.user_settings import named_by_user

ENV = "WINDTUNNEL_CLASS_ARCHIVE"
"""Set to ``off`` to start the driver JVM without the archive."""

DYNAMIC_MAGIC = 0xF00BABA8
"""The first field of a dynamic CDS archive's header (HotSpot's CDS_DYNAMIC_ARCHIVE_MAGIC)."""

STALE_S = 600.0
"""A part file without a complete header this old was left by a JVM that did not finish."""

QUIET = "-Xlog:cds*=off"
"""The JVM's CDS log (warnings about classes it skips) is off: it would go to stdout."""


def java_home_of(java: str) -> Path:
    """The Java home of a ``java`` executable (symlinks resolved): ``.../bin/java`` -> ``...``."""
    return Path(os.path.realpath(java)).parent.parent


def can_archive(home: Path) -> bool:
    """Whether the JVM at ``home`` has the base CDS archives a dynamic archive builds on (a
    dynamic dump without them stops the JVM at start)."""
    server = home / "lib" / "server"
    return (server / "classes.jsa").is_file() and (server / "classes_nocoops.jsa").is_file()


def archive_key(home: Path, jars: Path, spark_version: str, conf: Mapping[str, str]) -> str:
    """A digest of what the archive depends on: the Java home and its ``lib/modules`` (size
    and time), the Spark version, its ``jars`` folder (path; names, sizes and times of the
    jars) and the driver's extra class path."""
    digest = hashlib.sha256()

    def add(text: str) -> None:
        digest.update(text.encode() + b"\0")

    add(str(home))
    modules = home / "lib" / "modules"
    if modules.exists():
        stat = modules.stat()
        add(f"{stat.st_size}:{stat.st_mtime_ns}")
    add(spark_version)
    add(str(jars.resolve()))
    for jar in sorted(jars.glob("*.jar")):
        stat = jar.stat()
        add(f"{jar.name}:{stat.st_size}:{stat.st_mtime_ns}")
    add(conf.get("spark.driver.extraClassPath", ""))
    return digest.hexdigest()[:24]


def is_complete(part: Path) -> bool:
    """Whether ``part`` starts with a dynamic archive's magic number (written last)."""
    try:
        with part.open("rb") as file:
            head = file.read(4)
    except OSError:
        return False
    return len(head) == 4 and struct.unpack("<I", head)[0] == DYNAMIC_MAGIC


def archive_options(folder: Path, key: str, now_s: float | None = None) -> tuple[str, Path] | None:
    """What a session does about the archive ``folder/<key>.jsa``: ``("use", archive)`` when
    it is there (a complete part is renamed to it first); ``("build", part)`` when this
    process claimed the part (it starts the warm-up); None when another process is writing
    it, a warm-up failed for this key (``<key>.failed``), or the folder cannot be written. A
    part left incomplete for :data:`STALE_S` becomes ``<key>.failed``. ``now_s`` is the wall
    clock for that check (default: the real one)."""
    archive, part, failed = (folder / f"{key}{end}" for end in (".jsa", ".part", ".failed"))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not archive.exists() and part.exists():
            if is_complete(part):
                os.replace(part, archive)
            elif (now_s if now_s is not None else time.time()) - part.stat().st_mtime > STALE_S:
                os.replace(part, failed)
        if archive.exists():
            return ("use", archive)
        if failed.exists():
            return None
        descriptor = os.open(part, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except OSError:  # FileExistsError: another process claimed it
        return None
    os.close(descriptor)
    return ("build", part)


def java_options(dump_to: Path | None = None, archive: Path | None = None) -> str:
    """The driver JVM's options: write the archive to ``dump_to`` at exit, or map ``archive``."""
    if dump_to is not None:
        return f"-XX:ArchiveClassesAtExit={dump_to} {QUIET}"
    return f"-XX:SharedArchiveFile={archive} {QUIET}"


def with_class_archive(java: str, conf: Mapping[str, str], folder: Path) -> dict[str, str]:
    """``spark.driver.extraJavaOptions`` of ``conf`` with the archive's options added, for a
    driver JVM that ``java`` will run: the archive when :func:`archive_options` says use;
    when it says build, the warm-up is started in the background (:func:`start_warm_up`) and
    this session runs without. {} when :data:`ENV` is ``off``, the user set the driver's Java
    options outside ``conf`` (``user_settings.named_by_user``), ``conf`` has a driver class
    path (it goes first on the class path, so the archive, written by a session without one,
    would not match), the JVM cannot archive (:func:`can_archive`) or there is nothing to add."""
    home = _archiving_home(java, conf)
    if home is None:
        return {}
    decided = archive_options(folder, key_for(home, conf))
    if decided is None:
        return {}
    what, path = decided
    if what == "build":
        start_warm_up(path, conf)
        return {}
    options = " ".join(
        o for o in (conf.get("spark.driver.extraJavaOptions"), java_options(archive=path)) if o
    )
    return {"spark.driver.extraJavaOptions": options}


def _archiving_home(java: str, conf: Mapping[str, str]) -> Path | None:
    if os.environ.get(ENV, "").lower() in ("off", "0", "false", "no"):
        return None
    if named_by_user("spark.driver.extraJavaOptions", "--driver-java-options"):
        return None
    if conf.get("spark.driver.extraClassPath"):
        return None
    home = java_home_of(java)
    return home if can_archive(home) else None


def key_for(home: Path, conf: Mapping[str, str]) -> str:
    """:func:`archive_key` for the installed PySpark and the Java at ``home``."""
    from windtunnel.spark_impl.jvm.build import spark_jars, spark_version

    jars = spark_jars()
    folder = jars[0].parent if jars else Path(".")
    return archive_key(home, folder, spark_version(), conf)


def start_warm_up(part: Path, conf: Mapping[str, str]) -> None:
    """The warm-up (:mod:`.warm_up`) in the background, its driver writing ``part`` at exit."""
    from windtunnel.spark_impl.jvm import warm_up

    warm_up.start(java_options(dump_to=part), conf)


def build_now(java: str, folder: Path, conf: Mapping[str, str], wait_s: float = 300.0) -> Path | None:
    """The archive for a driver JVM that ``java`` runs with ``conf``, built in the foreground
    (the warm-up, then waiting up to ``wait_s`` for its JVM to write it) unless it is there;
    None when no archive applies (see :func:`with_class_archive`), another process is
    building it, or the build failed."""
    from windtunnel.spark_impl.jvm import warm_up

    home = _archiving_home(java, conf)
    if home is None:
        return None
    decided = archive_options(folder, key_for(home, conf))
    if decided is None or decided[0] == "use":
        return None if decided is None else decided[1]
    part = decided[1]
    if warm_up.start(java_options(dump_to=part), conf, wait=True) != 0:
        return None
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and not is_complete(part):
        time.sleep(0.5)
    decided = archive_options(folder, key_for(home, conf))
    return decided[1] if decided is not None and decided[0] == "use" else None
