"""Run mypy on the windtunnel packages (strict for oracle and simulator).

The parts live at the repository root and install as ``windtunnel.*`` through a
package-dir mapping that mypy cannot follow, so this links them under a temporary
``windtunnel/`` folder and checks that. Exit status is mypy's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("oracle", "simulator", "spark_impl", "conformance", "cli")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="windtunnel-mypy-") as tmp:
        package = Path(tmp) / "windtunnel"
        package.mkdir()
        for part in PARTS:
            os.symlink(ROOT / part, package / part)
        command = [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--no-incremental",
            *[arg for part in PARTS for arg in ("-p", f"windtunnel.{part}")],
        ]
        return subprocess.run(command, cwd=tmp, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
