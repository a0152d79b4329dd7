"""ruff and mypy (strict for oracle and simulator) over the whole repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process  # runs ruff and mypy

ROOT = Path(__file__).resolve().parent.parent


def test_ruff() -> None:
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy() -> None:
    result = subprocess.run([sys.executable, "tools/typecheck.py"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
