"""``windtunnel plot FILE --out PATH.png|.svg|.html [--engine oracle|spark|both] [--profiles a,b]``.

x is event time, y arrival (input items in stream order, labelled with the wall clock);
one panel per profile or engine, side by side. PNG and SVG need matplotlib (the ``plot``
extra); the HTML page is written without it and loads nothing from the network.
"""

from __future__ import annotations

from pathlib import Path

import click

from windtunnel.cli.errors import friendly
from windtunnel.cli.plotting.sources import arrivals, oracle_source, spark_source, under_profile
from windtunnel.cli.plotting.timeline import PanelSource, Timeline, build
from windtunnel.oracle.model.errors import InvalidInput
from windtunnel.oracle.model.extras import requires_extra
from windtunnel.oracle.profiles import PROFILES
from windtunnel.oracle.scenario import Scenario, load_scenario

FORMATS = (".png", ".svg", ".html")


def _size(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    width, _, height = text.lower().partition("x")
    if not (width.isdigit() and height.isdigit()) or not (
        100 <= int(width) <= 10000 and 100 <= int(height) <= 10000
    ):
        raise InvalidInput("--size", text, "must be WIDTHxHEIGHT in pixels, each 100..10000",
                           "write e.g. --size 1400x900")
    return int(width), int(height)


def _profiles(text: str | None, scenario: Scenario) -> list[str]:
    if text is None:
        return [scenario.profile.name]
    names = [n.strip() for n in text.split(",") if n.strip()]
    for name in names:
        if name not in PROFILES:
            raise InvalidInput("--profiles", name, f"is not a profile ({', '.join(PROFILES)})",
                               "name profiles from `windtunnel profiles`, comma-separated")
    if not names:
        raise InvalidInput("--profiles", text, "names no profile", "write e.g. tenzir,flink")
    return names


def timeline_for(scenario: Scenario, engine: str, profiles: list[str],
                 micro_batch: int = 1) -> Timeline:
    """The timeline of ``scenario``: a panel per profile (and engine)."""
    stream = arrivals(scenario)
    sources: list[PanelSource] = []
    for name in profiles:
        if engine in ("oracle", "both"):
            sources.append(oracle_source(scenario, name))
        if engine in ("spark", "both"):
            with requires_extra("spark", f"--engine {engine}"):
                from windtunnel.spark_impl.harness.replay import replay_scenario
            run = replay_scenario(under_profile(scenario, name), micro_batch=micro_batch)
            sources.append(spark_source(scenario, run.result.outputs, stream,
                                        f"{name} on Spark"))
    title = f"{scenario.name}: x = event time, y = arrival"
    return build(title, scenario.time_unit_ms, stream, sources)


@click.command("plot")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False),
              help="Picture to write: .png, .svg (need the plot extra) or .html (self-contained).")
@click.option("--engine", type=click.Choice(["oracle", "spark", "both"]), default="oracle",
              show_default=True, help="Who runs the scenario; both draws them side by side.")
@click.option("--profiles", default=None,
              help="Comma-separated profiles, one panel each (default: the scenario's).")
@click.option("--size", default=None, help="PNG/SVG size WIDTHxHEIGHT in pixels (default: fits).")
@click.option("--micro-batch", type=click.IntRange(min=1), default=1, show_default=True,
              help="Spark: lone events per micro-batch.")
@friendly
def plot_command(file: str, out: str, engine: str, profiles: str | None, size: str | None,
                 micro_batch: int) -> None:
    """Draw scenario FILE as a timeline: events by event time against arrival, windows as
    bars where they were emitted, drops with their reason, the clock or watermark line,
    idle gaps shaded; one panel per profile or engine."""
    suffix = Path(out).suffix.lower()
    if suffix not in FORMATS:
        raise InvalidInput("--out", out, f"must end in {', '.join(FORMATS)}",
                           "name the picture e.g. timeline.png")
    size_px = _size(size)
    if suffix != ".html":
        from windtunnel.cli.plotting.mpl import pyplot

        pyplot(f"--out {suffix}")  # fail before any run when matplotlib is missing
    scenario = load_scenario(file)
    timeline = timeline_for(scenario, engine, _profiles(profiles, scenario), micro_batch)
    if suffix == ".html":
        from windtunnel.cli.plotting.html import page

        data = page(timeline).encode("utf-8")
    else:
        from windtunnel.cli.plotting.mpl import render

        data = render(timeline, suffix[1:], size_px)
    try:
        Path(out).write_bytes(data)
    except OSError as exc:
        raise InvalidInput("--out", out, f"cannot be written ({exc.strerror})",
                           "give a writable path") from exc
    marks = sum(len(p.events) for p in timeline.panels)
    bars = sum(len(p.bars) for p in timeline.panels)
    click.echo(f"wrote {out} ({len(timeline.panels)} panel(s), {marks} event marks, "
               f"{bars} window bars)", err=True)
