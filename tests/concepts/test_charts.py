"""The concepts pages' charts: report history, FN/FP per concept, agreement, Table 3 (no browser)."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from concepts.models import ExtractorReport, NeuralExperiment
from concepts.services import labels_set


def _report(fp: float, fn: float, concepts: dict[str, Any], **kw: Any) -> ExtractorReport:
    return ExtractorReport.objects.create(status="done", problems=40, fp_rate=fp, fn_rate=fn, concepts=concepts, **kw)


STATS = {
    "nchoosek": {"tp": 8, "fp": 1, "fn": 3, "tn": 28, "fp_rate": 1 / 29, "fn_rate": 3 / 11},
    "permutations": {"tp": 5, "fp": 0, "fn": 0, "tn": 35, "fp_rate": 0.0, "fn_rate": 0.0},
    "Bayes-formula": {"tp": 2, "fp": 2, "fn": 1, "tn": 35, "fp_rate": 2 / 37, "fn_rate": 1 / 3},
}


def _figure(page: str, id_: str) -> str:
    figure = page[page.index(f'<figure class="chart" id="{id_}">'):]
    return figure[: figure.index("</figure>")]


def test_one_report_draws_a_point_per_rate_with_its_numbers_in_the_table(client: Any, alice: Any) -> None:
    report = _report(0.0098, 0.0917, STATS)
    client.force_login(alice)
    page = client.get(reverse("concepts:reports")).content.decode()
    chart = _figure(page, "report-chart")
    assert 'role="img"' in chart and "over 1 report</title>" in chart
    assert chart.count("<circle") == 2  # one report: a marker per rate, no line to draw
    assert "FN rate: 9.2% at 0" in chart and "FP rate: 1.0% at 0" in chart
    assert f">#{report.pk}</text>" in chart and ">0%</text>" in chart  # the x tick and the y axis from zero
    data = page[page.index('id="report-chart-data"'):]
    assert "<td class=\"num\">0.98%</td><td class=\"num\">9.17%</td>" in data


def test_the_history_follows_one_concept_in_the_url(client: Any, alice: Any) -> None:
    first = _report(0.02, 0.2, STATS)
    second = _report(0.01, 0.1, {**STATS, "nchoosek": {**STATS["nchoosek"], "fn": 1, "fn_rate": 1 / 11}})
    _report(0.5, 0.5, STATS, source="hybrid")  # another source: not in the rules' history
    client.force_login(alice)
    page = client.get(reverse("concepts:reports"), {"concept": "nchoosek"}).content.decode()
    chart = _figure(page, "report-chart")
    assert "of the rule of nchoosek over 2 reports" in chart
    assert chart.count("<circle") == 4 and chart.count('<path class="line') == 2
    assert "FN rate: 27.3% at 0" in chart and "FN rate: 9.1% at 1" in chart
    assert f">#{first.pk}</text>" in chart and f">#{second.pk}</text>" in chart
    assert '<option value="nchoosek" selected>' in page
    unknown = client.get(reverse("concepts:reports"), {"concept": "nope"}).content.decode()
    assert "no data to draw yet" in unknown and "No finished rule reports with nope" in unknown


def test_no_reports_draw_no_chart(client: Any, alice: Any) -> None:
    client.force_login(alice)
    page = client.get(reverse("concepts:reports")).content.decode()
    assert "no data to draw yet" in page and "<svg class=\"chart-svg\"" not in page


def test_a_report_draws_fn_and_fp_per_concept_linked_to_its_problems(client: Any, alice: Any) -> None:
    report = _report(0.03, 0.2, STATS)
    client.force_login(alice)
    page = client.get(reverse("concepts:report", args=[report.pk])).content.decode()
    chart = _figure(page, "report-concepts-chart")
    # Concepts with errors only, most errors first; each bar opens the drilldown of those problems.
    assert chart.index(">nchoosek</text>") < chart.index(">Bayes-formula</text>") and ">permutations<" not in chart
    assert f'href="{reverse("concepts:report-drilldown", args=[report.pk, "nchoosek", "fn"])}"' in chart
    assert "nchoosek: false negatives 3</title>" in chart and "Bayes-formula: false positives 2</title>" in chart
    assert f'href="{reverse("concepts:reports")}?concept=nchoosek#report-chart"' in chart
    assert 'id="report-concepts"' in page and "permutations" in page  # every concept stays in the table


def test_the_agreement_chart_has_a_bar_per_rated_concept(client: Any, alice: Any, bob: Any, hana: Any, problem_factory: Any, concept_factory: Any) -> None:
    c = {s: concept_factory(s) for s in ["nchoosek", "permutations", "Bayes-formula"]}
    problems = [problem_factory(str(i)) for i in range(4)]
    for i, p in enumerate(problems):
        labels_set(problem=p, annotator=alice, concepts=[c["nchoosek"]] + ([c["permutations"]] if i < 2 else []))
        labels_set(problem=p, annotator=bob, concepts=[c["nchoosek"]] + ([c["permutations"]] if i in (0, 2) else []))
    client.force_login(hana)
    page = client.get(reverse("concepts:label-agreement")).content.decode()
    chart = _figure(page, "agreement-chart")
    # nchoosek: every decision the same, so alpha is undefined (no bar); permutations disagrees on half.
    assert chart.count('<rect class="bar') == 1 and "permutations: " in chart and 'class="bar bad"' in chart
    assert "0.8 reliable" in chart and "0.667 tentative" in chart
    assert 'id="agreement-table"' in page


RESULTS = {
    "rounds": 1, "seed": 0, "config": {}, "word_vectors": "glove-trained-on-bank", "vocabulary": {"all": 9, "selected": 3},
    "concepts": {"nchoosek": {"positives": 4, "negatives": 6}},
    "schemes": {
        "down-sampling": {"label": "Down-sampling", "concepts": {"nchoosek": {"fn": 1 / 3, "fn_sd": 0.1, "fp": 0.25, "fp_sd": 0.05}}, "fn": 1 / 3, "fp": 0.25, "fn_reduction": 0.0, "fp_reduction": 0.0},
        "negative-pretraining": {"label": "Negative pre-training", "concepts": {"nchoosek": {"fn": 0.125, "fn_sd": 0.1, "fp": 0.25, "fp_sd": 0.1}}, "fn": 0.125, "fp": 0.25, "fn_reduction": 0.625, "fp_reduction": 0.0},
    },
    "best": {"nchoosek": "negative-pretraining"},
}


@pytest.mark.parametrize("rounds", [1, 3])
def test_table_3_is_a_plot_and_prints_every_ratio_as_a_percentage(client: Any, alice: Any, rounds: int) -> None:
    experiment = NeuralExperiment.objects.create(
        concepts=["nchoosek"], schemes=list(RESULTS["schemes"]), rounds=rounds, status="done", results={**RESULTS, "rounds": rounds}
    )
    client.force_login(alice)
    page = client.get(reverse("concepts:neural", args=[experiment.pk])).content.decode()
    chart = _figure(page, "neural-chart")
    assert chart.count("<circle") == 2 and ">down-sampling</text>" in chart and ">negative-pretraining</text>" in chart
    assert "Negative pre-training: FN 12.5%, FP 25.0%" in chart
    assert 'class="dot s1"' in chart  # the baseline stands out
    table = page[page.index('id="table3"'):page.index("</table>", page.index('id="table3"'))]
    assert table.count("33.3%") == 2 and table.count("12.5%") == 2 and "62.5%" in table  # cells and averages alike
    assert "0.333" not in table and "0.125" not in table
    if rounds == 1:
        assert "1 concept · 2 schemes · 1 round ·" in page and "over 1 round;" in page
    else:
        assert "1 concept · 2 schemes · 3 rounds ·" in page
