"""The architecture as tests: imports point one way and no module imports itself back.

Strings naming a module (``importlib.import_module("windtunnel...")``, entry points
``"windtunnel...:ATTR"``) count as imports: a lazy import is still a dependency.

    oracle  <-  simulator  <-  conformance  ->  spark_impl        cli -> all

Inside the oracle: ``model`` imports nothing else of the oracle; ``windows`` builds on the
model only; ``fast`` (the fast paths) on both; ``clauses`` and ``profiles`` build on the
model and the windows; the entry points sit on top.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("oracle", "simulator", "spark_impl", "conformance", "cli")

ALLOWED = {
    "oracle": {"oracle"},
    "simulator": {"oracle", "simulator"},
    "spark_impl": {"oracle", "spark_impl"},
    "conformance": {"oracle", "simulator", "conformance", "spark_impl"},
    "cli": set(PARTS),
}
"""Which parts each part may import (function-level imports included)."""

ORACLE_LAYERS = {
    "model": {"model"},
    "windows": {"model", "windows"},
    "fast": {"model", "windows", "fast"},
}
"""Oracle folders with a fixed base: what they may import inside the oracle."""


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["windtunnel", *parts])


def modules() -> Iterator[tuple[str, Path]]:
    for part in PARTS:
        for path in sorted((ROOT / part).rglob("*.py")):
            yield module_name(path), path


MODULE_STRING = re.compile(r"windtunnel(\.[A-Za-z_][A-Za-z0-9_]*)+(:[A-Za-z_][A-Za-z0-9_.]*)?")
"""A string naming a module (``importlib.import_module``, entry-point style ``module:attr``)."""


@functools.cache
def tree(path: Path) -> ast.Module:
    """``path`` parsed (once per test process)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def imports_of(path: Path) -> set[str]:
    """Every windtunnel module ``path`` imports, at any level of nesting, counting strings
    that name a module (what ``importlib.import_module`` would load) as imports."""
    found: set[str] = set()
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if MODULE_STRING.fullmatch(node.value):
                found.add(node.value.partition(":")[0])
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("windtunnel."))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("windtunnel"):
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


@functools.cache
def graph() -> dict[str, set[str]]:
    """Every module's imports (read once, when a test first asks)."""
    return {name: imports_of(path) for name, path in modules()}


def resolved(name: str) -> str | None:
    """``name`` as a module of the graph (``pkg.module.attr`` -> ``pkg.module``)."""
    while name and name not in graph():
        name = name.rpartition(".")[0]
    return name or None


@functools.cache
def edges() -> dict[str, set[str]]:
    """Every module's imports of other modules of the graph."""
    return {
        source: {target for target in map(resolved, targets) if target and target != source}
        for source, targets in graph().items()
    }


def test_every_part_is_scanned() -> None:
    assert {name.split(".")[1] for name in graph()} == set(PARTS)
    assert "windtunnel.oracle.model.stream" in graph()


@pytest.mark.parametrize("part", PARTS)
def test_parts_import_in_one_direction(part: str) -> None:
    wrong = sorted(
        f"{source} imports {target}"
        for source, targets in edges().items()
        if source.split(".")[1] == part
        for target in targets
        if target.split(".")[1] not in ALLOWED[part]
    )
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("layer", sorted(ORACLE_LAYERS))
def test_oracle_layers(layer: str) -> None:
    prefix = f"windtunnel.oracle.{layer}"
    allowed = {f"windtunnel.oracle.{base}" for base in ORACLE_LAYERS[layer]}
    wrong = sorted(
        f"{source} imports {target}"
        for source, targets in edges().items()
        if source.startswith(prefix)
        for target in targets
        if not any(target == a or target.startswith(a + ".") for a in allowed)
    )
    assert not wrong, "\n".join(wrong)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles() -> None:
    """Package ``__init__`` re-exports are left out: a package importing its own modules is
    how it exports them, not a cycle between concerns."""
    packages = {name for name, path in modules() if path.name == "__init__.py"}
    outside = {
        source: {t for t in targets if not (source in packages and t.startswith(source + "."))}
        for source, targets in edges().items()
    }
    assert cycles(outside) == []


def test_module_strings_count_as_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        'import importlib\nimportlib.import_module("windtunnel.spark_impl.jobs.job")\n'
        'ENTRY = "windtunnel.conformance.targets.spark:EXACT"\nNOTE = "see windtunnel.cli docs"\n'
    )
    assert imports_of(module) == {"windtunnel.spark_impl.jobs.job", "windtunnel.conformance.targets.spark"}


def test_the_cycle_test_finds_cycles() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def private_imports(path: Path) -> list[str]:
    """``from windtunnel.x import _name`` and ``module._name`` on an imported windtunnel module."""
    found: list[str] = []
    aliases: set[str] = set()
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("windtunnel"):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{node.module}.{alias.name}")
                aliases.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("windtunnel") and alias.asname:
                    aliases.add(alias.asname)
    for node in ast.walk(tree(path)):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_no_private_names_cross_modules() -> None:
    # a module's _names are its own: another module that needs one gets a public name
    offenders = {name: found for name, path in modules() if (found := private_imports(path))}
    assert offenders == {}


def test_the_private_name_check_sees_both_forms(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("from windtunnel.oracle.model import spec\nfrom windtunnel.oracle.x import _y\n"
                    "spec._positive(1)\n")
    assert private_imports(path) == ["windtunnel.oracle.x._y", "spec._positive"]


SPARK_LAYERS = {
    "general": set(), "stock": set(), "jvm": set(), "production": {"jvm"},
    "jobs": {"production", "general", "stock"},
}
"""The spark_impl folders each folder may import (besides the shared top-level modules);
``harness`` may import every folder and none may import it."""


@pytest.mark.parametrize("layer", sorted(SPARK_LAYERS))
def test_spark_impl_folders_import_in_one_direction(layer: str) -> None:
    folders = {*SPARK_LAYERS, "harness"}
    prefix = f"windtunnel.spark_impl.{layer}"
    wrong = {
        (name, target)
        for name, path in modules() if name == prefix or name.startswith(prefix + ".")
        for target in imports_of(path)
        if (other := target.removeprefix("windtunnel.spark_impl.").split(".")[0]) in folders
        and target.startswith("windtunnel.spark_impl.")
        and other != layer and other not in SPARK_LAYERS[layer]
    }
    assert wrong == set()
