"""Shipping the ``windtunnel`` package to a cluster's executors (``addPyFile``) or to a Spark
Connect server (``addArtifacts``), as a zip of every module of its parts."""

from __future__ import annotations

import atexit
import importlib
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from windtunnel.oracle.model.errors import EngineUnavailable

PARTS = ("oracle", "simulator", "spark_impl", "conformance", "cli")
"""The parts of the ``windtunnel`` namespace, each shipped whole."""


def package_files() -> dict[str, Path]:
    """Every module (``*.py``, subpackages included) and ``py.typed`` of the installed parts,
    keyed by its name in the zip, ``windtunnel/<part>/...``. Found through each part's
    ``__path__``, so an editable checkout and an installed wheel ship the same files."""
    files: dict[str, Path] = {}
    for part in PARTS:
        package = importlib.import_module(f"windtunnel.{part}")
        for root in map(Path, package.__path__):
            for path in sorted(root.rglob("*")):
                inside = path.relative_to(root)
                if "__pycache__" in inside.parts or not path.is_file():
                    continue
                if path.suffix == ".py" or path.name == "py.typed":
                    files.setdefault(f"windtunnel/{part}/{inside.as_posix()}", path)
    return files


def package_zip(directory: str | None = None) -> Path:
    """A zip of the installed ``windtunnel`` namespace (``package_files`` under an empty
    ``windtunnel/__init__.py``), importable from ``sys.path`` on a machine without it."""
    out = Path(directory or tempfile.mkdtemp(prefix="windtunnel-ship-")) / "windtunnel.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("windtunnel/__init__.py", "")
        for name, path in package_files().items():
            archive.write(path, name)
    return out


def ship_package(spark: Any) -> None:
    """Make ``windtunnel`` importable on executors (cluster) or on the Connect server. The
    zip's temporary folder is removed when the process exits (executors fetch it while the
    session lives)."""
    path = package_zip()
    atexit.register(shutil.rmtree, path.parent, ignore_errors=True)
    if hasattr(spark, "addArtifacts"):
        try:
            spark.addArtifacts(str(path), pyfile=True)
            return
        except Exception as exc:  # the classic session has addArtifacts too but not everywhere
            if not hasattr(spark, "sparkContext"):
                raise EngineUnavailable(f"cannot ship windtunnel to the server: {exc}") from exc
    spark.sparkContext.addPyFile(str(path))
