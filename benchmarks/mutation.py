"""Mutation testing of the suite: does it kill every semantic mutant in tools/mutants.py?

The working tree is never touched (other people edit it): the repository's parts and
tests are copied once into a temporary directory, and each mutant is applied there,
run against its test selection (``pytest -x -q -p no:cacheprovider``) and reverted.
Imports resolve to the copy: a temporary ``windtunnel/`` folder of symlinks into it
comes first on PYTHONPATH (ahead of the editable install), and a preflight checks that
``windtunnel.oracle`` is imported from the copy (the registry's sanity mutant, which
breaks an import, must be killed too). Bytecode is not written, so a reverted file is
never shadowed by a stale ``.pyc``.

Each test selection first runs on the unmutated copy; tests failing there (someone's work
in progress) are left out of the mutant runs and listed, so every kill is a real one.
Prints one line per mutant (id, killed/survived, seconds, the test that killed it) and
ends with ``killed K/M mutants; median time to kill X s``. Exit 1 if any survives.

Run: python benchmarks/mutation.py [--only ID ...] [--list] [--keep]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("oracle", "simulator", "spark_impl", "conformance", "cli")
COPIED = (*PARTS, "tests", "examples", "docs", "tools", "benchmarks", "pyproject.toml",
          "setup.py", "README.md")
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", "*.egg-info")
TIMEOUT_S = 900


def load_registry() -> ModuleType:
    """tools/mutants.py (a script folder, not a package)."""
    spec = importlib.util.spec_from_file_location("windtunnel_mutants", ROOT / "tools" / "mutants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True, slots=True)
class Outcome:
    mutant_id: str
    killed: bool
    seconds: float
    by: str


class Sandbox:
    """A copy of the repository whose parts import as ``windtunnel.*``."""

    def __init__(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="windtunnel-mutation-"))
        self.repo = self.tmp / "repo"
        self.repo.mkdir()
        for name in COPIED:
            source = ROOT / name
            if source.is_dir():
                shutil.copytree(source, self.repo / name, ignore=IGNORED, symlinks=True)
            elif source.exists():
                shutil.copy2(source, self.repo / name)
        package = self.tmp / "path" / "windtunnel"
        package.mkdir(parents=True)
        for part in PARTS:
            os.symlink(self.repo / part, package / part)
        self.env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                [str(self.tmp / "path"), *filter(None, [os.environ.get("PYTHONPATH")])]
            ),
            "PYTHONDONTWRITEBYTECODE": "1",
        }

    def check_imports(self) -> None:
        """Fail unless the copy's oracle and spark_impl are the ones imported."""
        code = (
            "import windtunnel.oracle.windows.fixed as f, windtunnel.spark_impl.production.plan as s;"
            "print(f.__file__); print(s.__file__)"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=self.repo, env=self.env,
            capture_output=True, text=True, check=False,
        )
        files = done.stdout.split()
        if done.returncode or len(files) != 2 or not all(p.startswith(str(self.tmp)) for p in files):
            raise SystemExit(f"mutation: the copy is not what gets imported: {done.stdout}{done.stderr}")

    def pytest(self, args: list[str]) -> tuple[int, str]:
        try:
            done = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                 "-o", "addopts=--import-mode=importlib", *args],
                cwd=self.repo, env=self.env, capture_output=True, text=True,
                timeout=TIMEOUT_S, check=False,
            )
        except subprocess.TimeoutExpired:
            return -1, "timed out"
        return done.returncode, done.stdout + done.stderr

    def baseline(self, tests: tuple[str, ...]) -> list[str]:
        """The tests of a selection that fail without any mutant (other work in progress):
        they are left out of that selection's mutant runs, so a kill is a real kill.
        Raises SystemExit when the selection cannot even run (exit code other than 0/1)."""
        code, output = self.pytest(list(tests))
        if code not in (0, 1):
            raise SystemExit(f"mutation: {' '.join(tests)} does not run without mutants: "
                             f"{killer(output, code)}")
        return re.findall(r"^(?:FAILED|ERROR) (\S+)", output, re.MULTILINE)

    def run(self, mutant: Any, deselect: Sequence[str] = ()) -> Outcome:
        path = self.repo / mutant.path
        original = path.read_text(encoding="utf-8")
        if original.count(mutant.original) != 1:
            raise SystemExit(
                f"mutation: mutant {mutant.id}: its snippet occurs "
                f"{original.count(mutant.original)} times in {mutant.path} (must be once); "
                "update tools/mutants.py"
            )
        path.write_text(original.replace(mutant.original, mutant.replacement), encoding="utf-8")
        started = time.perf_counter()
        left_out = [arg for test in deselect for arg in ("--deselect", test)]
        try:
            code, output = self.pytest(["-x", *mutant.tests, *left_out])
        finally:
            path.write_text(original, encoding="utf-8")
        seconds = time.perf_counter() - started
        return Outcome(mutant.id, code != 0, seconds, killer(output, code))

    def remove(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def killer(output: str, code: int) -> str:
    """The first failing test (or the error) in pytest's output."""
    if code == 0:
        return "-"
    match = re.search(r"^(FAILED|ERROR) (\S+)", output, re.MULTILINE)
    if match:
        return match.group(2)
    last = [line for line in output.splitlines() if line.strip()]
    return f"exit {code}: {last[-1] if last else 'no output'}"[:160]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", metavar="ID", help="run only this mutant")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    args = parser.parse_args(argv)
    registry = load_registry()
    mutants = list(registry.MUTANTS)
    if args.list:
        for m in mutants:
            print(f"{m.id:32} {m.path:32} {m.description}")
        return 0
    if args.only:
        try:
            mutants = [registry.mutant_named(i) for i in args.only]
        except KeyError as exc:
            print(f"mutation: {exc.args[0]}", file=sys.stderr)
            return 2
    sandbox = Sandbox()
    started = time.perf_counter()
    try:
        sandbox.check_imports()
        failing: dict[tuple[str, ...], list[str]] = {}
        for tests in dict.fromkeys(m.tests for m in mutants):
            failing[tests] = sandbox.baseline(tests)
            if failing[tests]:
                print(f"baseline: {len(failing[tests])} test(s) of {' '.join(tests)} fail "
                      f"without any mutant and are left out: {' '.join(failing[tests])}",
                      flush=True)
        outcomes = []
        for mutant in mutants:
            outcome = sandbox.run(mutant, failing[mutant.tests])
            outcomes.append(outcome)
            verdict = "killed" if outcome.killed else "SURVIVED"
            print(f"{outcome.mutant_id:32} {verdict:8} {outcome.seconds:7.1f} s  {outcome.by}",
                  flush=True)
    finally:
        if args.keep:
            print(f"copy kept at {sandbox.repo}")
        else:
            sandbox.remove()
    killed = [o for o in outcomes if o.killed]
    median = statistics.median(o.seconds for o in killed) if killed else float("nan")
    print(f"total {time.perf_counter() - started:.0f} s")
    print(f"killed {len(killed)}/{len(outcomes)} mutants; median time to kill {median:.1f} s")
    return 0 if len(killed) == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
