"""``windtunnel profiles``: list the profiles and their rules, each with its source."""

from __future__ import annotations

import json

import click

from windtunnel.cli.errors import friendly
from windtunnel.cli.format import render
from windtunnel.oracle.model.rules import RULE_DOCS, RULE_VALUES
from windtunnel.oracle.profiles import PROFILES, Profile, profile_named


def profile_json(profile: Profile) -> dict[str, object]:
    """A profile as plain data: name, summary, kinds, unsupported options, rules with sources."""
    return {
        "name": profile.name,
        "summary": profile.summary,
        "kinds": list(profile.kinds),
        "unsupported": dict(profile.unsupported),
        "rules": {
            name: {"value": value, "source": profile.source(name)}
            for name, value in profile.rules.as_dict().items()
        },
    }


def profile_text(profile: Profile, verbose: bool) -> str:
    lines = [f"{profile.name}: {profile.summary}"]
    if profile.kinds:
        lines.append(f"  kinds: {', '.join(profile.kinds)}")
    for option, why in profile.unsupported.items():
        lines.append(f"  unsupported: {option} ({why})")
    rows = [("rule", "value", "source")]
    for name, value in profile.rules.as_dict().items():
        rows.append((name, value, profile.source(name) if verbose else ""))
    table = render(rows)
    lines += ["  " + line for line in table.rstrip("\n").split("\n")]
    return "\n".join(lines) + "\n"


@click.command("profiles")
@click.argument("names", nargs=-1)
@click.option("--sources/--no-sources", default=True, show_default=True, help="Show each rule's source.")
@click.option("--rules", "explain_rules", is_flag=True, help="Also explain every rule and its values.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
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
    click.echo("\n".join(profile_text(p, sources) for p in chosen), nl=False)
    if explain_rules:
        click.echo("\nrules (override any of them in a scenario's rules: block):")
        for name, values in RULE_VALUES.items():
            click.echo(f"  {name} ({' | '.join(values)}): {RULE_DOCS.get(name, '')}")
