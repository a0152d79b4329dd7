"""A :class:`~windtunnel.cli.plotting.timeline.Timeline` as one self-contained HTML page.

The page holds an inline SVG drawn here (no matplotlib needed) and a few lines of inline
JavaScript: the mouse wheel zooms (the SVG ``viewBox``), dragging pans, a double click
resets. Nothing is loaded from the network: no scripts, styles, fonts or images by URL.
Hovering a mark shows what it is (``<title>``). Ids are those of the matplotlib SVG.
"""

from __future__ import annotations

from html import escape
from typing import Any

from windtunnel.cli.plotting.style import (
    IDLE_COLOUR,
    LEGEND,
    drop_colour,
    group_colour,
    reason_colour,
)
from windtunnel.cli.plotting.timeline import LANE, Panel, Timeline, group_label, slug
from windtunnel.oracle.model.timefmt import time_text

LEFT = 170
PANEL_W = 470
GAP = 40
TOP = 70
ROW_H = 26
BOTTOM = 60

SCRIPT = """
(function () {
  var svg = document.getElementById('timeline');
  var box0 = svg.getAttribute('viewBox').split(' ').map(Number);
  var box = box0.slice(), drag = null;
  function set() { svg.setAttribute('viewBox', box.join(' ')); }
  function point(e) {
    var r = svg.getBoundingClientRect();
    return [box[0] + (e.clientX - r.left) / r.width * box[2],
            box[1] + (e.clientY - r.top) / r.height * box[3]];
  }
  svg.addEventListener('wheel', function (e) {
    e.preventDefault();
    var p = point(e), k = e.deltaY < 0 ? 0.8 : 1.25;
    box = [p[0] - (p[0] - box[0]) * k, p[1] - (p[1] - box[1]) * k, box[2] * k, box[3] * k];
    set();
  }, {passive: false});
  svg.addEventListener('mousedown', function (e) { drag = point(e); });
  window.addEventListener('mouseup', function () { drag = null; });
  svg.addEventListener('mousemove', function (e) {
    if (!drag) { return; }
    var p = point(e);
    box[0] -= p[0] - drag[0]; box[1] -= p[1] - drag[1];
    set();
  });
  svg.addEventListener('dblclick', function () { box = box0.slice(); set(); });
})();
"""


def _attrs(**values: Any) -> str:
    return " ".join(f'{k.rstrip("_").replace("_", "-")}="{escape(str(v))}"' for k, v in values.items())


class _Canvas:
    """Maps one panel's data (x ms, y rows) to SVG pixels and collects elements."""

    def __init__(self, timeline: Timeline, index: int, lo: float, hi: float) -> None:
        self.left = LEFT + index * (PANEL_W + GAP)
        self.lo, self.hi = lo, hi
        self.parts: list[str] = []

    def x(self, ms: float) -> float:
        return round(self.left + (ms - self.lo) / (self.hi - self.lo) * PANEL_W, 2)

    @staticmethod
    def y(row: float) -> float:
        return round(TOP + (row + 0.8) * ROW_H, 2)

    def add(self, tag: str, title: str = "", text: str = "", **attrs: Any) -> None:
        inner = (f"<title>{escape(title)}</title>" if title else "") + escape(text)
        self.parts.append(f"<{tag} {_attrs(**attrs)}>{inner}</{tag}>")


def _limits(timeline: Timeline) -> tuple[float, float]:
    xs: list[int] = []
    for panel in timeline.panels:
        xs += [e.x_ms for e in panel.events if e.x_ms is not None]
        xs += [b.start_ms for b in panel.bars] + [b.end_ms for b in panel.bars]
    lo, hi = (min(xs), max(xs)) if xs else (0, 1)
    pad = max(1.0, (hi - lo) * 0.06)
    return lo - pad, hi + pad + (max(1.0, (hi - lo) * 0.45) if any(p.bars for p in timeline.panels) else 0)


def _time(timeline: Timeline, ms: int | None) -> str:
    return str(ms) if timeline.x_is_seq else time_text(ms, timeline.unit_ms)


