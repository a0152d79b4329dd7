"""``windtunnel profiles``: list the profiles and their rules, each with its source."""

from __future__ import annotations

import json
import textwrap

import click

from windtunnel.cli.errors import friendly
from windtunnel.cli.output.table import (
    PLAIN_WIDTH,
    Table,
    csv_text,
    echo_table,
    is_terminal,
    plain,
)
from windtunnel.oracle.model.rules import RULE_DOCS, RULE_OWNERS, RULE_VALUES
from windtunnel.oracle.profiles import PROFILES, Profile, profile_named


def listed_rules(profile: Profile) -> dict[str, str]:
    """The profile's rules and values, without those only another profile reads."""
    return {
        name: value for name, value in profile.rules.as_dict().items()
        if RULE_OWNERS.get(name, profile.name) == profile.name
    }


def profile_json(profile: Profile) -> dict[str, object]:
    """A profile as plain data: name, summary, kinds, unsupported options, rules with sources."""
    return {
        "name": profile.name,
        "summary": profile.summary,
        "kinds": list(profile.kinds),
        "unsupported": dict(profile.unsupported),
        "rules": {
            name: {"value": value, "source": profile.source(name)}
            for name, value in listed_rules(profile).items()
        },
    }


def profile_heading(profile: Profile) -> str:
    """The profile's name and summary, its window kinds and unsupported options (each
    wrapped to :data:`PLAIN_WIDTH` columns)."""
    lines = [f"{profile.name}: {profile.summary}"]
    if profile.kinds:
        lines.append(f"  kinds: {', '.join(profile.kinds)}")
    for option, why in profile.unsupported.items():
        lines.append(f"  unsupported: {option} ({why})")
    wrapped = []
    for line in lines:
        indent = " " * (len(line) - len(line.lstrip()) + 4)
        wrapped += textwrap.wrap(line, PLAIN_WIDTH, subsequent_indent=indent, break_on_hyphens=False)
    return "\n".join(wrapped) + "\n"


def rules_table(profile: Profile, verbose: bool) -> Table:
    """Every rule's value and (``verbose``) its source; the source wraps."""
    rows = tuple(
        (name, value, profile.source(name) if verbose else "")
        for name, value in listed_rules(profile).items()
    )
    return Table(("rule", "value", "source"), rows, wrap=(2,))


def profile_text(profile: Profile, verbose: bool) -> str:
    """The heading, then the rules as a plain table indented by two spaces."""
    table = plain(rules_table(profile, verbose), width=PLAIN_WIDTH - 2)
    return profile_heading(profile) + "".join(f"  {line}".rstrip() + "\n" for line in table.splitlines())


def profiles_csv(profiles: list[Profile]) -> str:
    """One row per profile and rule: profile, rule, value, source."""
    rows = tuple(
        (p.name, name, value, p.source(name))
        for p in profiles
        for name, value in listed_rules(p).items()
    )
    return csv_text(Table(("profile", "rule", "value", "source"), rows))


@click.command("profiles")
@click.argument("names", nargs=-1)
@click.option("--sources/--no-sources", default=True, show_default=True, help="Show each rule's source.")
@click.option("--rules", "explain_rules", is_flag=True, help="Also explain every rule and its values.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv"]),
    default="table",
    show_default=True,
    help="table: rich on a terminal, plain when piped; csv: profile, rule, value, source.",
)
@friendly
def profiles_command(names: tuple[str, ...], sources: bool, explain_rules: bool, fmt: str) -> None:
    """List the profiles (or only NAMES) with every rule's value and where it comes from.

    Any rule can be overridden in a scenario's ``rules:`` block.
    """
    chosen = [profile_named(n) for n in names] if names else list(PROFILES.values())
    if fmt == "json":
        data: dict[str, object] = {"profiles": [profile_json(p) for p in chosen]}
        if explain_rules:
            data["rules"] = {
                name: {"values": list(values), "meaning": RULE_DOCS.get(name, "")}
                for name, values in RULE_VALUES.items()
            }
        click.echo(json.dumps(data, indent=2))
        return
    if fmt == "csv":
        click.echo(profiles_csv(chosen), nl=False)
        return
    for index, profile in enumerate(chosen):
        if index:
            click.echo()
        if is_terminal():
            click.echo(profile_heading(profile), nl=False)
            echo_table(rules_table(profile, sources))
        else:
            click.echo(profile_text(profile, sources), nl=False)
    if explain_rules:
        click.echo("\nrules (override any of them in a scenario's rules: block):")
        for name, values in RULE_VALUES.items():
            click.echo(f"  {name} ({' | '.join(values)}): {RULE_DOCS.get(name, '')}")
