"""A :class:`~windtunnel.cli.plotting.timeline.Timeline` drawn with matplotlib (PNG, SVG).

Every mark carries a ``gid`` (an ``id`` in SVG): ``<panel>-event-<seq>-delivered`` or
``-dropped``, ``<panel>-window-<group>-<start_ms>-<end_ms>``, ``<panel>-emit-...``,
``<panel>-clock-<group>``; each panel's axes is ``panel-<name>``.
"""

from __future__ import annotations

import io
from typing import Any

from windtunnel.cli.plotting.style import (
    DROP_COLOUR,
    IDLE_COLOUR,
    STAGE_DROP_COLOUR,
    drop_colour,
    group_colour,
    reason_colour,
)
from windtunnel.cli.plotting.timeline import LANE, Panel, Timeline, group_label, slug
from windtunnel.oracle.model.errors import MissingExtra
from windtunnel.oracle.model.timefmt import time_text

DPI = 100


def pyplot(purpose: str) -> Any:
    """matplotlib's pyplot on the Agg backend; :class:`MissingExtra` naming the ``plot``
    extra when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as exc:
        missing = (exc.name or "matplotlib").partition(".")[0]
        raise MissingExtra("plot", missing, purpose) from exc
    matplotlib.rcParams["svg.hashsalt"] = "windtunnel"
    matplotlib.rcParams["svg.fonttype"] = "none"
    return plt


def auto_size(timeline: Timeline) -> tuple[int, int]:
    """Width and height in pixels fitting the panels and rows."""
    width = max(900, 140 + 440 * len(timeline.panels))
    height = int(min(4000, max(640, 260 + 26 * timeline.bottom)))
    return width, height


def render(timeline: Timeline, fmt: str, size_px: tuple[int, int] | None = None) -> bytes:
    """The picture as ``png`` or ``svg`` bytes, ``size_px`` (width, height) or auto-sized."""
    plt = pyplot(f"--out .{fmt}")
    width, height = size_px or auto_size(timeline)
    fig, axes = plt.subplots(
        1, len(timeline.panels), figsize=(width / DPI, height / DPI), dpi=DPI,
        sharex=True, sharey=True, squeeze=False, layout="constrained",
    )
    try:
        for k, (ax, panel) in enumerate(zip(axes[0], timeline.panels, strict=True)):
            _draw_panel(ax, panel, timeline, first=k == 0)
        fig.suptitle(timeline.title, fontsize=11)
        fig.legend(handles=_legend(plt), loc="outside lower center", ncol=4, fontsize=7,
                   frameon=False)
        out = io.BytesIO()
        metadata = {"Creator": "windtunnel", "Date": None, "Type": None, "Format": None} \
            if fmt == "svg" else {"Software": "windtunnel"}
        fig.savefig(out, format=fmt, dpi=DPI, metadata=metadata)
        return out.getvalue()
    finally:
        plt.close(fig)


def _xlimits(timeline: Timeline) -> tuple[float, float]:
    xs: list[int] = []
    for panel in timeline.panels:
        xs += [e.x_ms for e in panel.events if e.x_ms is not None]
        xs += [b.start_ms for b in panel.bars] + [b.end_ms for b in panel.bars]
    lo, hi = (min(xs), max(xs)) if xs else (0, 1)
    pad = max(1.0, (hi - lo) * 0.06)
    labelled = any(p.bars for p in timeline.panels)
    return lo - pad, hi + pad + (max(1.0, (hi - lo) * 0.6) if labelled else 0)


def _draw_panel(ax: Any, panel: Panel, timeline: Timeline, *, first: bool) -> None:
    prefix = slug(panel.name)
    ax.set_gid(f"panel-{prefix}")
    lo, hi = _xlimits(timeline)
    for row in timeline.rows:
        if row.idle:
            ax.axhspan(row.y - 0.45, row.y + 0.45, color=IDLE_COLOUR, zorder=0,
                       gid=f"{prefix}-idle-{row.index}")
    for bar in panel.bars:
        colour = group_colour(timeline.groups, bar.group)
        lost = bar.reason is None
        ax.barh(
            bar.y, max(bar.end_ms - bar.start_ms, (hi - lo) * 0.004), left=bar.start_ms, height=LANE * 0.75,
            color="none" if lost else colour, alpha=1.0 if lost else 0.45,
            edgecolor=colour, linestyle="--" if lost else "-", linewidth=0.8,
            hatch="//" if bar.partial else None, gid=bar.gid, zorder=2,
        )
        if not lost:
            ax.plot([bar.end_ms], [bar.y], marker="D", markersize=5, linestyle="none",
                    color=reason_colour(bar.reason), gid=bar.gid.replace("-window-", "-emit-", 1),
                    zorder=4)
        ax.text(bar.end_ms + (hi - lo) * 0.018, bar.y,
                f"{bar.label} ({bar.reason})" if bar.reason else bar.label,
                fontsize=5.5, va="center", clip_on=True, color="#333333", zorder=5)
    for group, points in panel.clocks:
        colour = "#000000" if group is None else group_colour(timeline.groups, group)
        ax.plot([p[0] for p in points], [p[1] for p in points], linestyle="--", linewidth=1.1,
                color=colour, alpha=0.8, gid=f"{prefix}-clock-{slug(group) or 'stream'}", zorder=3)
    for ring in panel.rings:
        if ring.x_ms is not None:
            ax.plot([ring.x_ms], [ring.y], marker="o", markersize=11, markerfacecolor="none",
                    markeredgecolor="#000000", linestyle="none", gid=ring.gid, zorder=4)
    for event in panel.events:
        x = lo if event.x_ms is None else event.x_ms
        if event.drop is None:
            ax.plot([x], [event.y], marker="o", markersize=6, linestyle="none",
                    color=group_colour(timeline.groups, event.group), gid=event.gid, zorder=6)
        else:
            ax.plot([x], [event.y], marker="X", markersize=8, linestyle="none",
                    color=drop_colour(event.drop), gid=event.gid, zorder=6)
            ax.text(x + (hi - lo) * 0.01, event.y - 0.25, f"#{event.seq} {event.drop}",
                    fontsize=7, color=drop_colour(event.drop), zorder=7)
    ax.set_xlim(lo, hi)
    ax.set_ylim(timeline.bottom + 0.3, -0.8)
    ax.grid(axis="x", color="#dddddd", linewidth=0.5)
    ax.xaxis.set_major_locator(_locator(hi - lo))
    ax.xaxis.set_major_formatter(_formatter(1 if timeline.x_is_seq else timeline.unit_ms))
    ax.tick_params(axis="x", labelsize=7, labelrotation=30)
    title = f"{panel.name} ({panel.clock_name})"
    if panel.note:
        title += f"\n{panel.note}"
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("event seq" if timeline.x_is_seq else "event time", fontsize=8)
    if first:
        step = max(1, len(timeline.rows) // 50)
        rows = timeline.rows[::step]
        ax.set_yticks([r.y for r in rows], [r.label for r in rows], fontsize=7)
        ax.set_ylabel("arrival: input items in stream order (wall clock)", fontsize=8)
    for label in ax.get_yticklabels():
        label.set_fontsize(7)
    _group_key(ax, panel, timeline)


def _group_key(ax: Any, panel: Panel, timeline: Timeline) -> None:
    shown = [g for g in timeline.groups if g is not None][:10]
    for k, group in enumerate(shown):
        ax.text(0.99, 0.01 + 0.035 * k, group_label(group), transform=ax.transAxes,
                ha="right", va="bottom", fontsize=7, color=group_colour(timeline.groups, group))


NICE_STEPS_MS = tuple(
    m * unit for unit in (1, 1000, 60_000, 3_600_000) for m in (1, 2, 5, 10, 15, 20, 30)
) + tuple(86_400_000 * d for d in (1, 2, 7, 14, 30, 91, 365))


def _locator(span: float) -> Any:
    """Ticks at multiples of a round duration (5s, 10min, 1h, ...), about 6-10 of them."""
    from matplotlib.ticker import MultipleLocator

    step = next((s for s in sorted(set(NICE_STEPS_MS)) if span / s <= 10), 365 * 86_400_000)
    return MultipleLocator(step)


def _formatter(unit_ms: int) -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda x, _pos: time_text(round(x), unit_ms))


def _legend(plt: Any) -> list[Any]:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    return [
        Line2D([], [], marker="o", linestyle="none", color="#1f77b4", label="delivered event (colour = group)"),
        Line2D([], [], marker="X", linestyle="none", color=DROP_COLOUR,
               label="dropped event (reason)"),
        Line2D([], [], marker="X", linestyle="none", color=STAGE_DROP_COLOUR,
               label="removed before the window (filtered, duplicate)"),
        Patch(facecolor="#1f77b4", alpha=0.45, label="window [start, end) in its emission row"),
        Patch(facecolor="none", edgecolor="#555555", linestyle="--", label="window never emitted"),
        Patch(facecolor="#1f77b4", alpha=0.45, hatch="//", label="partial (emitted before its close)"),
        Line2D([], [], marker="D", linestyle="none", color=reason_colour("close"),
               label="emitted: close"),
        Line2D([], [], marker="D", linestyle="none", color=reason_colour("idle_timeout"),
               label="emitted: idle_timeout"),
        Line2D([], [], marker="D", linestyle="none", color=reason_colour("end_of_input"),
               label="emitted: end_of_input"),
        Line2D([], [], marker="D", linestyle="none", color=reason_colour("other"),
               label="emitted: other reason"),
        Line2D([], [], linestyle="--", color="#000000", label="clock / watermark"),
        Line2D([], [], marker="o", markerfacecolor="none", markeredgecolor="#000000",
               linestyle="none", markersize=10, label="pass-through emission"),
        Patch(facecolor=IDLE_COLOUR, label="idle gap (wall clock moved)"),
    ]
