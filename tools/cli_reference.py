"""Print the CLI reference (Markdown) from the click command tree.

``python tools/cli_reference.py > docs/cli.md`` regenerates ``docs/cli.md``;
``tests/cli/test_cli_reference.py`` fails when the file and this output differ, so the
reference cannot drift from the commands. Every command, argument and option is listed
with its help text and default; nothing depends on the terminal's width.
"""

from __future__ import annotations

import inspect
import sys

import click

from windtunnel.cli.main import cli

HEADER = """\
# CLI reference

Every `windtunnel` command with its arguments and options, generated from the click
commands by `python tools/cli_reference.py > docs/cli.md` (do not edit by hand:
`tests/cli/test_cli_reference.py` fails when this page and the commands differ).
`windtunnel COMMAND --help` prints the same on the terminal. Exit codes everywhere:
0 done (and any expectation held), 1 an expectation, comparison or check failed, 2
invalid input or usage, or a failure of Spark, Kafka or the job under check (one line on
stderr naming the cause; `windtunnel --debug COMMAND` shows the traceback and Spark's
log), 130 interrupted by Ctrl-C (running Spark queries and the session are stopped
first; one line), 143 terminated by SIGTERM. Long commands (`check`, `run`, `generate`,
`replay --engine spark`) show progress on stderr: a bar on a terminal, a line per step
with rate and ETA when piped; stdout holds only the result.
"""


def _clean(text: str | None) -> str:
    """A help text as Markdown: dedented, click's ``\\b`` markers and ``\\f`` tail removed."""
    if not text:
        return ""
    text = inspect.cleandoc(text.split("\f", 1)[0])
    return "\n".join(line for line in text.splitlines() if line.strip() != "\b").strip()


UNSET = getattr(click.core, "UNSET", None)  # click >= 8.3 marks "no default" with a sentinel


def _default(param: click.Parameter, ctx: click.Context) -> str | None:
    """The default as the command shows it, or None when there is nothing worth showing."""
    if isinstance(param, click.Option) and param.is_flag and not param.secondary_opts:
        return None
    default = param.get_default(ctx, call=False)
    if default is None or default is UNSET or callable(default):
        return None
    if isinstance(default, tuple | list):
        return None if not default else ", ".join(str(value) for value in default)
    if isinstance(param, click.Option) and param.secondary_opts and isinstance(default, bool):
        return param.opts[0] if default else param.secondary_opts[0]
    return str(default)


def _option_line(param: click.Option, ctx: click.Context) -> str:
    names = " / ".join(", ".join(opts) for opts in (param.opts, param.secondary_opts) if opts)
    metavar = "" if param.is_flag else f" {param.make_metavar(ctx)}"
    parts = [f"- `{names}{metavar}`"]
    notes = []
    if param.required:
        notes.append("required")
    if param.multiple:
        notes.append("repeatable")
    default = _default(param, ctx)
    if default is not None:
        notes.append(f"default: `{default}`")
    if notes:
        parts.append(f" ({'; '.join(notes)})")
    help_text = _clean(param.help)
    if help_text:
        parts.append(f": {' '.join(help_text.split())}")
    return "".join(parts)


def _argument_line(param: click.Argument, ctx: click.Context) -> str:
    notes = ["required" if param.required else "optional"]
    if param.nargs == -1:
        notes.append("any number")
    if isinstance(param.type, click.Choice):
        notes.insert(0, "one of " + ", ".join(f"`{choice}`" for choice in param.type.choices))
    else:
        notes.insert(0, param.type.name)
    name = (param.name or "").upper()
    return f"- `{name}` ({'; '.join(notes)})"


def _section(command: click.Command, path: str, parent: click.Context | None) -> list[str]:
    ctx = click.Context(
        command, info_name=path.split(" ")[-1], parent=parent, **command.context_settings
    )
    usage = " ".join(command.collect_usage_pieces(ctx))
    lines = [f"## `{path}`", "", f"Usage: `{path} {usage}`", ""]
    help_text = _clean(command.help)
    if help_text:
        lines += [help_text, ""]
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    if arguments:
        lines += ["Arguments:", "", *(_argument_line(p, ctx) for p in arguments), ""]
    options = [p for p in command.get_params(ctx) if isinstance(p, click.Option)]
    if options:
        lines += ["Options:", "", *(_option_line(p, ctx) for p in options), ""]
    return lines


def commands(group: click.Group = cli) -> list[tuple[str, click.Command]]:
    """Every command below ``group`` with its full name (``windtunnel replay``), sorted."""
    ctx = click.Context(group, info_name="windtunnel", **group.context_settings)
    found: list[tuple[str, click.Command]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is not None and not command.hidden:
            found.append((f"windtunnel {name}", command))
    return found


def reference() -> str:
    """The whole reference page."""
    root = click.Context(cli, info_name="windtunnel", **cli.context_settings)
    lines = [HEADER, "Commands: " + ", ".join(
        f"[`{name.split(' ')[-1]}`](#{name.replace(' ', '-')})" for name, _ in commands()
    ) + ".", ""]
    lines += _section(cli, "windtunnel", None)
    for path, command in commands():
        lines += _section(command, path, root)
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.stdout.write(reference())
