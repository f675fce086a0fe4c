"""Chart layouts with no Django: data in, a `Chart` of positioned marks out, drawn by
`templates/charts/_chart.html` as inline SVG (no JavaScript, so the strict CSP never gets in the way).

Every figure keeps its numbers in the marks' `title`s (tooltips) and the pages print the same data as a
table next to the chart, so the data stays readable without the picture.
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass, field
from typing import Sequence

from charts.geometry import LinearScale, band_positions, extent, line_path, nice_domain, ticks_with_labels

WIDTH, HEIGHT = 640, 280
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 58, 20, 16, 46


@dataclass
class Mark:
    """One SVG shape. kind: rect (x, y, w, h), circle (x, y, r), line (x, y, x2, y2), path (d), text (x, y, text)."""

    kind: str
    cls: str = ""
    x: float = 0.0
    y: float = 0.0
    w: float = 0.0
    h: float = 0.0
    x2: float = 0.0
    y2: float = 0.0
    r: float = 0.0
    d: str = ""
    text: str = ""
    anchor: str = "start"
    title: str = ""
    href: str = ""
    fill: str = ""  # an explicit colour (module colours); else the class's colour from charts.css


@dataclass
class Tick:
    pos: float
    label: str


@dataclass
class LegendItem:
    label: str
    cls: str = ""
    fill: str = ""


@dataclass
class Chart:
    title: str
    desc: str
    width: int = WIDTH
    height: int = HEIGHT
    left: float = MARGIN_LEFT
    top: float = MARGIN_TOP
    right: float = WIDTH - MARGIN_RIGHT
    bottom: float = HEIGHT - MARGIN_BOTTOM
    x_ticks: list[Tick] = field(default_factory=list)
    y_ticks: list[Tick] = field(default_factory=list)
    x_label: str = ""
    y_label: str = ""
    marks: list[Mark] = field(default_factory=list)
    legend: list[LegendItem] = field(default_factory=list)
    empty: bool = False  # no data: the template says so instead of drawing axes

    @property
    def interactive(self) -> bool:
        """Marks that are links: the SVG is then a group of links, not one image, so they stay focusable."""
        return any(m.href for m in self.marks)

    @property
    def plot_width(self) -> float:
        return self.right - self.left

    @property
    def plot_height(self) -> float:
        return self.bottom - self.top

    @property
    def x_label_y(self) -> float:
        return self.height - 8

    @property
    def y_label_x(self) -> float:
        return 14

    @property
    def mid_y(self) -> float:
        return (self.top + self.bottom) / 2

    @property
    def mid_x(self) -> float:
        return (self.left + self.right) / 2


def _pct(v: float) -> str:
    return f"{v * 100:.1f}%"


def _frame(title: str, desc: str, width: int = WIDTH, height: int = HEIGHT, left: float = MARGIN_LEFT, bottom_margin: float = MARGIN_BOTTOM) -> Chart:
    return Chart(title=title, desc=desc, width=width, height=height, left=left, right=width - MARGIN_RIGHT, bottom=height - bottom_margin)


def _y_axis(chart: Chart, lo: float, hi: float, *, percent: bool = False, include_zero: bool = True, count: int = 5, integer: bool = False) -> LinearScale:
    lo, hi = nice_domain(lo, hi, count, include_zero=include_zero, integer=integer)
    scale = LinearScale((lo, hi), (chart.bottom, chart.top))
    chart.y_ticks = [Tick(round(scale(v), 1), label) for v, label in ticks_with_labels(lo, hi, count, percent=percent, integer=integer)]
    return scale


def _x_axis(
    chart: Chart, lo: float, hi: float, *, percent: bool = False, include_zero: bool = False, count: int = 6, pad: float = 0.0, integer: bool = False
) -> LinearScale:
    lo, hi = nice_domain(lo, hi, count, include_zero=include_zero, integer=integer)
    scale = LinearScale((lo, hi), (chart.left + pad, chart.right - pad))
    chart.x_ticks = [Tick(round(scale(v), 1), label) for v, label in ticks_with_labels(lo, hi, count, percent=percent, integer=integer)]
    return scale


@dataclass
class Series:
    name: str
    points: list[tuple[float, float | None]]  # (x, y); y None leaves a gap
    cls: str = "s0"


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    desc: str,
    x_label: str,
    y_label: str,
    percent: bool = False,
    x_ticks: Sequence[tuple[float, str]] | None = None,
    markers: bool = True,
    width: int = WIDTH,
    height: int = HEIGHT,
) -> Chart:
    """Lines over x with a marker at every point, so a series of one point still shows.

    x_ticks: explicit (x, label) ticks, e.g. report numbers; else nice numeric ticks.
    """
    chart = _frame(title, desc, width, height)
    chart.x_label, chart.y_label = x_label, y_label
    xs = extent([x for s in series for x, y in s.points if y is not None])
    ys = extent([y for s in series for _, y in s.points if y is not None])
    if xs is None or ys is None:
        chart.empty = True
        return chart
    y = _y_axis(chart, ys[0], ys[1], percent=percent)
    if x_ticks is not None:
        x = LinearScale(xs, (chart.left + 12, chart.right - 12))
        shown = list(x_ticks)
        if len(shown) > 12:  # thin labels out, keeping the last one
            every = -(-len(shown) // 12)
            shown = shown[::-1][::every][::-1]
        chart.x_ticks = [Tick(round(x(v), 1), label) for v, label in shown]
    else:
        x = _x_axis(chart, xs[0], xs[1], pad=0)
    for s in series:
        run: list[tuple[float, float]] = []
        segments = []
        for px, py in s.points:
            if py is None:
                if run:
                    segments.append(run)
                run = []
                continue
            run.append((x(px), y(py)))
        if run:
            segments.append(run)
        for seg in segments:
            if len(seg) > 1:
                chart.marks.append(Mark("path", cls=f"line {s.cls}", d=line_path(seg)))
        if markers:
            for px, py in s.points:
                if py is not None:
                    label = _pct(py) if percent else f"{py:.4g}"
                    chart.marks.append(Mark("circle", cls=f"dot {s.cls}", x=round(x(px), 1), y=round(y(py), 1), r=3.5, title=f"{s.name}: {label} at {px:g}"))
        if len(series) > 1:
            chart.legend.append(LegendItem(s.name, s.cls))
    return chart


def histogram_chart(
    edges: Sequence[float],
    counts: Sequence[int],
    wrong: Sequence[int],
    low: Sequence[float],
    high: Sequence[float],
    *,
    title: str,
    desc: str,
    x_label: str,
    y_label: str = "triplets",
    y_max: float | None = None,
    width: int = 320,
    height: int = 220,
) -> Chart:
    """Bars over bins (edges: n + 1 values), the wrongly ordered part of each bar in the error colour,
    and an error bar (low, high) per bin. y_max: a shared top so several histograms compare."""
    chart = _frame(title, desc, width, height, left=44, bottom_margin=40)
    chart.x_label, chart.y_label = x_label, y_label
    n = len(counts)
    if n == 0 or len(edges) != n + 1:
        chart.empty = True
        return chart
    top = max([*high, *counts, y_max or 0, 1])
    y = _y_axis(chart, 0, top, count=4, integer=True)
    x = _x_axis(chart, edges[0], edges[-1], count=4)
    zero_x = x(0.0) if edges[0] < 0 < edges[-1] else None
    for i in range(n):
        x0, x1 = x(edges[i]) + 0.5, x(edges[i + 1]) - 0.5
        tip = f"{edges[i]:+.1f} to {edges[i + 1]:+.1f}: {counts[i]} triplets, {wrong[i]} ordered wrongly (95% interval {low[i]:.1f}–{high[i]:.1f})"
        if counts[i]:
            chart.marks.append(Mark("rect", cls="bar s0", x=round(x0, 1), y=round(y(counts[i]), 1), w=round(x1 - x0, 1), h=round(y(0) - y(counts[i]), 1), title=tip))
        if wrong[i]:
            chart.marks.append(Mark("rect", cls="bar wrong", x=round(x0, 1), y=round(y(wrong[i]), 1), w=round(x1 - x0, 1), h=round(y(0) - y(wrong[i]), 1), title=tip))
        mid = (x0 + x1) / 2
        if high[i] > low[i]:
            chart.marks.append(Mark("line", cls="errorbar", x=round(mid, 1), y=round(y(low[i]), 1), x2=round(mid, 1), y2=round(y(high[i]), 1), title=tip))
            for v in (low[i], high[i]):
                chart.marks.append(Mark("line", cls="errorbar", x=round(mid - 3, 1), y=round(y(v), 1), x2=round(mid + 3, 1), y2=round(y(v), 1)))
    if zero_x is not None:
        chart.marks.append(Mark("line", cls="refline", x=round(zero_x, 1), y=chart.top, x2=round(zero_x, 1), y2=chart.bottom))
    chart.legend = [LegendItem("triplets", "s0"), LegendItem("ordered wrongly", "wrong"), LegendItem("95% interval", "errorbar")]
    return chart


@dataclass
class Interval:
    label: str
    value: float
    low: float
    high: float
    cls: str = "s0"


def interval_chart(rows: Sequence[Interval], *, title: str, desc: str, x_label: str, percent: bool = True, width: int = WIDTH) -> Chart:
    """One row per item: a dot at the value and a whisker over [low, high] (e.g. accuracy and its 95% interval)."""
    row_h = 24
    label_w = 190
    height = MARGIN_TOP + row_h * max(len(rows), 1) + MARGIN_BOTTOM
    chart = _frame(title, desc, width, height, left=label_w)
    chart.x_label = x_label
    if not rows:
        chart.empty = True
        return chart
    lo = min(r.low for r in rows)
    hi = max(r.high for r in rows)
    x = _x_axis(chart, min(lo, 0.5) if percent else lo, max(hi, 1.0) if percent else hi, percent=percent, count=5)
    for i, r in enumerate(rows):
        cy = chart.top + row_h * i + row_h / 2
        tip = f"{r.label}: {_pct(r.value) if percent else f'{r.value:.3g}'} (95% interval {_pct(r.low) if percent else r.low}–{_pct(r.high) if percent else r.high})"
        chart.marks.append(Mark("text", cls="rowlabel", x=chart.left - 8, y=round(cy + 4, 1), text=r.label, anchor="end"))
        chart.marks.append(Mark("line", cls="errorbar", x=round(x(r.low), 1), y=round(cy, 1), x2=round(x(r.high), 1), y2=round(cy, 1), title=tip))
        chart.marks.append(Mark("circle", cls=f"dot {r.cls}", x=round(x(r.value), 1), y=round(cy, 1), r=4.5, title=tip))
    return chart


@dataclass
class Point:
    x: float
    y: float
    label: str
    title: str = ""
    href: str = ""
    cls: str = "s0"
    fill: str = ""
    selected: bool = False
    show_label: bool = False


def scatter_chart(
    points: Sequence[Point],
    *,
    title: str,
    desc: str,
    x_label: str,
    y_label: str,
    percent: bool = False,
    include_zero: bool = False,
    width: int = WIDTH,
    height: int = 360,
    axes: bool = True,
    radius: float = 5.0,
) -> Chart:
    """Points at (x, y); a selected point is drawn last and larger, labelled points carry their text.
    axes=False draws a plain frame (a 2-D projection has no meaningful units)."""
    chart = _frame(title, desc, width, height)
    chart.x_label, chart.y_label = x_label, y_label
    if not points:
        chart.empty = True
        return chart
    xs = extent([p.x for p in points])
    ys = extent([p.y for p in points])
    assert xs is not None and ys is not None
    x = _x_axis(chart, xs[0], xs[1], percent=percent, include_zero=include_zero, pad=8)
    y = _y_axis(chart, ys[0], ys[1], percent=percent, include_zero=include_zero)
    if not axes:
        chart.x_ticks, chart.y_ticks = [], []
    for p in sorted(points, key=lambda p: p.selected):
        cx, cy = round(x(p.x), 1), round(y(p.y), 1)
        cls = "dot" + ("" if p.fill else f" {p.cls}") + (" selected" if p.selected else "")
        chart.marks.append(Mark("circle", cls=cls, x=cx, y=cy, r=radius * (1.6 if p.selected else 1), title=p.title or p.label, href=p.href, fill=p.fill))
    placed: list[tuple[float, float, float, float]] = []
    for p in sorted(points, key=lambda p: not p.selected):  # the selected label first: it never moves
        if p.show_label or p.selected:
            cx, cy = x(p.x), y(p.y)
            anchor = "end" if cx > (chart.left + chart.right) / 2 else "start"
            dx = -8 if anchor == "end" else 8
            tx, ty = _free_spot(cx + dx, cy, len(p.label) * 6.2, anchor, placed)
            chart.marks.append(Mark("text", cls="pointlabel" + (" selected" if p.selected else ""), x=round(tx, 1), y=round(ty, 1), text=p.label, anchor=anchor))
    return chart


def _free_spot(x: float, y: float, width: float, anchor: str, placed: list[tuple[float, float, float, float]]) -> tuple[float, float]:
    """A baseline near (x, y) where a label `width` wide overlaps no label placed so far (greedy: above, below,
    then further out); records the box it takes."""
    left = x - width if anchor == "end" else x
    for dy in (-6, 14, -18, 26, -30, 38):
        box = (left, y + dy - 10, left + width, y + dy + 2)
        if all(box[2] < b[0] or box[0] > b[2] or box[3] < b[1] or box[1] > b[3] for b in placed):
            placed.append(box)
            return x, y + dy
    placed.append((left, y - 16, left + width, y - 4))
    return x, y - 6


def ranked_bar_chart(
    items: Sequence[tuple[str, float]],
    *,
    title: str,
    desc: str,
    y_label: str,
    x_label: str,
    references: Sequence[tuple[float, str]] = (),
    good_at: float | None = None,
    y_range: tuple[float, float] | None = None,
    width: int = 720,
    height: int = 300,
) -> Chart:
    """One thin vertical bar per item in the given order (e.g. concepts sorted by alpha), dashed reference
    lines, and bars at or above `good_at` in the "good" colour, the rest in the "bad" one."""
    chart = _frame(title, desc, width, height)
    chart.right = width - (110 if references else MARGIN_RIGHT)  # room for the reference lines' labels
    chart.x_label, chart.y_label = x_label, y_label
    if not items:
        chart.empty = True
        return chart
    values = [v for _, v in items]
    lo, hi = y_range or (min(values), max(values))
    y = _y_axis(chart, min(lo, min(values)), max(hi, max(values)), include_zero=True)
    lefts, w = band_positions(len(items), chart.left, chart.right, padding=0.25 if len(items) < 40 else 0.15)
    zero = y(0.0)
    for (label, v), left in zip(items, lefts):
        top, bottom = sorted((y(v), zero))
        cls = "bar " + ("good" if good_at is not None and v >= good_at else "bad" if good_at is not None else "s0")
        chart.marks.append(Mark("rect", cls=cls, x=round(left, 2), y=round(top, 1), w=round(w, 2), h=round(max(bottom - top, 0.8), 1), title=f"{label}: {v:.3f}"))
    chart.marks.append(Mark("line", cls="axisline", x=chart.left, y=round(zero, 1), x2=chart.right, y2=round(zero, 1)))
    for value, text in references:
        ry = round(y(value), 1)
        chart.marks.append(Mark("line", cls="refline", x=chart.left, y=ry, x2=chart.right, y2=ry))
        chart.marks.append(Mark("text", cls="reflabel", x=chart.right + 6, y=ry + 3, text=text, anchor="start"))
    if good_at is not None:
        chart.legend = [LegendItem(f"at least {good_at:g}", "good"), LegendItem(f"below {good_at:g}", "bad")]
    return chart


def palette(n: int) -> list[str]:
    """n distinguishable colours (hex), evenly spaced hues alternating between two lightnesses."""
    out = []
    for i in range(n):
        hue = (i * 0.618033988749895) % 1.0  # golden-ratio steps: neighbours in module order differ most
        light = 0.42 if i % 2 == 0 else 0.55
        r, g, b = colorsys.hls_to_rgb(hue, light, 0.65)
        out.append(f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}")
    return out


@dataclass
class BarGroup:
    label: str
    values: list[float]
    hrefs: list[str] = field(default_factory=list)  # one per value, "" for none
    label_href: str = ""


def grouped_hbar_chart(
    groups: Sequence[BarGroup],
    series: Sequence[tuple[str, str]],
    *,
    title: str,
    desc: str,
    x_label: str,
    percent: bool = False,
    width: int = WIDTH,
    label_width: int = 200,
) -> Chart:
    """One row per group with a horizontal bar per series (series: (name, css class)); bars may be links."""
    bar_h, gap = 9, 8
    row_h = bar_h * len(series) + gap
    height = MARGIN_TOP + row_h * max(len(groups), 1) + MARGIN_BOTTOM
    chart = _frame(title, desc, width, height, left=label_width)
    chart.x_label = x_label
    values = [v for g in groups for v in g.values]
    if not groups or not values:
        chart.empty = True
        return chart
    x = _x_axis(chart, 0, max(max(values), 1e-9 if percent else 1), percent=percent, include_zero=True, count=5, integer=not percent)
    for i, g in enumerate(groups):
        top = chart.top + i * row_h + gap / 2
        chart.marks.append(Mark("text", cls="rowlabel", x=chart.left - 8, y=round(top + row_h / 2 - gap / 2 + 3, 1), text=g.label, anchor="end", href=g.label_href, title=g.label))
        for j, ((name, cls), v) in enumerate(zip(series, g.values)):
            shown = _pct(v) if percent else f"{v:g}"
            w = x(v) - x(0)
            chart.marks.append(Mark(
                "rect", cls=f"bar {cls}", x=round(x(0), 1), y=round(top + j * bar_h, 1), w=round(max(w, 1.0 if v else 0.0), 1), h=bar_h - 1,
                title=f"{g.label}: {name} {shown}", href=(g.hrefs[j] if j < len(g.hrefs) else "") if v else "",
            ))
    chart.legend = [LegendItem(name, cls) for name, cls in series]
    return chart