def _panel(timeline: Timeline, panel: Panel, index: int, lo: float, hi: float) -> str:
    c = _Canvas(timeline, index, lo, hi)
    prefix = slug(panel.name)
    bottom = c.y(timeline.bottom)
    c.add("rect", x=c.left, y=TOP, width=PANEL_W, height=bottom - TOP, fill="none", stroke="#999")
    for row in timeline.rows:
        if row.idle:
            c.add("rect", title=row.label, id=f"{prefix}-idle-{row.index}", x=c.left,
                  y=c.y(row.y - 0.45), width=PANEL_W, height=0.9 * ROW_H, fill=IDLE_COLOUR)
        if index == 0:
            c.add("text", text=row.label, x=LEFT - 8, y=c.y(row.y) + 4, text_anchor="end",
                  font_size=11)
    for bar in panel.bars:
        colour = group_colour(timeline.groups, bar.group)
        width = max(c.x(bar.end_ms) - c.x(bar.start_ms), 2)
        lost = bar.reason is None
        what = f"{bar.label} ({bar.reason}{', partial' if bar.partial else ''})" if not lost \
            else bar.label
        c.add("rect", title=f"{group_label(bar.group)}: {what}", id=bar.gid, x=c.x(bar.start_ms),
              y=c.y(bar.y) - LANE * ROW_H * 0.37, width=width, height=LANE * ROW_H * 0.75,
              fill="none" if lost else colour, fill_opacity=0.45, stroke=colour,
              stroke_dasharray="4 2" if lost or bar.partial else "none")
        if not lost:
            x, y = c.x(bar.end_ms), c.y(bar.y)
            c.add("path", title=what, id=bar.gid.replace("-window-", "-emit-", 1),
                  d=f"M{x} {y - 5}L{x + 5} {y}L{x} {y + 5}L{x - 5} {y}Z",
                  fill=reason_colour(bar.reason))
        c.add("text", text=what, x=c.x(bar.end_ms) + 7, y=c.y(bar.y) + 3, font_size=8,
              fill="#333")
    for group, points in panel.clocks:
        path = "".join(f"{'M' if k == 0 else 'L'}{c.x(px)} {c.y(py)}" for k, (px, py) in enumerate(points))
        colour = "#000" if group is None else group_colour(timeline.groups, group)
        name = panel.clock_name + ("" if group is None else f" of {group_label(group)}")
        c.add("path", title=name, id=f"{prefix}-clock-{slug(group) or 'stream'}", d=path,
              fill="none", stroke=colour, stroke_dasharray="5 3", stroke_width=1.3)
    for ring in panel.rings:
        if ring.x_ms is not None:
            c.add("circle", title=f"#{ring.seq} emitted as it arrived", id=ring.gid,
                  cx=c.x(ring.x_ms), cy=c.y(ring.y), r=8, fill="none", stroke="#000")
    for event in panel.events:
        x, y = c.x(lo if event.x_ms is None else event.x_ms), c.y(event.y)
        head = f"#{event.seq} at {_time(timeline, event.x_ms)} ({group_label(event.group)})"
        if event.drop is None:
            c.add("circle", title=f"{head}: delivered", id=event.gid, cx=x, cy=y, r=5,
                  fill=group_colour(timeline.groups, event.group))
        else:
            c.add("path", title=f"{head}: dropped, {event.drop}: {event.detail}", id=event.gid,
                  d=f"M{x - 5} {y - 5}L{x + 5} {y + 5}M{x - 5} {y + 5}L{x + 5} {y - 5}",
                  stroke=drop_colour(event.drop), stroke_width=3)
            c.add("text", text=f"#{event.seq} {event.drop}", x=x + 8, y=y - 6, font_size=10,
                  fill=drop_colour(event.drop))
    for k in range(6):
        ms = lo + (hi - lo) * k / 5
        c.add("text", text=_time(timeline, round(ms)), x=c.x(ms), y=bottom + 16,
              text_anchor="middle", font_size=10)
    title = f"{panel.name} ({panel.clock_name})" + (f": {panel.note}" if panel.note else "")
    c.add("text", text=title, x=c.left + PANEL_W / 2, y=TOP - 10, text_anchor="middle",
          font_size=13)
    return f'<g id="panel-{prefix}">' + "".join(c.parts) + "</g>"


def svg(timeline: Timeline) -> str:
    """The timeline as an SVG element (ids as in the matplotlib SVG)."""
    lo, hi = _limits(timeline)
    width = LEFT + len(timeline.panels) * (PANEL_W + GAP)
    height = round(_Canvas.y(timeline.bottom) + BOTTOM)
    body = "".join(_panel(timeline, p, k, lo, hi) for k, p in enumerate(timeline.panels))
    head = (f'<text x="{width / 2}" y="28" text-anchor="middle" font-size="16">'
            f"{escape(timeline.title)}</text>")
    axis = "event seq" if timeline.x_is_seq else "event time"
    foot = (f'<text x="{width / 2}" y="{height - 20}" text-anchor="middle" font-size="12">'
            f"x: {axis}; y: input items in stream order</text>")
    return (f'<svg id="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
            f'width="100%" font-family="sans-serif">{head}{body}{foot}</svg>')


def page(timeline: Timeline) -> str:
    """The self-contained HTML page."""
    legend = "".join(f"<li>{escape(text)}</li>" for text, _ in LEGEND)
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        f"<title>{escape(timeline.title)}</title>"
        "<style>body{font-family:sans-serif;margin:1em}svg{border:1px solid #ccc;"
        "cursor:grab;user-select:none}</style></head><body>"
        f"<p>Wheel: zoom; drag: pan; double click: reset. Hover a mark for details.</p>"
        f"{svg(timeline)}<ul>{legend}</ul><script>{SCRIPT}</script></body></html>\n"
    )
