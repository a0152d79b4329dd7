"""A Python with this venv's libraries (pyspark, pandas, pyarrow, ...) but without windtunnel:
what a cluster's workers run when windtunnel is installed only where the driver runs.

It is a fresh venv whose site-packages holds one ``.pth`` path line naming this venv's
site-packages. A path line adds the directory to ``sys.path`` without processing that
directory's own ``.pth`` files, so windtunnel's editable-install finder is never loaded.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path


def python_without_windtunnel(directory: Path) -> Path:
    """Create the venv in ``directory``; its interpreter's path."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(directory)], check=True)
    python = directory / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "libraries-only.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def imports(python: Path, module: str, *, path: str | None = None) -> bool:
    """Whether ``python`` imports ``module`` (with ``path`` first on ``sys.path``)."""
    code = f"import sys; sys.path.insert(0, {path!r})\n" if path else ""
    answer = subprocess.run(
        [str(python), "-c", f"{code}import {module}"], capture_output=True, check=False
    )
    return answer.returncode == 0
