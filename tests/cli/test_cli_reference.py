"""docs/cli.md is the generator's output, and names every command, argument and option."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import click
import pytest

from windtunnel.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "cli.md"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "windtunnel_cli_reference", ROOT / "tools" / "cli_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = _generator()


def _sections(text: str) -> dict[str, str]:
    """The page's sections by heading (``windtunnel replay``), each with its body."""
    parts = re.split(r"^## `([^`]+)`$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _tree() -> list[tuple[str, click.Command]]:
    return [("windtunnel", cli), *GENERATOR.commands()]


def test_page_is_the_generators_output() -> None:
    assert PAGE.read_text(encoding="utf-8") == GENERATOR.reference(), (
        "docs/cli.md is out of date: run `python tools/cli_reference.py > docs/cli.md`"
    )


def test_every_command_of_the_group_is_listed() -> None:
    names = {path for path, _ in GENERATOR.commands()}
    assert names == {f"windtunnel {name}" for name in cli.commands}
    assert {"windtunnel replay", "windtunnel check", "windtunnel run"} <= names


@pytest.mark.parametrize("path,command", _tree(), ids=[path for path, _ in _tree()])
def test_every_argument_and_option_is_in_its_section(path: str, command: click.Command) -> None:
    sections = _sections(PAGE.read_text(encoding="utf-8"))
    assert path in sections, f"docs/cli.md has no section for {path}"
    body = sections[path]
    for param in command.params:
        if isinstance(param, click.Argument):
            assert f"`{(param.name or '').upper()}`" in body, f"{path}: argument {param.name}"
            continue
        for name in (*param.opts, *param.secondary_opts):
            assert re.search(rf"[`, ]{re.escape(name)}[` ,]", body), f"{path}: option {name}"
        if isinstance(param, click.Option) and param.help:
            first_words = " ".join(param.help.split()[:4])
            assert first_words in body, f"{path}: help of {param.opts[0]}"
    assert "-h, --help" in body


def test_defaults_are_shown() -> None:
    sections = _sections(GENERATOR.reference())
    assert "`--engine [oracle|spark|both]` (default: `oracle`)" in sections["windtunnel replay"]
    assert "(default: `windtunnel-counterexamples`)" in sections["windtunnel check"]
    assert "(required)" in sections["windtunnel plot"]
