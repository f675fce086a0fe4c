"""The embedding lab's charts: selector data in, `charts.figures.Chart`s out (drawn by templates/charts/_chart.html)."""

from __future__ import annotations

from typing import Any, Sequence
from urllib.parse import urlencode

from charts import figures
from charts.geometry import binomial_interval

SOURCE_NAMES = {"labels": "expert labels", "rules": "rule concepts", "hybrid": "hybrid concepts", "text": "text"}


def gap_histogram_charts(histogram: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One histogram per method of sim(A, B) − sim(A, C), on a shared count axis so methods compare, with
    a 95% Wilson interval per bin as its error bar. Returns [{method, source, total, errors, chart, bins}]."""
    out = []
    prepared = []
    for h in histogram:
        total = sum(h["counts"])
        intervals = [binomial_interval(c, total) for c in h["counts"]]
        prepared.append((h, total, intervals))
    top = max([hi for _, _, iv in prepared for _, hi in iv] or [1])
    for h, total, intervals in prepared:
        source = SOURCE_NAMES.get(h["source"], h["source"])
        wrong = sum(h["errors"])
        chart = figures.histogram_chart(
            h["edges"], h["counts"], h["errors"], [lo for lo, _ in intervals], [hi for _, hi in intervals],
            title=f"Similarity gaps of {h['method']} ({source}): {wrong} of {total} triplets ordered wrongly",
            desc=f"Histogram of sim(A, B) − sim(A, C) over {total} triplets in {len(h['counts'])} bins from −1 to 1, "
            "the wrongly ordered part of each bar in red, with a 95% interval per bin. The counts are in the table after the charts.",
            x_label="sim(A, B) − sim(A, C)",
            y_max=top,
        )
        bins = [
            {"lo": h["edges"][i], "hi": h["edges"][i + 1], "count": c, "errors": e, "low": lo, "high": hi}
            for i, (c, e, (lo, hi)) in enumerate(zip(h["counts"], h["errors"], intervals))
        ]
        out.append({"method": h["method"], "source": source, "total": total, "errors": wrong, "chart": chart, "bins": bins})
    return out


def accuracy_chart(rows: Sequence[dict[str, Any]]) -> figures.Chart:
    """Table 1 as a dot-and-whisker plot: every built (method, source) with its 95% bootstrap interval."""
    intervals = []
    for row in rows:
        for source, applies, result in row["cells"]:
            if applies and result:
                cls = "s2" if row["kind"] == "text" else "s0"
                intervals.append(figures.Interval(f"{row['name']} · {SOURCE_NAMES.get(source, source)}", result["accuracy"], result["low"], result["high"], cls))
    return figures.interval_chart(
        intervals,
        title="Triplet accuracy per method with its 95% bootstrap interval",
        desc="Dot-and-whisker chart, one row per method and concept source: the dot is the triplet accuracy, the whisker its "
        "95% bootstrap interval; concept methods in blue, text methods in green. The numbers are in Table 1 above.",
        x_label="triplet accuracy",
    )


def loss_chart(losses: Sequence[float], max_points: int = 500) -> figures.Chart:
    """The training loss after each epoch (1-based); long runs are thinned to `max_points` for drawing."""
    n = len(losses)
    step = max(1, -(-n // max_points))
    points = [(i + 1, float(v)) for i, v in enumerate(losses) if i % step == 0 or i == n - 1]
    return figures.line_chart(
        [figures.Series("loss", points, "s0")],
        title=f"Training loss over {n} epoch{'' if n == 1 else 's'}",
        desc="Line chart of the training loss after each epoch, first epoch on the left. Every epoch's loss is in the table after the chart.",
        x_label="epoch",
        y_label="loss",
        markers=n <= 60,
    )


def concept_map_chart(points: Sequence[Any], *, selected: str, neighbours: Sequence[str], base_url: str) -> figures.Chart:
    """The continuity map: every concept at its 2-D projection, coloured by module; each point links to
    `base_url?concept=<slug>` (the page of that concept), the selected one and its neighbours are labelled."""
    modules = sorted({(p.module_order, p.module) for p in points})
    colours = dict(zip([m for _, m in modules], figures.palette(len(modules))))
    near = set(neighbours)
    chart_points = [
        figures.Point(
            p.x, p.y, p.slug,
            title=f"{p.slug} ({p.module or 'no module'})",
            href=f"{base_url}?{urlencode({'concept': p.slug})}#concept-map",
            fill=colours[p.module],
            cls="",
            selected=p.slug == selected,
            show_label=p.slug in near,
        )
        for p in points
    ]
    chart = figures.scatter_chart(
        chart_points,
        title=f"Map of {len(points)} concepts" + (f", {selected} selected" if selected else ""),
        desc="Every concept of the active embedding placed by a 2-D projection (PCA) of its unit-length vector, so concepts that "
        "lie close have similar vectors; colours are modules. Each point is a link to that concept's nearest neighbours.",
        x_label="first principal component",
        y_label="second principal component",
        axes=False,
        height=460,
        width=720,
        radius=4.5,
    )
    chart.legend = [figures.LegendItem(m or "no module", fill=colours[m]) for _, m in modules]
    return chart
