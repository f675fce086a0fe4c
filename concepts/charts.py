"""The concepts pages' charts: selector data in, `charts.figures.Chart`s out (drawn by templates/charts/_chart.html).

Only URL reversing is Django here; the geometry is in the pure `charts/` package.
"""

from __future__ import annotations

from typing import Any, Sequence

from django.urls import reverse

from charts import figures
from concepts.neural.schemes import BASELINE


def report_history_chart(history: Sequence[Any], concept: str = "") -> tuple[figures.Chart, list[dict[str, Any]]]:
    """FP and FN rates over past reports (oldest first): averaged over concepts, or of one concept.

    Returns the chart and its data rows ({pk, created_at, problems, fp_rate, fn_rate}) for the table under it.
    A report in which the concept has no rate leaves a gap; one report draws one marker per rate.
    """
    rows = []
    for r in history:
        if concept:
            stats = (r.concepts or {}).get(concept)
            if stats is None:
                continue
            fp, fn = stats.get("fp_rate"), stats.get("fn_rate")
        else:
            fp, fn = r.fp_rate, r.fn_rate
        if fp is None and fn is None:
            continue
        rows.append({"pk": r.pk, "created_at": r.created_at, "problems": r.problems, "fp_rate": fp, "fn_rate": fn})
    whose = f"the rule of {concept}" if concept else "the rules (average over concepts)"
    n = len(rows)
    chart = figures.line_chart(
        [
            figures.Series("FN rate", [(i, row["fn_rate"]) for i, row in enumerate(rows)], "s1"),
            figures.Series("FP rate", [(i, row["fp_rate"]) for i, row in enumerate(rows)], "s0"),
        ],
        title=f"FP and FN rates of {whose} over {n} report{'' if n == 1 else 's'}",
        desc="Line chart, one point per extractor report, oldest on the left: the FN rate (red) and the FP rate (blue). "
        "The same numbers are in the table after the chart.",
        x_label="extractor report",
        y_label="rate",
        percent=True,
        x_ticks=[(i, f"#{row['pk']}") for i, row in enumerate(rows)],
    )
    return chart, rows


def report_concepts_chart(report: Any, rows: Sequence[tuple[str, dict[str, Any]]], limit: int = 30) -> tuple[figures.Chart, int]:
    """FN and FP counts per concept of one report, for the concepts with errors (most errors first, at most
    `limit`); each bar opens the drilldown of those problems, each name the concept's history.
    Returns the chart and how many concepts with errors it leaves out."""
    with_errors = [(slug, s) for slug, s in rows if (s.get("fn") or 0) + (s.get("fp") or 0) > 0]
    with_errors.sort(key=lambda kv: (-((kv[1].get("fn") or 0) + (kv[1].get("fp") or 0)), kv[0]))
    shown = with_errors[:limit]
    history = reverse("concepts:reports")
    groups = [
        figures.BarGroup(
            slug,
            [float(s.get("fn") or 0), float(s.get("fp") or 0)],
            # A held-out report's problems are never listed (they measure the rules): bars without links.
            ["" if report.held_out else reverse("concepts:report-drilldown", args=[report.pk, slug, kind]) for kind in ("fn", "fp")],
            label_href=f"{history}?concept={slug}#report-chart",
        )
        for slug, s in shown
    ]
    chart = figures.grouped_hbar_chart(
        groups,
        [("false negatives", "s1"), ("false positives", "s0")],
        title=f"False negatives and false positives per concept in report #{report.pk}",
        desc=f"Horizontal bars, the {len(shown)} concepts with the most errors: per concept, the count of labelled problems the "
        "rule missed (red) and wrongly found (blue). Every concept's counts are in the table after the chart.",
        x_label="problems",
    )
    return chart, len(with_errors) - len(shown)


def agreement_chart(rows: Sequence[Any]) -> figures.Chart:
    """Krippendorff's alpha per concept, sorted, with the usual 0.667 / 0.8 reliability thresholds."""
    rated = sorted(((r.concept, r.alpha) for r in rows if r.problems and r.alpha is not None), key=lambda kv: (kv[1], kv[0]))
    return figures.ranked_bar_chart(
        rated,
        title=f"Krippendorff's alpha of {len(rated)} concept{'' if len(rated) == 1 else 's'}, lowest first",
        desc="Bar chart, one thin bar per concept sorted by alpha: green at or above 0.8 (reliable), orange below. "
        "Dashed lines at 0.667 (tentative) and 0.8. The table after the chart lists every concept's alpha.",
        x_label="concepts, sorted by alpha (hover a bar for its name)",
        y_label="alpha",
        references=[(0.8, "0.8 reliable"), (0.667, "0.667 tentative")],
        good_at=0.8,
        y_range=(0.0, 1.0),
    )


def neural_chart(table: dict[str, Any]) -> figures.Chart:
    """Table 3 as a plot: each scheme's average FP ratio (x) against its average FN ratio (y); lower left is better."""
    points = [
        figures.Point(
            row["fp"], row["fn"], row["key"],
            title=f"{row.get('label') or row['key']}: FN {row['fn'] * 100:.1f}%, FP {row['fp'] * 100:.1f}%",
            cls="s1" if row["key"] == BASELINE else "s0",
            show_label=True,
        )
        for row in table["rows"]
        if row.get("fn") is not None and row.get("fp") is not None
    ]
    return figures.scatter_chart(
        points,
        title="Average FN ratio against average FP ratio per training scheme",
        desc="Scatter plot, one point per scheme labelled with its key, the down-sampling baseline in red; lower left is better. The numbers are in Table 3 after the chart.",
        x_label="average false-positive ratio",
        y_label="average false-negative ratio",
        percent=True,
        include_zero=True,
        height=340,
    )
