"""Docs, code, examples and profile sources cite public pages, never paths outside the repo."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import windtunnel.oracle  # noqa: F401  (registers every profile)
from windtunnel.oracle.profiles import PROFILES

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE_PATHS = ("seeds/", "notes/engines", "notes/spark", "CONTRACT.md", "../shared")
PARTS = ("oracle/", "simulator/", "spark_impl/", "conformance/", "cli/", "examples/",
         "benchmarks/", "docs/")


def _tracked_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [
        f for f in listed
        if not f.startswith("tests/")
        and (f == "README.md" or f.startswith(PARTS))
        and f.endswith((".py", ".md", ".yaml", ".yml", ".json", ".toml", ".txt"))
    ]


def test_tracked_files_are_found() -> None:
    files = _tracked_files()
    assert "README.md" in files
    assert "oracle/profiles/registry.py" in files
    assert "docs/semantics.md" in files


@pytest.mark.parametrize("path", _tracked_files())
def test_file_cites_no_outside_path(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8", errors="replace")
    found = [p for p in OUTSIDE_PATHS if p in text]
    assert not found, f"{path} cites {found}: cite the public page (URL and sentence) instead"


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_profile_sources_cite_no_outside_path(name: str) -> None:
    profile = PROFILES[name]
    texts = [*profile.sources.values(), *profile.unsupported.values(), profile.summary]
    for text in texts:
        assert not [p for p in OUTSIDE_PATHS if p in text], f"profile {name}: {text}"
